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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// deleteAndWait deletes obj and waits until it is gone.
func deleteAndWait(obj client.Object) {
	GinkgoHelper()
	Expect(k8s.Delete(rootCtx, obj)).To(Succeed())
	Eventually(func() error { return k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj) }).
		Should(Satisfy(apierrors.IsNotFound))
}

// endedInconclusive waits for e's verdict and checks it is Inconclusive,
// its Passed condition saying each of why, and that no condition says a run
// is created later.
func endedInconclusive(e *v1alpha1.EvaluationRun, why ...string) {
	GinkgoHelper()
	Expect(judged(e)).To(Equal(v1alpha1.Verdict("Inconclusive")))
	Expect(passedCondition(e)).To(haveReason(metav1.ConditionUnknown, "Inconclusive"))
	for _, w := range why {
		Expect(passedCondition(e).Message).To(ContainSubstring(w))
	}
	Expect(readyCondition(e)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted))
	for _, c := range e.Status.Conditions {
		Expect(c.Message).NotTo(ContainSubstring("created once"), c.Type)
	}
}

// A run ends by its timeout whatever it lost or waits for; these specs
// time it from the moment the run is created, with a 3s timeout.
var _ = Describe("EvaluationRun ending", func() {
	short := func(e *v1alpha1.EvaluationRun) *v1alpha1.EvaluationRun {
		e.Spec.Timeout = &metav1.Duration{Duration: 3 * time.Second}
		return e
	}
	testset := func(ns string) *v1alpha1.Testset {
		return newTestset(ns, "qa", inline(`{"id":"a","question":"q0"}`, `{"id":"b","question":"q1"}`))
	}

	Context("against a remote service", func() {
		var (
			ns string
			up *upstream
		)
		BeforeEach(func() {
			ns, up = newFixture()
			up.opts.AllowPrivateServiceAddresses = true
			startManager(up.opts)
			Expect(k8s.Create(rootCtx, testset(ns))).To(Succeed())
			Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		})

		It("ends a run whose Testset is deleted after it exists Inconclusive at its timeout, naming the Testset", func() {
			e := short(newRun(ns, "lost-testset", "exact"))
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			runID(e)
			deleteAndWait(&v1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "qa"}})
			endedInconclusive(e, "Testset qa", "after the run was created")
		})

		It("judges what was scored of a run whose Metric is deleted after it exists, naming the Metric", func() {
			Expect(k8s.Create(rootCtx, runMetric(ns, "quality", "ai", "int"))).To(Succeed())
			e := short(newRun(ns, "lost-metric", "exact", "quality"))
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			id := runID(e)
			deleteAndWait(&v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "quality"}})
			execute(up, id)
			endedInconclusive(e, "Metric quality was deleted after the run was created")
			Expect(e.Status.Metrics).To(ConsistOf(And(HaveField("Name", "exact"), HaveField("Passed", BeEquivalentTo(2)))),
				"the scores of the Metric left are judged")
		})

		It("ends a run whose Testset never becomes Ready at its timeout, creating nothing", func() {
			e := short(newRun(ns, "never", "exact"))
			e.Spec.TestsetRef.Name = "absent"
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			endedInconclusive(e, "no run was created within the timeout (3s): Testset absent not found")
			Expect(e.RecordedID()).To(BeEmpty())
			Expect(up.Runs()).To(BeEmpty())
		})
	})

	Context("on a standalone service", func() {
		var ns string
		BeforeEach(func() {
			var up *upstream
			ns, up = newFixture()
			up.opts.Service = nil
			up.opts.StandaloneURL = "http://eval-operator-api.eval-operator-system.svc:8082/api/v2"
			startManager(up.opts)
			Expect(k8s.Create(rootCtx, testset(ns))).To(Succeed())
			Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		})

		It("ends a run whose Testset is deleted while it runs Inconclusive at its timeout, naming the Testset", func() {
			e := short(newRun(ns, "lost-testset", "exact"))
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			runID(e)
			deleteAndWait(&v1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "qa"}})
			endedInconclusive(e, "Testset qa", "after the run was created", "the run did not finish in time")
			Expect(e.Status.ExpectedRecords).To(HaveValue(BeEquivalentTo(2)), "what the run expected is kept")
		})

		It("ends a run whose Metric is deleted while it runs Inconclusive at its timeout, naming the Metric", func() {
			e := short(newRun(ns, "lost-metric", "exact"))
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			runID(e)
			deleteAndWait(&v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exact"}})
			endedInconclusive(e, "Metric exact was deleted after the run was created")
		})

		It("ends a run whose Metric never becomes Ready at its timeout", func() {
			e := short(newRun(ns, "never", "exact", "absent"))
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			endedInconclusive(e, "no run was created within the timeout (3s): Metric absent not found")
			Expect(e.RecordedID()).To(BeEmpty())
		})
	})
})
