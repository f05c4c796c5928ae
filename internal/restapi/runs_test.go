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
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
)

const runsPath = BasePath + "/projects/proj-1/runs"

func postRecord(t tenant, runID, question string) reply {
	GinkgoHelper()
	return send(request{method: http.MethodPost, path: BasePath + "/runs/" + runID + "/records", key: t.key,
		body: fmt.Sprintf(`{"testcaseId":"tc","inputs":{"question":%q},"expected":{},"outputs":{"answer":"a"},"otelLinkId":"x"}`, question)})
}

func putScore(t tenant, recordID, metricID, score string) reply {
	GinkgoHelper()
	return send(request{method: http.MethodPut, path: BasePath + "/records/" + recordID + "/scores/" + metricID, key: t.key,
		body: `{"score":` + score + `}`})
}

func runOf(rep reply) evalapi.Run {
	GinkgoHelper()
	var run evalapi.Run
	Expect(json.Unmarshal(rep.body, &run)).To(Succeed(), "body: %s", rep.body)
	return run
}

var _ = Describe("Runs, records and scores", func() {
	var (
		t        tenant
		metricID string
		testset  string
	)
	BeforeEach(func() {
		t = newTenant()
		metricID = createdID(t, "heuristic", "boolean")
		testset = postTestset(t).ID
		Expect(postTestcases(t, testset, `{"items":[{"jsonData":{"question":"q0"}},{"jsonData":{"question":"q1"}}]}`).status).
			To(Equal(http.StatusCreated))
	})

	It("runs an SDK's runAndEvaluate: a run, its records and scores counted, and the operator's verdict", func(ctx SpecContext) {
		rep := send(request{method: http.MethodPost, path: runsPath, key: t.key,
			body: `{"testsetId":"` + testset + `","metricIds":["` + metricID + `"]}`})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		run := runOf(rep)
		Expect(run.ID).To(HavePrefix("run_"))
		Expect(run.Status).To(Equal("awaiting_execution"))
		Expect(run.NumExpectedRecords).To(HaveValue(Equal(2)))
		Expect(run.TestsetID).To(HaveValue(Equal(testset)))

		records := make([]string, 0, 2)
		for i, q := range []string{"q0", "q1"} {
			if i == 1 {
				Expect(runOf(send(request{method: http.MethodGet, path: BasePath + "/runs/" + run.ID, key: t.key})).Status).
					To(Equal("running_execution"))
			}
			rep := postRecord(t, run.ID, q)
			Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
			var rec struct{ ID, RunID string }
			Expect(json.Unmarshal(rep.body, &rec)).To(Succeed())
			Expect(rec.RunID).To(Equal(run.ID))
			records = append(records, rec.ID)
		}
		Expect(records).To(Equal([]string{run.ID + ".1", run.ID + ".2"}))

		By("a score the verdict cannot read is answered with a validation error and not counted")
		rep = putScore(t, records[0], metricID, `{"rating":"excellent"}`)
		Expect(rep.status).To(Equal(http.StatusOK))
		Expect(string(rep.body)).To(ContainSubstring(`"path":"/score"`))
		Expect(putScore(t, records[0], metricID, `{"value":true,"reasoning":"right"}`).status).To(Equal(http.StatusOK))
		rep = putScore(t, records[0], metricID, `{"value":false}`)
		Expect(rep.status).To(Equal(http.StatusConflict), "one score per record and Metric")
		Expect(putScore(t, records[1], metricID, `{"binaryScore":true}`).status).To(Equal(http.StatusOK))

		got := runOf(send(request{method: http.MethodGet, path: BasePath + "/runs/" + run.ID, key: t.key}))
		Expect(got.NumRecords).To(Equal(2))
		Expect(got.NumScores).To(Equal(2))
		Expect(got.Status).To(Equal("completed"), "the phase as of the counts, before the operator looks")

		By("the operator judges it from the counts")
		obj := &evaluationv1alpha1.EvaluationRun{}
		Eventually(func(g Gomega) evaluationv1alpha1.Verdict {
			var l evaluationv1alpha1.EvaluationRunList
			g.Expect(h.k8s.List(ctx, &l, client.InNamespace(t.namespace))).To(Succeed())
			g.Expect(l.Items).To(HaveLen(1))
			*obj = l.Items[0]
			return obj.Status.Verdict
		}).WithTimeout(30 * time.Second).Should(Equal(evaluationv1alpha1.Verdict("Passed")))
		Expect(obj.Status.Metrics).To(ConsistOf(And(HaveField("ID", metricID), HaveField("Passed", BeEquivalentTo(2)),
			HaveField("Failed", BeEquivalentTo(0)), HaveField("ScoredRecords", BeEmpty()))))
		Expect(runOf(send(request{method: http.MethodGet, path: BasePath + "/runs/" + run.ID, key: t.key})).Status).
			To(Equal("completed"))
		Expect(postRecord(t, run.ID, "late").status).To(Equal(http.StatusConflict), "a judged run takes no more records")
	})

	It("gives a run the pass criteria the namespace's standalone service sets, else the defaults", func(ctx SpecContext) {
		svc := &evaluationv1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "default"},
			Spec: evaluationv1alpha1.EvaluationServiceSpec{ServiceConnection: evaluationv1alpha1.ServiceConnection{
				Standalone: &evaluationv1alpha1.StandaloneService{RunPassCriteria: &evaluationv1alpha1.PassCriteria{
					MinPassRate: ptr.To(0.85), MinScoredRatio: ptr.To(0.9)}}}}}
		Expect(h.k8s.Create(ctx, svc)).To(Succeed())
		other := newTenant()
		otherMetric := createdID(other, "heuristic", "boolean")
		// A connector that resolves the namespaces' services, as the manager's.
		_, url := runServer(Options{Connector: remote.NewConnector(h.mgr.GetAPIReader(),
			remote.Defaults{Services: h.mgr.GetAPIReader()})})

		criteria := func(tn tenant, metric string) evaluationv1alpha1.PassCriteria {
			GinkgoHelper()
			rep := sendTo(url, request{method: http.MethodPost, path: runsPath, key: tn.key,
				body: `{"metricIds":["` + metric + `"]}`})
			Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
			var l evaluationv1alpha1.EvaluationRunList
			Expect(h.k8s.List(ctx, &l, client.InNamespace(tn.namespace))).To(Succeed())
			Expect(l.Items).To(HaveLen(1))
			return l.Items[0].Spec.PassCriteria
		}
		Expect(criteria(t, metricID)).To(And(HaveField("MinPassRate", HaveValue(Equal(0.85))),
			HaveField("MinScoredRatio", HaveValue(Equal(0.9)))))
		Expect(criteria(other, otherMetric)).To(And(HaveField("MinPassRate", HaveValue(Equal(1.0))),
			HaveField("MinScoredRatio", HaveValue(Equal(1.0)))), "no service of its own: the defaults")
	})

	It("accepts the sessionId the Python SDK sends on a record and answers it back; refuses a bad one naming it", func() {
		run := runOf(send(request{method: http.MethodPost, path: runsPath, key: t.key, body: `{"metricIds":["` + metricID + `"]}`}))
		record := func(sessionID string) reply {
			GinkgoHelper()
			b, err := json.Marshal(map[string]any{"testcaseId": "tc", "inputs": map[string]any{}, "expected": map[string]any{},
				"outputs": map[string]any{}, "sessionId": sessionID})
			Expect(err).NotTo(HaveOccurred())
			return send(request{method: http.MethodPost, path: BasePath + "/runs/" + run.ID + "/records", key: t.key, body: string(b)})
		}
		rep := record("sess-42")
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		Expect(decodeAny(rep.body)).To(HaveKeyWithValue("sessionId", "sess-42"))
		rep = record(strings.Repeat("é", maxSessionIDLen))
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)

		expectValidationError(record(strings.Repeat("s", maxSessionIDLen+1)), "sessionId")
		expectValidationError(record("sess\n42"), "sessionId")
		expectValidationError(record("sess\u007f"), "sessionId")
		Expect(runOf(send(request{method: http.MethodGet, path: BasePath + "/runs/" + run.ID, key: t.key})).NumRecords).
			To(Equal(2), "a refused record is not counted")
	})

	It("refuses unknown Metrics and Testsets, records of unknown runs, and another namespace's run", func() {
		rep := send(request{method: http.MethodPost, path: runsPath, key: t.key, body: `{"metricIds":["met_nope"]}`})
		Expect(rep.status).To(Equal(http.StatusBadRequest))
		Expect(string(rep.body)).To(ContainSubstring("metricIds[0]"))
		rep = send(request{method: http.MethodPost, path: runsPath, key: t.key,
			body: `{"testsetId":"tst_nope","metricIds":["` + metricID + `"]}`})
		Expect(rep.status).To(Equal(http.StatusBadRequest))
		Expect(string(rep.body)).To(ContainSubstring("testsetId"))
		Expect(postRecord(t, "run_nope", "q").status).To(Equal(http.StatusNotFound))

		run := runOf(send(request{method: http.MethodPost, path: runsPath, key: t.key, body: `{"metricIds":["` + metricID + `"]}`}))
		other := newTenant()
		Expect(send(request{method: http.MethodGet, path: BasePath + "/runs/" + run.ID, key: other.key}).status).
			To(Equal(http.StatusNotFound))
		Expect(postRecord(other, run.ID, "q").status).To(Equal(http.StatusNotFound))
		rep = send(request{method: http.MethodPost, path: BasePath + "/runs/" + run.ID + "/records", key: t.key,
			body: `{"inputs":[],"expected":{},"outputs":{}}`})
		Expect(rep.status).To(Equal(http.StatusBadRequest))
		Expect(putScore(t, run.ID+".1", metricID, `{"value":true}`).status).To(Equal(http.StatusNotFound), "no record 1 yet")
	})
})
