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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("kubectl eval exec", func() {
	It("executes a standalone run against the cluster's REST server, which judges it", func(ctx SpecContext) {
		ns := newNamespace(ctx, "exec")
		key := framework.NewKey("exec")
		createKeySecret(ctx, ns, "exec-key", key, true)
		addr, err := framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		startManager(ctx, "manager", "--serve-api="+addr)
		keyRef := &v1alpha1.SecretKeySelector{Name: "exec-key"}

		Expect(k8s.Create(ctx, &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exact-answer"},
			Spec: v1alpha1.MetricSpec{ProjectID: "proj_exec", Name: "Exact answer", EvalType: "heuristic",
				OutputType: "boolean", APIKeySecretRef: keyRef}})).To(Succeed())
		questions := []string{"hello", "bye", "thanks", "again"}
		cases := make([]runtime.RawExtension, 0, len(questions))
		for _, q := range questions {
			cases = append(cases, runtime.RawExtension{Raw: []byte(`{"id":"` + q + `","question":"` + q +
				`","answer":"` + strings.ToUpper(q) + `"}`)})
		}
		Expect(k8s.Create(ctx, &v1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "qa"},
			Spec: v1alpha1.TestsetSpec{ProjectID: "proj_exec", Name: "QA", KeyField: "id", Inline: cases,
				FieldMapping:    v1alpha1.TestsetFieldMapping{Inputs: []v1alpha1.FieldName{"question"}, Expected: []v1alpha1.FieldName{"answer"}},
				APIKeySecretRef: keyRef}})).To(Succeed())
		run := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release"},
			Spec: v1alpha1.EvaluationRunSpec{ProjectID: "proj_exec", TestsetRef: &v1alpha1.ObjectRef{Name: "qa"},
				MetricRefs: []v1alpha1.ObjectRef{{Name: "exact-answer"}}, APIKeySecretRef: keyRef,
				Timeout: &metav1.Duration{Duration: 2 * time.Minute}}}
		Expect(k8s.Create(ctx, run)).To(Succeed())
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			return run.Status.RunID
		}).WithTimeout(time.Minute).ShouldNot(BeEmpty())

		// The system under test: the question in upper case, but one wrong.
		sut := newSystem(func(q string) string {
			if q == "again" {
				return "AGAIN?"
			}
			return strings.ToUpper(q)
		})
		dir := GinkgoT().TempDir()
		plugin := filepath.Join(dir, "kubectl-eval")
		build := exec.CommandContext(ctx, "go", "build", "-o", plugin, "./cmd/kubectl-eval")
		build.Dir = framework.RepoRoot()
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		cmd := exec.CommandContext(ctx, plugin, "exec", "--url", sut, "--output", "answer",
			"--body", `{"question": {{json .inputs.question}}}`, "--check", "exact-answer=exact:answer")
		cmd.Env = append(os.Environ(), "EVAL_API_URL=http://"+addr+"/api/v2", "EVAL_API_KEY="+key,
			"EVAL_RUN_ID="+run.Status.RunID)
		out, err = cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(string(out)).To(ContainSubstring("4 testcases, 0 already recorded, 4 recorded"))
		Expect(string(out)).NotTo(ContainSubstring(key))

		Eventually(func(g Gomega) v1alpha1.Verdict {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			return run.Status.Verdict
		}).WithTimeout(time.Minute).Should(Equal(v1alpha1.Verdict("Failed")))
		Expect(run.Status.Records).To(BeEquivalentTo(4))
		Expect(run.Status.Metrics).To(HaveLen(1))
		Expect(run.Status.Metrics[0].Passed).To(BeEquivalentTo(3))
		Expect(run.Status.Metrics[0].Failed).To(BeEquivalentTo(1))
		Expect(meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionReady)).To(BeTrue())
	})
})

// newSystem serves a system under test answering {"answer": answer(question)}
// on a loopback port, and returns its URL.
func newSystem(answer func(string) string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct{ Question string }
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"answer": answer(q.Question)})
	}))
	DeferCleanup(srv.Close)
	return srv.URL
}
