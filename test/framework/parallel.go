/*
Copyright 2026 The eval-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package framework

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Parallel calls op for i from 0 to n-1 on workers goroutines. It returns the
// time all calls took and each call's latency, indexed by i; on failure, the
// first error, once the calls in flight have returned.
func Parallel(ctx context.Context, n, workers int, op func(ctx context.Context, i int) error) (time.Duration, []time.Duration, error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next      atomic.Int64
		wg        sync.WaitGroup
		once      sync.Once
		first     error
		latencies = make([]time.Duration, n)
	)
	start := time.Now()
	for range min(workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && runCtx.Err() == nil; i = int(next.Add(1) - 1) {
				t0 := time.Now()
				if err := op(runCtx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
				latencies[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err() // the caller gave up: some calls never ran
	}
	return time.Since(start), latencies, first
}
