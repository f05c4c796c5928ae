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
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// answers writes the records of run id: trials records of each of n
// testcases, the t-th trial of testcase c answering wrong when wrong(c, t).
func answers(up *upstream, id string, n, trials int, wrong func(c, t int) bool) {
	GinkgoHelper()
	for c := range n {
		for t := range trials {
			answer := "right"
			if wrong(c, t) {
				answer = "wrong"
			}
			_, err := serviceClient(up).CreateRecord(rootCtx, testKey, id, evalapi.RecordRequest{
				TestcaseID: fmt.Sprintf("tc-%d", c), Inputs: json.RawMessage(`{}`), Expected: json.RawMessage(`{}`),
				Outputs: json.RawMessage(fmt.Sprintf(`{"answer":%q}`, answer))})
			Expect(err).NotTo(HaveOccurred())
		}
	}
}

// right passes a record unless it answered wrong.
func right(_ evalapi.Metric, r evalapi.Record) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"score":%t}`, !strings.Contains(string(r.Outputs), "wrong")))
}

// scored creates e, writes its records (trials of each of 60 testcases)
// while nothing scores, then lets the service score them all at once: the
// run completes with every record, not at its Testset's two.
func scored(up *upstream, e *v1alpha1.EvaluationRun, trials int, wrong func(c, t int) bool) {
	GinkgoHelper()
	up.SetScorer(nil)
	Expect(k8s.Create(rootCtx, e)).To(Succeed())
	answers(up, runID(e), 60, trials, wrong)
	up.SetScorer(right)
}

// allRight answers every trial right.
func allRight(int, int) bool { return false }

var _ = Describe("EvaluationRun verdicts against a baseline", func() {
	var (
		ns string
		up *upstream
	)
	compared := func(name string, trials, minPassing int32) *v1alpha1.EvaluationRun {
		e := newRun(ns, name, "exact")
		e.Spec.PassCriteria.Baseline = &v1alpha1.Baseline{RunRef: &v1alpha1.ObjectRef{Name: "production"}}
		if trials > 1 {
			e.Spec.PassCriteria.Trials, e.Spec.PassCriteria.MinPassingTrials = ptr.To(trials), ptr.To(minPassing)
		}
		return e
	}
	BeforeEach(func() {
		ns, up = newFixture()
		up.opts.AllowPrivateServiceAddresses = true
		startManager(up.opts)
		Expect(k8s.Create(rootCtx, newTestset(ns, "qa", inline(`{"id":"a","question":"q0"}`, `{"id":"b","question":"q1"}`)))).To(Succeed())
		Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
	})

	It("waits for its baseline, passes a flaky candidate no worse by testcase, and fails one measurably worse", func() {
		canary := compared("canary", 3, 2)
		scored(up, canary, 3, func(c, t int) bool { return c%2 == 0 && t == c%3 }) // 3/3 becomes 2/3 on half the testcases
		Eventually(readyCondition(canary)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRunning),
			HaveField("Message", ContainSubstring("waiting for baseline run production, which does not exist"))))

		production := newRun(ns, "production", "exact")
		scored(up, production, 1, allRight)
		Expect(judged(production)).To(Equal(v1alpha1.Verdict("Passed")))
		Expect(judged(canary)).To(Equal(v1alpha1.Verdict("Passed")), "2 of 3 trials pass every testcase")
		m := canary.Status.Metrics[0]
		Expect(m.Passed).To(BeEquivalentTo(60), "testcases, not records")
		Expect(m.Pairs).To(HaveValue(BeEquivalentTo(60)))
		Expect(m.PassRate).To(HaveValue(BeEquivalentTo(1.0)))
		Expect(m.BaselinePassRate).To(HaveValue(BeEquivalentTo(1.0)))
		Expect(m.Difference).To(HaveValue(BeEquivalentTo(0.0)))
		Expect(m.Confidence).To(HaveValue(BeEquivalentTo(0.95)))
		Expect(m.LowerBound).To(HaveValue(And(BeNumerically("<", 0), BeNumerically(">=", -0.05))))
		Expect(m.UpperBound).To(HaveValue(BeNumerically(">", 0)))

		By("a candidate wrong on one testcase in five is Failed")
		regressed := compared("regressed", 1, 1)
		scored(up, regressed, 1, func(c, _ int) bool { return c%5 == 0 })
		Expect(judged(regressed)).To(Equal(v1alpha1.Verdict("Failed")))
		Expect(passedCondition(regressed)).To(HaveField("Message", ContainSubstring("Metric exact is worse than the baseline: -0.200")))
		Expect(regressed.Status.Metrics[0].UpperBound).To(HaveValue(BeNumerically("<", 0)))

		By("a run naming itself as its baseline is Inconclusive")
		other := compared("self", 1, 1)
		other.Spec.PassCriteria.Baseline.RunRef.Name = "self"
		scored(up, other, 1, allRight)
		Expect(judged(other)).To(Equal(v1alpha1.Verdict("Inconclusive")))
		Expect(passedCondition(other)).To(HaveField("Message", Equal("the baseline is this run itself")))
	})
})
