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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/eval-operator/eval-operator/internal/testcases"
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

// lastSets remembers, per Testset of a standalone service, the set it last
// validated as fingerprints (testcases.Fingerprints), so a sync can say
// what changed since: the cluster is the record, and no service holds the
// old testcases to compare with. It holds at most maxRemembered testcases
// in all: a set that does not fit is not remembered, and its next change is
// told by its count only, as is the first sync after a restart of the
// manager. An entry goes with its Testset (not found) or when the UID at
// that name changes.
type lastSets struct {
	mu    sync.Mutex
	by    map[types.NamespacedName]lastSet
	total int
}

// maxRemembered bounds the testcases lastSets fingerprints: about 8 MB
// whatever the tenants hold.
const maxRemembered = 200_000

type lastSet struct {
	uid    types.UID
	digest string
	// prints are nil for a set that did not fit.
	prints testcases.Fingerprints
	// change is what its sync changed (Plan.Done), "" when not known.
	change string
}

func newLastSets() *lastSets { return &lastSets{by: map[types.NamespacedName]lastSet{}} }

// swap records set as the last of the Testset at name and returns what its
// sync changed ("" when unknown: the first set this manager sees, or one it
// could not remember), and whether set is new since the last call. An
// unchanged set keeps the change its sync made.
func (l *lastSets) swap(name types.NamespacedName, uid types.UID, set testcases.Set) (change string, changed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev, ok := l.by[name]
	switch {
	case ok && prev.uid == uid && prev.digest == set.Digest:
		return prev.change, false
	case ok && prev.uid == uid && prev.prints != nil:
		change = prev.prints.Changes(set)
	}
	l.total -= len(prev.prints)
	next := lastSet{uid: uid, digest: set.Digest, change: change}
	if l.total+len(set.Cases) <= maxRemembered {
		next.prints = testcases.FingerprintsOf(set)
		l.total += len(next.prints)
	}
	l.by[name] = next
	return change, change != ""
}

// forgetDeleted is a predicate that forgets each deleted Testset's set and
// lets every event through.
func (l *lastSets) forgetDeleted() predicate.Predicate {
	return predicate.Funcs{DeleteFunc: func(e event.DeleteEvent) bool {
		l.forget(client.ObjectKeyFromObject(e.Object))
		return true
	}}
}

func (l *lastSets) forget(name types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total -= len(l.by[name].prints)
	delete(l.by, name)
}
