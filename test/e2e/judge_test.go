//go:build e2e

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

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/judge/judgetest"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("A standalone service's judge", func() {
	It("scores a run of 20 records with an AI and a heuristic Metric to a verdict, across a manager restart", func(ctx SpecContext) {
		ns := newNamespace(ctx, "judge")
		key := framework.NewKey("judge")
		createKeySecret(ctx, ns, "api-key", key, true)
		keyRef := &v1alpha1.SecretKeySelector{Name: "api-key"}

		// The judge: slow enough that the restart finds records unscored;
		// the first answer about tc-07 unreadable, the first request about
		// tc-11 rate-limited.
		// The judge answers nothing until the first manager is stopped, so
		// that the restart finds every record still to judge, however fast
		// the machine.
		var mu sync.Mutex
		seen := map[string]int{}
		restarted := make(chan struct{})
		var open sync.Once
		DeferCleanup(func() { open.Do(func() { close(restarted) }) })
		fake := judgetest.New(func(r judgetest.Request) judgetest.Reply {
			select {
			case <-restarted:
			default: // the first manager's request: held, then answered after it is gone
				<-restarted
				return judgetest.Reply{Status: http.StatusServiceUnavailable, Body: `{"error":{"message":"restarting"}}`}
			}
			mu.Lock()
			defer mu.Unlock()
			// The record is in the first user message: a second ask after an
			// unreadable answer ends with a message of its own.
			first := ""
			for _, m := range r.Messages {
				if m.Role == "user" {
					first = m.Content
					break
				}
			}
			at := strings.Index(first, "tc-")
			if at < 0 || len(first) < at+5 {
				return judgetest.Reply{Status: http.StatusBadRequest, Body: `{"error":{"message":"no testcase in the prompt"}}`}
			}
			tc := first[at : at+5]
			seen[tc]++
			switch {
			case tc == "tc-07" && seen[tc] == 1:
				return judgetest.Reply{Content: "Looks fine to me.", Delay: 300 * time.Millisecond}
			case tc == "tc-11" && seen[tc] == 1:
				return judgetest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "1", Body: `{"error":{"message":"slow down"}}`}
			}
			reply := judgetest.Reply{Content: `{"score": 5, "reasoning": "Same tone."}`, Delay: 300 * time.Millisecond}
			if tc == "tc-03" {
				reply.Content = `{"score": 2, "reasoning": "Too casual."}`
			}
			return reply
		})
		DeferCleanup(func() { fake.CloseClientConnections(); fake.Close() })
		fake.Key = "sk-judge-e2e-0123456789"
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "judge-key"},
			StringData: map[string]string{"apiKey": fake.Key}})).To(Succeed())
		Expect(k8s.Create(ctx, &v1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
			Spec: v1alpha1.EvaluationServiceSpec{ServiceConnection: v1alpha1.ServiceConnection{
				Standalone: &v1alpha1.StandaloneService{Judge: &v1alpha1.Judge{URL: v1alpha1.JudgeURL(fake.URL()),
					APIKeySecretRef: &v1alpha1.JudgeKeySelector{Name: "judge-key"}, MaxInFlight: ptr.To[int32](2),
					Models: []v1alpha1.JudgeModel{{EvalModelName: "gpt-4o", Model: "judge-small"}}}}}}})).To(Succeed())

		addr, err := framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		// The judge listens on 127.0.0.1, which a namespaced service may
		// reach only when the operator allows it.
		first := startManager(ctx, "manager-1", "--serve-api="+addr, "--allow-private-service-addresses")

		Expect(k8s.Create(ctx, &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tone"},
			Spec: v1alpha1.MetricSpec{ProjectID: "proj_judge", Name: "Tone", EvalType: "ai", OutputType: "int",
				PromptTemplate: ptr.To[v1alpha1.Text]("Case {{inputs.id}}: is \"{{outputs.reply}}\" as {{inputs.tone}} as " +
					"\"{{expected.reply}}\"?\n{{gradingInstructionsAndExamples}}"),
				Guidelines:      ptr.To[v1alpha1.Text]("5 when the tones match, 1 when they are opposite."),
				APIKeySecretRef: keyRef}})).To(Succeed())
		Expect(k8s.Create(ctx, &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exact"},
			Spec: v1alpha1.MetricSpec{ProjectID: "proj_judge", Name: "Exact", EvalType: "heuristic", OutputType: "boolean",
				APIKeySecretRef: keyRef}})).To(Succeed())
		cases := make([]runtime.RawExtension, 20)
		for i := range cases {
			cases[i] = runtime.RawExtension{Raw: fmt.Appendf(nil, `{"id":"tc-%02d","tone":"formal","reply":"Dear Sir %d"}`, i, i)}
		}
		Expect(k8s.Create(ctx, &v1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tones"},
			Spec: v1alpha1.TestsetSpec{ProjectID: "proj_judge", Name: "Tones", KeyField: "id", Inline: cases,
				FieldMapping: v1alpha1.TestsetFieldMapping{Inputs: []v1alpha1.FieldName{"id", "tone"},
					Expected: []v1alpha1.FieldName{"reply"}}, APIKeySecretRef: keyRef}})).To(Succeed())
		run := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release"},
			Spec: v1alpha1.EvaluationRunSpec{ProjectID: "proj_judge", TestsetRef: &v1alpha1.ObjectRef{Name: "tones"},
				MetricRefs: []v1alpha1.ObjectRef{{Name: "tone"}, {Name: "exact"}}, APIKeySecretRef: keyRef,
				PassCriteria: v1alpha1.PassCriteria{MinPassRate: ptr.To(0.9)}, Timeout: &metav1.Duration{Duration: 3 * time.Minute}}}
		Expect(k8s.Create(ctx, run)).To(Succeed())
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			return run.Status.RunID
		}).WithTimeout(time.Minute).ShouldNot(BeEmpty())
		exact := &v1alpha1.Metric{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "exact"}, exact)).To(Succeed())

		By("writing 20 records and the heuristic Metric's scores, none of the AI Metric's")
		base := "http://" + addr + "/api/v2"
		for i := range 20 {
			body := fmt.Sprintf(`{"testcaseId":"tc-%02d","inputs":{"id":"tc-%02d","tone":"formal"},`+
				`"expected":{"reply":"Dear Sir %d"},"outputs":{"reply":"Dear Sir %d"}}`, i, i, i, i)
			code, answer, err := post(ctx, base+"/runs/"+run.Status.RunID+"/records", key, body)
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(Equal(http.StatusCreated), string(answer))
			code, answer, err = call(ctx, http.MethodPut, fmt.Sprintf("%s/records/%s.%d/scores/%s", base, run.Status.RunID, i+1,
				exact.Status.ID), key, `{"score":{"binaryScore":true}}`)
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(Equal(http.StatusOK), string(answer))
		}

		By("restarting the manager while records wait for the judge")
		Expect(first.Stop(stopGrace, nil)).To(Succeed())
		var kept corev1.ConfigMapList
		Expect(k8s.List(ctx, &kept, client.InNamespace(ns), client.HasLabels{remote.JudgeRecordLabel})).To(Succeed())
		Expect(kept.Items).To(HaveLen(20), "the restart should find every record still to judge")
		open.Do(func() { close(restarted) })
		addr, err = framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		startManager(ctx, "manager-2", "--serve-api="+addr, "--allow-private-service-addresses")

		Eventually(func(g Gomega) v1alpha1.Verdict {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			return run.Status.Verdict
		}).WithTimeout(2 * time.Minute).Should(Equal(v1alpha1.Verdict("Passed")))
		Expect(run.Status.Metrics).To(ConsistOf(
			And(HaveField("Name", "tone"), HaveField("Passed", BeEquivalentTo(19)), HaveField("Failed", BeEquivalentTo(1)),
				HaveField("Unjudged", BeEquivalentTo(0))),
			And(HaveField("Name", "exact"), HaveField("Passed", BeEquivalentTo(20)))), "each record scored once")
		mu.Lock()
		Expect(seen).To(HaveKeyWithValue("tc-07", 2), "an unreadable answer is asked for once more")
		Expect(seen).To(HaveKeyWithValue("tc-11", 2), "a rate-limited request is sent again")
		Expect(seen).To(HaveKeyWithValue("tc-03", 1))
		mu.Unlock()
		Expect(run.Status.Judge).NotTo(BeNil())
		Expect(run.Status.Judge.Models).To(ConsistOf("gpt-4o=judge-small"))
		Expect(meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionPassed).Message).
			To(ContainSubstring("AI Metrics scored by the judge of EvaluationService/default"))
		for _, r := range fake.Requests() {
			Expect(r.Model).To(Equal("judge-small"))
			Expect(r.Authorization).To(Equal("Bearer " + fake.Key))
		}
		Eventually(func() []corev1.ConfigMap {
			Expect(k8s.List(ctx, &kept, client.InNamespace(ns), client.HasLabels{remote.JudgeRecordLabel})).To(Succeed())
			return kept.Items
		}).Should(BeEmpty(), "judged records are not kept")
	})
})
