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

package controller_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// promotedCondition waits for e's Promoted condition.
func promotedCondition(e *v1alpha1.EvaluationRun) *metav1.Condition {
	GinkgoHelper()
	var c *metav1.Condition
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(e), e)).To(Succeed())
		c = meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionPromoted)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).NotTo(Equal(metav1.ConditionUnknown))
	}, 20*time.Second).Should(Succeed())
	return c
}

// productionOf waits for System s to report a production version and
// returns it.
func productionOf(s *v1alpha1.System) func(Gomega) string {
	return func(g Gomega) string {
		g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		return s.Status.ProductionVersionID
	}
}

// versionRun is a run of SystemVersion version with Metric exact.
func versionRun(ns, name, version string) *v1alpha1.EvaluationRun {
	e := newRun(ns, name, "exact")
	e.Spec.SystemVersionRef = &v1alpha1.ObjectRef{Name: version}
	return e
}

var _ = Describe("Promoting a Passed run's SystemVersion, and the production baseline", func() {
	var (
		ns             string
		up             *upstream
		mgr            *manager
		sys            *v1alpha1.System
		prod, canary   *v1alpha1.SystemVersion
		promotes       func() int
		oneInFiveWrong = func(c, _ int) bool { return c%5 == 0 }
	)
	BeforeEach(func() {
		ns, up = newFixture()
		up.opts.AllowPrivateServiceAddresses = true
		mgr = startManager(up.opts)
		Expect(k8s.Create(rootCtx, newTestset(ns, "qa", inline(`{"id":"a","question":"q0"}`, `{"id":"b","question":"q1"}`)))).To(Succeed())
		Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		// The service makes a new System's config its first, production, version.
		sys = newSystem(ns, "bot")
		Expect(k8s.Create(rootCtx, sys)).To(Succeed())
		prod = newSystemVersion(ns, "bot-prod", "bot", `{"model":"gpt-4o"}`)
		canary = newSystemVersion(ns, "bot-canary", "bot", `{"model":"gpt-4o","image":"sha256:ab"}`)
		for _, v := range []*v1alpha1.SystemVersion{prod, canary} {
			Expect(k8s.Create(rootCtx, v)).To(Succeed())
			Eventually(readyCondition(v)).Should(beReady)
		}
		Expect(productionOf(sys)(Default)).To(Equal(prod.Status.ID))
		promotes = func() int { return up.Promotions(sys.Status.ID) }
	})

	It("promotes a Passed run's version once, never a Failed one's, and the System reports it", func() {
		failed := versionRun(ns, "failed", "bot-canary")
		failed.Spec.Promote = ptr.To(true)
		scored(up, failed, 1, oneInFiveWrong)
		Expect(judged(failed)).To(Equal(v1alpha1.Verdict("Failed")))
		Expect(promotedCondition(failed)).To(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonNotPassed),
			HaveField("Message", ContainSubstring("the run is Failed"))))
		Expect(promotes()).To(BeZero())

		passed := versionRun(ns, "passed", "bot-canary")
		passed.Spec.Promote = ptr.To(true)
		scored(up, passed, 1, allRight)
		Expect(judged(passed)).To(Equal(v1alpha1.Verdict("Passed")))
		Expect(promotedCondition(passed)).To(And(haveReason(metav1.ConditionTrue, v1alpha1.ReasonPromoted),
			HaveField("Message", Equal("made SystemVersion bot-canary ("+canary.Status.ID+
				") the production version of System bot"))))
		Expect(promotes()).To(Equal(1))
		held, ok := up.System(sys.Status.ID)
		Expect(ok).To(BeTrue())
		Expect(held.ProductionVersion.ID).To(Equal(canary.Status.ID))
		Eventually(productionOf(sys)).Should(Equal(canary.Status.ID), "the System reports it at once, not at its next drift read")
		Expect(sys.Annotations).To(HaveKeyWithValue(v1alpha1.ProductionVersionAnnotation, canary.Status.ID))

		By("a restart reconciles every run again: nothing is promoted twice")
		mgr.stop()
		mgr = startManager(up.opts)
		Consistently(promotes, 3*time.Second).Should(Equal(1))
		Expect(promotedCondition(passed).Reason).To(Equal(v1alpha1.ReasonPromoted))
	})

	It("compares a run with the last Passed run of its System's production version, and is Inconclusive without one", func() {
		first := versionRun(ns, "first", "bot-canary")
		first.Spec.PassCriteria.Baseline = &v1alpha1.Baseline{Production: &v1alpha1.ProductionBaseline{}}
		scored(up, first, 1, allRight)
		Expect(judged(first)).To(Equal(v1alpha1.Verdict("Inconclusive")))
		Expect(passedCondition(first)).To(HaveField("Message", Equal("no production baseline: no Passed run of System bot's "+
			"production version "+prod.Status.ID+" on this run's Testset and service in the namespace")))
		Expect(first.Status.BaselineRun).To(BeEmpty())

		By("runs of the production version: an older Passed one, the latest Passed one, then a Failed one")
		for _, r := range []struct {
			name  string
			wrong func(c, t int) bool
			want  string
		}{{"prod-1", allRight, "Passed"}, {"prod-2", allRight, "Passed"}, {"prod-3", oneInFiveWrong, "Failed"}} {
			e := versionRun(ns, r.name, "bot-prod")
			scored(up, e, 1, r.wrong)
			Expect(judged(e)).To(BeEquivalentTo(r.want))
			// A completion time has seconds: the next run completes in a later one.
			time.Sleep(time.Until(e.Status.CompletionTime.Add(time.Second)))
		}

		candidate := versionRun(ns, "candidate", "bot-canary")
		candidate.Spec.PassCriteria.Baseline = &v1alpha1.Baseline{Production: &v1alpha1.ProductionBaseline{}}
		candidate.Spec.Promote = ptr.To(true)
		scored(up, candidate, 1, allRight)
		Expect(judged(candidate)).To(Equal(v1alpha1.Verdict("Passed")))
		Expect(candidate.Status.BaselineRun).To(Equal("prod-2"), "the latest Passed run, not the first by name")
		Expect(candidate.Status.Metrics[0].Pairs).To(HaveValue(BeEquivalentTo(60)))
		Expect(candidate.Status.Metrics[0].BaselinePassRate).To(HaveValue(BeEquivalentTo(1.0)))
		Expect(promotedCondition(candidate).Reason).To(Equal(v1alpha1.ReasonPromoted))
		Eventually(productionOf(sys)).Should(Equal(canary.Status.ID))

		By("the promoted candidate is now the baseline: a run measurably worse than it fails")
		worse := versionRun(ns, "worse", "bot-prod")
		worse.Spec.PassCriteria.Baseline = &v1alpha1.Baseline{Production: &v1alpha1.ProductionBaseline{}}
		scored(up, worse, 1, oneInFiveWrong)
		Expect(judged(worse)).To(Equal(v1alpha1.Verdict("Failed")))
		Expect(worse.Status.BaselineRun).To(Equal("candidate"))
	})
})
