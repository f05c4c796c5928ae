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

package judge

import (
	"sync"
	"time"
)

// Queues run judge work on workers of its own per key (a connection and a
// namespace), so that a slow or failing judge, or one namespace's many
// records, never holds another key's work: each key has its own bounded
// queue and as many workers as its judge takes requests in flight.
type Queues struct {
	mu     sync.Mutex
	queues map[string]*queue
	// depth bounds each key's queued tasks; idle is how long a key's
	// workers wait for work before they stop.
	depth int
	idle  time.Duration
}

type queue struct {
	tasks   chan func()
	workers int
}

// NewQueues returns queues of depth tasks each.
func NewQueues(depth int) *Queues {
	return &Queues{queues: map[string]*queue{}, depth: depth, idle: time.Minute}
}

// Submit queues task on key's queue, served by up to workers workers; it
// reports false when the queue is full (the caller comes back later).
func (q *Queues) Submit(key string, workers int, task func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := q.queues[key]
	if k == nil {
		k = &queue{tasks: make(chan func(), q.depth)}
		q.queues[key] = k
	}
	select {
	case k.tasks <- task:
	default:
		return false
	}
	if k.workers < workers {
		k.workers++
		go q.work(key, k)
	}
	return true
}

// work runs key's tasks until none came for q.idle.
func (q *Queues) work(key string, k *queue) {
	t := time.NewTimer(q.idle)
	defer t.Stop()
	for {
		select {
		case task := <-k.tasks:
			task()
			t.Reset(q.idle)
		case <-t.C:
			q.mu.Lock()
			if len(k.tasks) > 0 {
				q.mu.Unlock()
				t.Reset(q.idle)
				continue
			}
			k.workers--
			if k.workers == 0 {
				delete(q.queues, key)
			}
			q.mu.Unlock()
			return
		}
	}
}
