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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

const gateRunTemplate = `apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: EvaluationRun
metadata:
  name: release
spec:
  projectId: proj_gate
  testsetRef: {name: qa}
  metricRefs: [{name: exact}]
  timeout: 2m
  apiKeySecretRef: {name: gate-key}
`

// executeRuns plays the pipeline that runs the system under test: for each
// run of up it has not seen, once the service has it, it writes one record
// per testcase.
func executeRuns(ctx context.Context, up *evalapitest.Server, records int) {
	defer GinkgoRecover()
	c, err := evalapi.NewClient(evalapi.Options{BaseURL: up.URL()})
	Expect(err).NotTo(HaveOccurred())
	seen := map[string]bool{}
	Eventually(ctx, func() int {
		for _, run := range up.Runs() {
			if seen[run.ID] {
				continue
			}
			seen[run.ID] = true
			for i := range records {
				_, err := c.CreateRecord(ctx, evalapitest.DefaultKey, run.ID, evalapi.RecordRequest{
					Inputs: json.RawMessage(fmt.Sprintf(`{"question":"q%d"}`, i)), Expected: json.RawMessage(`{}`),
					Outputs: json.RawMessage(`{"answer":"a"}`)})
				Expect(err).NotTo(HaveOccurred())
			}
		}
		return len(seen)
	}).WithTimeout(2 * time.Minute).Should(Equal(2))
}

var _ = Describe("kubectl eval gate", func() {
	It("exits with the verdict the manager reached against the service: 0 Passed, 1 Failed", func(ctx SpecContext) {
		up := evalapitest.New()
		DeferCleanup(up.Close)
		ns := newNamespace(ctx, "gate")
		createKeySecret(ctx, ns, "gate-key", evalapitest.DefaultKey, false)
		startManager(ctx, "manager", "--api-url="+up.URL())

		Expect(k8s.Create(ctx, &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exact"},
			Spec: v1alpha1.MetricSpec{ProjectID: "proj_gate", Name: "Exact", EvalType: "heuristic", OutputType: "boolean",
				APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: "gate-key"}}})).To(Succeed())
		Expect(k8s.Create(ctx, &v1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "qa"},
			Spec: v1alpha1.TestsetSpec{ProjectID: "proj_gate", Name: "QA", KeyField: "id",
				Inline:          []runtime.RawExtension{{Raw: []byte(`{"id":"a","question":"q0"}`)}, {Raw: []byte(`{"id":"b","question":"q1"}`)}},
				APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: "gate-key"}}})).To(Succeed())

		dir := GinkgoT().TempDir()
		plugin := filepath.Join(dir, "kubectl-eval")
		build := exec.CommandContext(ctx, "go", "build", "-o", plugin, "./cmd/kubectl-eval")
		build.Dir = framework.RepoRoot()
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		template := filepath.Join(dir, "run.yaml")
		Expect(os.WriteFile(template, []byte(gateRunTemplate), 0o600)).To(Succeed())
		// Each release is a version of the System: the gate derives its
		// SystemVersion from the revision and the image, and the run names it,
		// so the service links the verdict to the version it judged.
		Expect(k8s.Create(ctx, &v1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release"},
			Spec: v1alpha1.SystemSpec{ProjectID: "proj_gate", Name: "Release", Config: apiextensionsv1.JSON{Raw: []byte(`{}`)},
				APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: "gate-key"}}})).To(Succeed())
		gate := func(revision string) (string, int) {
			cmd := exec.CommandContext(ctx, plugin, "gate", "--kubeconfig", controlPlane.Kubeconfig, "-n", ns,
				"-f", template, "--system", "release", "--revision", revision, "--version", "image=registry.example.com/release:"+revision,
				"--poll-interval", "200ms")
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return string(out), exit.ExitCode()
			}
			Expect(err).NotTo(HaveOccurred(), string(out))
			return string(out), 0
		}
		go executeRuns(ctx, up, 2)

		result, code := gate("v1")
		Expect(code).To(Equal(0), result)
		Expect(result).To(MatchRegexp(`exact\s+2\s+0\s+0\s+1.00\s+1.00\s+true`))

		By("a release whose outputs fail the Metric")
		up.SetScorer(func(evalapi.Metric, evalapi.Record) json.RawMessage { return json.RawMessage(`{"score":false}`) })
		result, code = gate("v2")
		Expect(code).To(Equal(1), result)
		Expect(result).To(ContainSubstring("Failed: Metric exact is below its minimum pass rate"))

		var runs v1alpha1.EvaluationRunList
		Expect(k8s.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
		Expect(runs.Items).To(HaveLen(2))
		Expect(up.Calls(evalapitest.OpCreateRun)).To(Equal(2), "one run per gate")

		By("each release's run is linked to its own SystemVersion in the service")
		var versions v1alpha1.SystemVersionList
		Expect(k8s.List(ctx, &versions, client.InNamespace(ns))).To(Succeed())
		Expect(versions.Items).To(HaveLen(2))
		ids := map[string]string{}
		for _, v := range versions.Items {
			ids[v.Name] = v.Status.ID
		}
		sent := map[string]bool{}
		for _, r := range up.Runs() {
			Expect(r.SystemVersionID).NotTo(BeNil())
			sent[*r.SystemVersionID] = true
		}
		for _, e := range runs.Items {
			Expect(e.Spec.SystemVersionRef).NotTo(BeNil())
			id := ids[e.Spec.SystemVersionRef.Name]
			Expect(v1alpha1.ValidUUID(id)).To(BeTrue(), "the version's id %q", id)
			Expect(e.Status.SystemVersionID).To(Equal(id))
			Expect(sent).To(HaveKey(id))
		}
		Expect(sent).To(HaveLen(2), "two revisions, two versions")
	})
})
