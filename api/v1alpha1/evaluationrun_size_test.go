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

package v1alpha1_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/quote"
)

// long is a string of n bytes ending in suffix, so that names are distinct.
func long(n int, suffix string) string { return strings.Repeat("x", n-len(suffix)) + suffix }

// boundedRun is an EvaluationRun whose spec holds every field at its bound
// (the executor template aside): what a tenant can make one run weigh.
func boundedRun() *evaluationv1alpha1.EvaluationRun {
	e := &evaluationv1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: long(253, "run")},
		Spec: evaluationv1alpha1.EvaluationRunSpec{
			ProjectID:               evaluationv1alpha1.ResourceID(long(128, "p")),
			TestsetRef:              &evaluationv1alpha1.ObjectRef{Name: long(253, "t")},
			SystemVersionID:         long(128, "v"),
			PassCriteria:            evaluationv1alpha1.PassCriteria{MinPassRate: ptr.To(0.9), MinScoredRatio: ptr.To(0.9)},
			HumanScoring:            evaluationv1alpha1.HumanScoringWait,
			Timeout:                 &metav1.Duration{Duration: 30 * time.Minute},
			TTLSecondsAfterFinished: ptr.To[int32](3600),
			APIKeySecretRef:         &evaluationv1alpha1.SecretKeySelector{Name: long(253, "k"), Key: long(253, "k")},
			ServiceRef: &evaluationv1alpha1.ServiceReference{Kind: evaluationv1alpha1.KindEvaluationService,
				Name: long(253, "s")},
		}}
	for i := range 50 {
		name := long(253, fmt.Sprint(i))
		e.Spec.MetricRefs = append(e.Spec.MetricRefs, evaluationv1alpha1.ObjectRef{Name: name})
		e.Spec.PassCriteria.Metrics = append(e.Spec.PassCriteria.Metrics,
			evaluationv1alpha1.MetricPassCriteria{Name: name, MinPassRate: 0.5})
	}
	return e
}

// boundedStatus is the status of e at its bounds while a standalone run of
// 10,000 records is scored: each Metric's scoredRecords bitmap full, what
// the judge did at its bounds, and
// condition messages as long as the operator makes them (quote.MaxMessage).
func boundedStatus(e *evaluationv1alpha1.EvaluationRun) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	st := &e.Status
	st.RunID, st.Phase, st.ExecutorJob = long(128, "r"), long(64, "p"), long(63, "j")
	st.Records, st.ExpectedRecords, st.Scores = 10000, ptr.To[int32](10000), 500000
	st.StartTime, st.ObservedGeneration, st.ObservedRetry, st.Service = &now, 1, long(253, "o"), long(300, "s")
	st.Metrics = nil
	for i, ref := range e.Spec.MetricRefs {
		st.Metrics = append(st.Metrics, evaluationv1alpha1.MetricResult{ID: long(128, fmt.Sprint(i)), Name: ref.Name,
			Passed: 10000, PassRate: ptr.To(1.0), MinPassRate: 0.5, Judged: true, ScoredRecords: long(1700, "=")})
	}
	st.Judge = &evaluationv1alpha1.JudgeStatus{Service: long(300, "s"), Endpoint: long(256, "e"), Requests: 1 << 20,
		Tokens: 1 << 40, BudgetSpent: true, LastError: long(512, "l")}
	for i := range 4 {
		st.Judge.Models = append(st.Judge.Models, long(520, fmt.Sprint(i)))
	}
	for i := range st.Metrics {
		st.Metrics[i].Unjudged = 10000
	}
	st.Conditions = nil
	for _, t := range []string{"Ready", "Passed", "Reconciling", "Stalled", "Promoted"} {
		st.Conditions = append(st.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: "Running",
			Message: long(quote.MaxMessage, "m"), LastTransitionTime: now, ObservedGeneration: 1})
	}
}

// storedSize is the size of obj as the API server serves it, managed
// fields included: about what etcd and the manager's cache hold.
func storedSize(obj client.Object) int {
	GinkgoHelper()
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	data, err := json.Marshal(obj)
	Expect(err).NotTo(HaveOccurred())
	return len(data)
}

// README's and docs/rest-api.md's figures of a run's weight come from here.
var _ = Describe("An EvaluationRun at its bounds", func() {
	It("weighs at most 88 KiB judged and 168 KiB while a standalone run of 10,000 records is scored", func() {
		e := boundedRun()
		Expect(k8sClient.Create(ctx, e)).To(Succeed())
		boundedStatus(e)
		Expect(k8sClient.Status().Update(ctx, e)).To(Succeed())
		scoring := storedSize(e)

		for i := range e.Status.Metrics {
			m := &e.Status.Metrics[i]
			m.ScoredRecords = "" // dropped at the verdict
			// and compared with a baseline (the operator writes 4 decimals)
			m.BaselinePassRate, m.Difference, m.Pairs = ptr.To(0.8123), ptr.To(-0.0123), ptr.To[int32](10000)
			m.LowerBound, m.UpperBound, m.Confidence = ptr.To(-0.0457), ptr.To(0.0213), ptr.To(0.999)
		}
		e.Status.Verdict, e.Status.BaselineRun = "Passed", long(253, "b")
		Expect(k8sClient.Status().Update(ctx, e)).To(Succeed())
		judged := storedSize(e)
		AddReportEntry("EvaluationRun at its bounds", fmt.Sprintf("scoring %d bytes, judged %d bytes", scoring, judged))
		Expect(judged).To(BeNumerically("<=", 88<<10))
		Expect(scoring).To(BeNumerically("<=", 168<<10))
	})
})
