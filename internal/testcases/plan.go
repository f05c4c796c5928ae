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

package testcases

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
)

// Remote indexes a remote Testset's testcases by key, as a sweep of its
// list reads them: only each one's id and a hash of its data are kept, so
// a large set costs little memory.
type Remote struct {
	keyField string
	byKey    map[string]remoteCase
	// extra are testcases no source case can match: without the key field,
	// or a second one with a key already seen.
	extra []string
}

type remoteCase struct {
	id   string
	hash [sha256.Size]byte
}

// NewRemote returns an empty index of testcases keyed by keyField.
func NewRemote(keyField string) *Remote {
	return &Remote{keyField: keyField, byKey: map[string]remoteCase{}}
}

// Add indexes one remote testcase.
func (r *Remote) Add(id string, data []byte) {
	obj, canonical, err := decodeObject(data)
	key, kerr := keyOf(obj[r.keyField])
	if _, seen := r.byKey[key]; err != nil || kerr != nil || seen {
		r.extra = append(r.extra, id)
		return
	}
	r.byKey[key] = remoteCase{id: id, hash: sha256.Sum256(canonical)}
}

// Len is how many testcases the remote Testset holds.
func (r *Remote) Len() int { return len(r.byKey) + len(r.extra) }

// Update is one testcase's new data.
type Update struct {
	ID   string
	Data json.RawMessage
}

// Plan is what makes a remote Testset's testcases those of a source.
type Plan struct {
	Create []json.RawMessage
	Update []Update
	Delete []string
}

// Diff is the plan that makes r's testcases those of s: a new key is
// created, changed data updated, a key s lacks deleted, and so is every
// testcase r could not match.
func (s Set) Diff(r *Remote) Plan {
	var p Plan
	kept := make(map[string]bool, len(s.Cases))
	for _, c := range s.Cases {
		have, ok := r.byKey[c.Key]
		switch {
		case !ok:
			p.Create = append(p.Create, c.Data)
		case have.hash != sha256.Sum256(c.Data):
			p.Update = append(p.Update, Update{ID: have.id, Data: c.Data})
		}
		kept[c.Key] = true
	}
	for key, have := range r.byKey {
		if !kept[key] {
			p.Delete = append(p.Delete, have.id)
		}
	}
	p.Delete = append(p.Delete, r.extra...)
	return p
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

// Done says what the plan did once sent, for events and conditions: "2
// updated, 1 removed", only the counts that are not zero, or "no testcase
// changed".
func (p Plan) Done() string { return changes(len(p.Create), len(p.Update), len(p.Delete)) }

// Fingerprints are a set's testcases as a 64-bit hash of each key and one
// of its data: enough to count what a new version of the set changes, at
// 16 bytes a testcase (and the map's own).
type Fingerprints map[uint64]uint64

// FingerprintsOf fingerprints s.
func FingerprintsOf(s Set) Fingerprints {
	f := make(Fingerprints, len(s.Cases))
	for _, c := range s.Cases {
		f[hash64([]byte(c.Key))] = hash64(c.Data)
	}
	return f
}

// Changes says what s changes from the set f fingerprints, as Plan.Done.
func (f Fingerprints) Changes(s Set) string {
	added, updated, kept := 0, 0, 0
	for _, c := range s.Cases {
		old, ok := f[hash64([]byte(c.Key))]
		switch {
		case !ok:
			added++
		case old != hash64(c.Data):
			updated++
			kept++
		default:
			kept++
		}
	}
	return changes(added, updated, len(f)-kept)
}

func hash64(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

func changes(added, updated, removed int) string {
	var parts []string
	for _, c := range []struct {
		n    int
		verb string
	}{{added, "added"}, {updated, "updated"}, {removed, "removed"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.verb))
		}
	}
	if len(parts) == 0 {
		return "no testcase changed"
	}
	return strings.Join(parts, ", ")
}

// IndexOf indexes s as a remote Testset holding it would be indexed, each
// testcase under its key as its id: a Diff against it is what changed from
// s, with the keys of the updated and removed testcases as their ids.
func IndexOf(s Set, keyField string) *Remote {
	r := NewRemote(keyField)
	for _, c := range s.Cases {
		r.Add(c.Key, c.Data)
	}
	return r
}

// String counts the plan's changes, for messages.
func (p Plan) String() string {
	return fmt.Sprintf("%d to create, %d to update, %d to delete", len(p.Create), len(p.Update), len(p.Delete))
}
