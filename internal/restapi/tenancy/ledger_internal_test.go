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

package tenancy

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("A namespace's ledger of creates", func() {
	// held is what the cache holds of a namespace's Metrics, names, as l
	// asks about them.
	held := func(l *ledger, names ...string) *heldNames {
		h := &heldNames{}
		for _, name := range names {
			h.add(name, l.pending)
		}
		return h
	}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

	It("counts the cache's objects, the creates it does not show yet and those in flight, each once", func() {
		var ls ledgers
		l := ls.acquire("team-a", "Metric")
		l.reserved["a"], l.reserved["b"], l.reserved["c"] = 1, 1, 1
		Expect(l.count(held(l, "x"), now)).To(Equal(4), "x listed, a, b and c in flight")
		l.settle("a", true, now)
		l.settle("b", true, now)
		l.settle("c", false, now)
		Expect(l.count(held(l, "a", "x"), now)).To(Equal(3), "x and a listed, b not yet, c created nothing")
		Expect(l.count(held(l, "a", "b", "x"), now)).To(Equal(3), "b shows now")
		Expect(l.unseen).To(BeEmpty(), "what the cache shows is forgotten")
		ls.release(l)
		Expect(ls.m).To(BeEmpty(), "an idle ledger with nothing unseen or in flight is dropped")
	})

	It("counts a create in flight once, whether or not the cache already shows it", func() {
		var ls ledgers
		l := ls.acquire("team-a", "Metric")
		l.reserved["a"] = 1
		Expect(l.count(held(l), now)).To(Equal(1))
		Expect(l.count(held(l, "a"), now)).To(Equal(1), "committed before its answer came back")
		l.settle("a", true, now)
		Expect(l.count(held(l, "a"), now)).To(Equal(1))
		ls.release(l)
	})

	It("forgets a create the cache has not shown for unseenFor: it was deleted before it did", func() {
		var ls ledgers
		l := ls.acquire("team-a", "Metric")
		l.reserved["gone"] = 1
		l.settle("gone", true, now)
		Expect(l.count(held(l), now.Add(unseenFor))).To(Equal(1))
		ls.release(l)
		Expect(ls.m).To(HaveLen(1), "kept while it counts a create")
		l = ls.acquire("team-a", "Metric")
		Expect(l.count(held(l), now.Add(unseenFor+time.Second))).To(BeZero())
		ls.release(l)
		Expect(ls.m).To(BeEmpty())
	})

	It("keeps namespaces and kinds apart", func() {
		var ls ledgers
		a := ls.acquire("team-a", "Metric")
		b := ls.acquire("team-b", "Metric")
		c := ls.acquire("team-a", "TestcaseDeletion")
		a.reserved["m"] = 1
		a.settle("m", true, now)
		Expect(b.count(held(b), now)).To(BeZero())
		Expect(c.count(held(c), now)).To(BeZero())
		for _, l := range []*ledger{a, b, c} {
			ls.release(l)
		}
		Expect(ls.m).To(HaveLen(1))
	})
})
