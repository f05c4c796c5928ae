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

package testset

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// syncedSets remembers, per Testset, the generation and source digest this
// manager synced last. The Testset's next reconcile may start before the
// cache holds the status that records that sync (its source changed again,
// a person's retry); that reconcile must not sweep the remote testcases
// again. An entry goes once the cache shows the Testset synced, or with the
// Testset.
type syncedSets struct {
	mu sync.Mutex
	by map[types.UID]syncedSet
}

type syncedSet struct {
	generation int64
	digest     string
}

func newSyncedSets() *syncedSets { return &syncedSets{by: map[types.UID]syncedSet{}} }

func (s *syncedSets) record(uid types.UID, generation int64, digest string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.by[uid] = syncedSet{generation, digest}
}

// synced reports whether this manager synced digest at generation of uid.
func (s *syncedSets) synced(uid types.UID, generation int64, digest string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by[uid] == syncedSet{generation, digest}
}

func (s *syncedSets) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.by, uid)
}
