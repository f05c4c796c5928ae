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

package restapi

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// The locks of one uid exclude each other, and none is kept once its users
// are done.
func TestUIDLocks(t *testing.T) {
	l := uidLocks{held: map[types.UID]*uidLock{}}
	var wg sync.WaitGroup
	counts := map[types.UID]*int{"a": new(int), "b": new(int), "c": new(int)}
	for i := range 200 {
		uid := types.UID([]string{"a", "b", "c"}[i%3])
		wg.Go(func() {
			defer l.lock(uid)()
			*counts[uid]++ // a data race, which -race reports, unless the lock excludes
		})
	}
	wg.Wait()
	if *counts["a"]+*counts["b"]+*counts["c"] != 200 {
		t.Errorf("counts %v, want 200 in all", counts)
	}
	if len(l.held) != 0 {
		t.Errorf("%d locks kept after their users were done", len(l.held))
	}
}
