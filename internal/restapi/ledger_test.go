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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
)

var _ = Describe("A namespace's ledger of creates", func() {
	listOf := func(names ...string) *evaluationv1alpha1.MetricList {
		l := &evaluationv1alpha1.MetricList{}
		for _, n := range names {
			l.Items = append(l.Items, evaluationv1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
		return l
	}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

	It("counts the cache's objects and the creates it does not show yet, each once", func() {
		var ls ledgers
		l := ls.lock("team-a", "Metric")
		l.created("a", now)
		l.created("b", now)
		Expect(l.count(listOf("a", "x"), now)).To(Equal(3), "x and a listed, b not yet")
		Expect(l.count(listOf("a", "b", "x"), now)).To(Equal(3), "b shows now")
		Expect(l.unseen).To(BeEmpty(), "what the cache shows is forgotten")
		ls.unlock(l)
		Expect(ls.m).To(BeEmpty(), "an idle ledger with nothing unseen is dropped")
	})

	It("forgets a create the cache has not shown for unseenFor: it was deleted before it did", func() {
		var ls ledgers
		l := ls.lock("team-a", "Metric")
		l.created("gone", now)
		Expect(l.count(listOf(), now.Add(unseenFor))).To(Equal(1))
		ls.unlock(l)
		Expect(ls.m).To(HaveLen(1), "kept while it counts a create")
		l = ls.lock("team-a", "Metric")
		Expect(l.count(listOf(), now.Add(unseenFor+time.Second))).To(BeZero())
		ls.unlock(l)
		Expect(ls.m).To(BeEmpty())
	})

	It("keeps namespaces and kinds apart", func() {
		var ls ledgers
		a := ls.lock("team-a", "Metric")
		b := ls.lock("team-b", "Metric") // would wait forever if a held its lock
		c := ls.lock("team-a", "TestcaseDeletion")
		a.created("m", now)
		Expect(b.count(listOf(), now)).To(BeZero())
		Expect(c.count(listOf(), now)).To(BeZero())
		for _, l := range []*ledger{a, b, c} {
			ls.unlock(l)
		}
		Expect(ls.m).To(HaveLen(1))
	})
})
