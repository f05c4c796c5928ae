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
	"fmt"
	"sync"

	"github.com/eval-operator/eval-operator/internal/testcases"
)

// DefaultMemory is the default of the Testsets' memory budget
// (--testset-memory-bytes): with the set cache (two sets of the largest
// size) and the manager's idle memory, well under the chart's 256 Mi limit.
const DefaultMemory = 96 << 20

// memoryBudget bounds the bytes of testcases the Testsets being read and
// synced hold at once: total in all, and half of it for one namespace's, so
// that many different sets at the limits cannot take the manager past its
// memory limit, nor one namespace's Testsets take all of it. A set is
// counted before it is parsed at the most its source can give, then at its
// size, until its Testset's reconcile ends. A Testset that finds no room is
// requeued after fetchRetry; it does not wait in a worker.
type memoryBudget struct {
	mu                  sync.Mutex
	total, perNamespace int64
	used                int64
	byNamespace         map[string]int64
}

// MinMemory is the least budget for limits: a namespace's half must hold
// one set at the limits, or such a set could never be synced.
func MinMemory(limits testcases.Limits) int64 {
	l := limits.OrDefaults()
	return 2 * mostHeld(l, l.Bytes, l.Testcases)
}

func newMemoryBudget(total int64, limits testcases.Limits) (*memoryBudget, error) {
	if least := MinMemory(limits); total < least {
		return nil, fmt.Errorf("the Testsets' memory budget (--testset-memory-bytes %d) is under %d bytes, twice "+
			"the most one set within the source limits holds: a namespace's half must hold one", total, least)
	}
	return &memoryBudget{total: total, perNamespace: total / 2, byNamespace: map[string]int64{}}, nil
}

// hold is the bytes of the budget one Testset holds.
type hold struct {
	b         *memoryBudget
	namespace string
	n         int64
}

// take holds n bytes for a Testset of namespace; without room, why says
// what the Testset waits for.
func (b *memoryBudget) take(namespace string, n int64) (h *hold, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.byNamespace[namespace]+n > b.perNamespace:
		return nil, "waiting for memory: this namespace's Testsets being read and synced hold as much of their " +
			"testcases as a namespace may at once (--testset-memory-bytes)"
	case b.used+n > b.total:
		return nil, "waiting for memory: the Testsets being read and synced hold as much of their testcases " +
			"as the manager may at once (--testset-memory-bytes)"
	}
	b.used += n
	b.byNamespace[namespace] += n
	return &hold{b: b, namespace: namespace, n: n}, ""
}

// keep gives back what h holds over n: a set just parsed is held at its
// size, no longer at the most its source could give.
func (h *hold) keep(n int64) {
	if h == nil || n >= h.n {
		return
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= h.n - n
	if b.byNamespace[h.namespace] -= h.n - n; b.byNamespace[h.namespace] == 0 {
		delete(b.byNamespace, h.namespace)
	}
	h.n = n
}

// release gives back all h holds; a nil h holds nothing.
func (h *hold) release() { h.keep(0) }

// setSize is the memory set holds, as the budget and the set cache count it.
func setSize(set testcases.Set) int64 {
	var size int64
	for _, tc := range set.Cases {
		size += int64(len(tc.Data)+len(tc.Key)) + caseOverhead
	}
	return size
}

// mostHeld is the most setSize of a set parsed within l from n bytes of
// source holding at most cases testcases: canonical data of at most six
// bytes a byte read (json.Marshal writes < as \u003c), keys of at most one.
func mostHeld(l testcases.Limits, n int64, cases int) int64 {
	return min(6*n, l.Bytes) + min(n, l.Bytes) + int64(min(cases, l.Testcases))*caseOverhead
}

// mostLines is the most testcases n bytes of JSON Lines hold: each is at
// least {"":1} and its newline.
func mostLines(n int64) int { return int(n/7 + 1) }
