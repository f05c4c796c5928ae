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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	llmjudge "github.com/eval-operator/eval-operator/internal/judge"
	"github.com/eval-operator/eval-operator/internal/judge/judgetest"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// The judge of a standalone service, end to end in the cluster: records
// written through this server are kept for the judge, scored by the
// manager's scoring controller against a fake OpenAI-compatible judge, and
// the run judged from the counts, with no score written by the caller.
var _ = Describe("Runs scored by the service's judge", func() {
	var (
		t    tenant
		fake *judgetest.Judge
		url  string
	)
	BeforeEach(func() {
		t = newTenant()
		fake = judgetest.New(nil)
		DeferCleanup(func() { fake.CloseClientConnections(); fake.Close() })
		// A connector that resolves the namespaces' services, as the manager's.
		_, url = runServer(Options{Connector: remote.NewConnector(h.mgr.GetAPIReader(),
			remote.Defaults{Services: h.mgr.GetAPIReader()})})
	})

	aiMetric := func(tn tenant) string {
		GinkgoHelper()
		rep := sendTo(url, request{method: http.MethodPost, path: projectPath, key: tn.key, body: `{"name":"correct",
			"evalType":"ai","outputType":"boolean","temperature":0.2,"guidelines":"Correct means it answers the question.",
			"promptTemplate":"Does {{outputs.answer}} answer {{inputs.question}}?\n{{gradingInstructionsAndExamples}}"}`})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		return idOf(rep)
	}
	startRun := func(tn tenant, metricIDs ...string) evaluationv1alpha1.EvaluationRun {
		GinkgoHelper()
		rep := sendTo(url, request{method: http.MethodPost, path: runsPath, key: tn.key,
			body: `{"metricIds":["` + strings.Join(metricIDs, `","`) + `"]}`})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		var l evaluationv1alpha1.EvaluationRunList
		Expect(h.k8s.List(context.Background(), &l, client.InNamespace(tn.namespace))).To(Succeed())
		Expect(l.Items).To(HaveLen(1))
		return l.Items[0]
	}
	record := func(tn tenant, run evaluationv1alpha1.EvaluationRun, question string) {
		GinkgoHelper()
		rep := sendTo(url, request{method: http.MethodPost, path: BasePath + "/runs/" + run.RecordedID() + "/records", key: tn.key,
			body: fmt.Sprintf(`{"inputs":{"question":%q},"expected":{},"outputs":{"answer":"answer to %s"}}`, question, question)})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
	}
	judged := func(ctx context.Context, run evaluationv1alpha1.EvaluationRun) *evaluationv1alpha1.EvaluationRun {
		GinkgoHelper()
		obj := &evaluationv1alpha1.EvaluationRun{}
		Eventually(func(g Gomega) evaluationv1alpha1.Verdict {
			g.Expect(h.k8s.Get(ctx, client.ObjectKeyFromObject(&run), obj)).To(Succeed())
			return obj.Status.Verdict
		}).WithTimeout(time.Minute).ShouldNot(BeEmpty())
		return obj
	}
	keptRecords := func(ctx context.Context, namespace string) []corev1.ConfigMap {
		var l corev1.ConfigMapList
		Expect(h.k8s.List(ctx, &l, client.InNamespace(namespace), client.HasLabels{remote.JudgeRecordLabel})).To(Succeed())
		return l.Items
	}

	// judgeFor makes judge the one of the ClusterEvaluationService default,
	// which allows tn's namespace alone; the spec's end deletes it, and the
	// namespace's Metrics that hold it.
	judgeFor := func(ctx context.Context, tn tenant, judge *evaluationv1alpha1.Judge) {
		GinkgoHelper()
		ces := &evaluationv1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: evaluationv1alpha1.ClusterEvaluationServiceSpec{Namespaces: []string{tn.namespace},
				ServiceConnection: evaluationv1alpha1.ServiceConnection{Standalone: &evaluationv1alpha1.StandaloneService{
					Judge: judge}}}}
		// Another spec's may still be on its way out.
		Eventually(func() error { return h.k8s.Create(ctx, ces) }).WithTimeout(time.Minute).Should(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(h.k8s.DeleteAllOf(ctx, &evaluationv1alpha1.Metric{}, client.InNamespace(tn.namespace))).To(Succeed())
			Expect(client.IgnoreNotFound(h.k8s.Delete(ctx, ces))).To(Succeed())
		})
	}

	It("scores each record once per AI Metric with the judge's model, and the verdict says which judge scored", func(ctx SpecContext) {
		fake.Key = "sk-judge-" + t.namespace
		Expect(h.k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "judge-key"},
			StringData: map[string]string{"apiKey": fake.Key}})).To(Succeed())
		judgeFor(ctx, t, &evaluationv1alpha1.Judge{URL: evaluationv1alpha1.JudgeURL(fake.URL()),
			APIKeySecretRef: &evaluationv1alpha1.JudgeKeySelector{Name: "judge-key", Namespace: t.namespace},
			Models:          []evaluationv1alpha1.JudgeModel{{EvalModelName: "gpt-4o", Model: "qwen2.5-7b-instruct"}}})
		// The answer is false for one question, and slow for a huge one.
		huge := "q3 " + strings.Repeat("é", 300<<10)
		fake.SetRule(func(r judgetest.Request) judgetest.Reply {
			reply := judgetest.Passing(r)
			switch {
			case strings.Contains(r.Prompt(), "q2"):
				reply = judgetest.Reply{Content: `{"score": false, "reasoning": "It does not."}`}
			case strings.Contains(r.Prompt(), "q3"):
				reply.Delay = 2 * time.Second
			}
			return reply
		})
		ai, heuristic := aiMetric(t), createdID(t, "heuristic", "boolean")
		run := startRun(t, ai, heuristic)
		for i, q := range []string{huge, "q0", "q1", "q2"} {
			record(t, run, q)
			if i == 0 {
				By("a huge record is kept for the judge bounded")
				kept := keptRecords(ctx, t.namespace)
				Expect(kept).To(HaveLen(1))
				size := 0
				for _, v := range kept[0].Data {
					size += len(v)
				}
				Expect(size).To(BeNumerically("<=", 3*64<<10))
			}
			Expect(putScore(t, fmt.Sprintf("%s.%d", run.RecordedID(), i+1), heuristic, `{"binaryScore":true}`).status).
				To(Equal(http.StatusOK))
		}

		obj := judged(ctx, run)
		Expect(obj.Status.Verdict).To(BeEquivalentTo("Failed"), "one record failed the AI Metric")
		Expect(obj.Status.Metrics).To(ConsistOf(
			And(HaveField("ID", ai), HaveField("Passed", BeEquivalentTo(3)), HaveField("Failed", BeEquivalentTo(1))),
			And(HaveField("ID", heuristic), HaveField("Passed", BeEquivalentTo(4)))))
		Expect(obj.Status.Judge).NotTo(BeNil())
		Expect(*obj.Status.Judge).To(And(HaveField("Service", "ClusterEvaluationService/default"),
			HaveField("Models", ConsistOf("gpt-4o=qwen2.5-7b-instruct")), HaveField("Requests", BeEquivalentTo(4)),
			HaveField("Tokens", BeNumerically(">", 0))))
		passed := condition(obj, evaluationv1alpha1.ConditionPassed)
		Expect(passed.Message).To(ContainSubstring("scored by the judge of ClusterEvaluationService/default"))

		reqs := fake.Requests()
		Expect(reqs).To(HaveLen(4), "one request per record and AI Metric")
		for _, r := range reqs {
			Expect(r.Model).To(Equal("qwen2.5-7b-instruct"))
			Expect(*r.Temperature).To(Equal(0.2))
			if strings.Contains(r.Prompt(), "q3") {
				Expect(len(r.Prompt())).To(BeNumerically("<=", llmjudge.MaxPromptBytes), "a huge record's prompt is bounded")
				continue
			}
			Expect(r.Prompt()).To(MatchRegexp(`^Does answer to q\d answer q\d\?\nCorrect means it answers the question\.$`))
		}
		Eventually(func() []corev1.ConfigMap { return keptRecords(ctx, t.namespace) }).Should(BeEmpty(),
			"a judged record is not kept")
		raw, err := json.Marshal(obj.Status)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).NotTo(ContainSubstring(fake.Key), "the judge's key is not in the status")
	})

	It("ends a run Inconclusive, naming the spent budget, once the judge's requests for it reach maxRequestsPerRun", func(ctx SpecContext) {
		fake.SetRule(judgetest.Garbage)
		judgeFor(ctx, t, &evaluationv1alpha1.Judge{URL: evaluationv1alpha1.JudgeURL(fake.URL()), DefaultModel: "m",
			MaxInFlight: ptr.To[int32](1), MaxRequestsPerRun: ptr.To[int32](3)})
		run := startRun(t, aiMetric(t))
		for i := range 3 {
			record(t, run, fmt.Sprintf("q%d", i))
		}
		obj := judged(ctx, run)
		Expect(obj.Status.Verdict).To(BeEquivalentTo("Inconclusive"))
		Expect(condition(obj, evaluationv1alpha1.ConditionPassed).Message).To(ContainSubstring("JudgeBudgetSpent"))
		Expect(obj.Status.Judge).To(HaveValue(And(HaveField("BudgetSpent", true), HaveField("Requests", BeEquivalentTo(3)))))
		Expect(fake.Requests()).To(HaveLen(3), "no request past the budget")
		Eventually(func() []corev1.ConfigMap { return keptRecords(ctx, t.namespace) }).Should(BeEmpty(),
			"a run out of budget keeps no records")
	})

	It("leaves a record unscored, the reason named, when a namespace's own judge would reach a private address", func(ctx SpecContext) {
		svc := &evaluationv1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "default"},
			Spec: evaluationv1alpha1.EvaluationServiceSpec{ServiceConnection: evaluationv1alpha1.ServiceConnection{
				Standalone: &evaluationv1alpha1.StandaloneService{Judge: &evaluationv1alpha1.Judge{
					URL: evaluationv1alpha1.JudgeURL(fake.URL()), DefaultModel: "any"}}}}}
		Expect(h.k8s.Create(ctx, svc)).To(Succeed())
		run := startRun(t, aiMetric(t))
		record(t, run, "q0")
		obj := judged(ctx, run)
		Expect(obj.Status.Verdict).To(BeEquivalentTo("Inconclusive"), "no score")
		Expect(obj.Status.Metrics).To(ConsistOf(HaveField("Unjudged", BeEquivalentTo(1))))
		Expect(obj.Status.Judge.LastError).To(ContainSubstring("refusing to connect to a loopback"))
		Expect(fake.Requests()).To(BeEmpty(), "the namespace's judge reached 127.0.0.1")
	})
})

// condition is e's condition of type, which must exist.
func condition(e *evaluationv1alpha1.EvaluationRun, kind string) metav1.Condition {
	GinkgoHelper()
	for _, c := range e.Status.Conditions {
		if c.Type == kind {
			return c
		}
	}
	Fail("no condition " + kind)
	return metav1.Condition{}
}
