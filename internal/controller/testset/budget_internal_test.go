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
	"strings"
	"testing"

	"github.com/eval-operator/eval-operator/internal/testcases"
)

func TestMemoryBudgetSharesItsBytes(t *testing.T) {
	limits := testcases.Limits{Testcases: 10, Bytes: 1000, TestcaseBytes: 100}
	most := mostHeld(limits, limits.Bytes, limits.Testcases) // 1000+1000+10*96 = 2960
	b, err := newMemoryBudget(3*most, limits)                // 4440 a namespace
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := b.take("a", most)
	if h, why := b.take("a", most); h != nil || !strings.Contains(why, "this namespace's Testsets") {
		t.Errorf("a namespace holds at most half: %q", why)
	}
	a1.keep(100) // parsed: held at its size
	a2, why := b.take("a", most)
	if a2 == nil {
		t.Fatalf("what a parsed set does not hold is given back: %q", why)
	}
	b1, _ := b.take("b", most)
	if h, why := b.take("c", most); h != nil || !strings.Contains(why, "as the manager may") {
		t.Errorf("no more than the budget in all: %q", why)
	}
	b1.release()
	b1.release() // twice gives back nothing more
	if b.used != most+100 || b.byNamespace["b"] != 0 {
		t.Errorf("held %d, b %d; want %d and 0", b.used, b.byNamespace["b"], most+100)
	}
	c1, _ := b.take("c", most)
	for _, h := range []*hold{a1, a2, c1, nil} {
		h.release()
	}
	if b.used != 0 || len(b.byNamespace) != 0 {
		t.Errorf("all given back: held %d, namespaces %v", b.used, b.byNamespace)
	}
}

func TestMemoryBudgetHoldsASetAtTheLimitsInANamespace(t *testing.T) {
	limits := testcases.Limits{Testcases: 10, Bytes: 1000, TestcaseBytes: 100}
	least := MinMemory(limits)
	if _, err := newMemoryBudget(least-1, limits); err == nil || !strings.Contains(err.Error(), "--testset-memory-bytes") {
		t.Errorf("a budget whose half cannot hold a set at the limits is refused: %v", err)
	}
	b, err := newMemoryBudget(least, limits)
	if err != nil {
		t.Fatal(err)
	}
	if h, why := b.take("a", mostHeld(limits, limits.Bytes, limits.Testcases)); h == nil {
		t.Errorf("a set at the limits fits a namespace's half: %q", why)
	}
	if got := MinMemory(testcases.Limits{}); got < DefaultMemory/2 || got > DefaultMemory {
		t.Errorf("the default budget is %d, the least for the default limits %d", DefaultMemory, got)
	}
}

func TestMostHeldBoundsTheSetParsed(t *testing.T) {
	// The most a byte read can grow to (< written as \u003c), and the
	// shortest testcases.
	var escaped, short strings.Builder
	for i := range 200 {
		fmt.Fprintf(&escaped, `{"id":"%d<<<<<<<<","a":"&&&&&&&&&&&&&&&&"}`+"\n", i)
		fmt.Fprintf(&short, `{"":%d}`+"\n", i)
	}
	for field, data := range map[string]string{"id": escaped.String(), "": short.String()} {
		set, err := testcases.DefaultLimits.FromLines(strings.NewReader(data), field)
		if err != nil {
			t.Fatalf("keyField %q: %v", field, err)
		}
		n := int64(len(data))
		if got, most := setSize(set), mostHeld(testcases.DefaultLimits, n, mostLines(n)); got > most {
			t.Errorf("keyField %q: the set holds %d, over the %d counted before it was parsed", field, got, most)
		}
	}
}
