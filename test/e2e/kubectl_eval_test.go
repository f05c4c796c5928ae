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
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("kubectl eval import", func() {
	It("moves a project's Metrics into manifests that the manager adopts with no create and no update", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		c, err := evalapi.NewClient(evalapi.Options{BaseURL: upstream.URL()})
		Expect(err).NotTo(HaveOccurred())
		const made = 2 * framework.Variants // made in the web UI
		for i := range made {
			spec := framework.NewMetric("", fmt.Sprintf("Web UI metric %d", i), i).Spec
			_, err := c.CreateMetric(ctx, evalapitest.DefaultKey, "proj-web", convert.RequestFor(&spec))
			Expect(err).NotTo(HaveOccurred())
		}
		ns := newNamespace(ctx, "import-e2e")
		createKeySecret(ctx, ns, "eval-key", evalapitest.DefaultKey, false)

		dir := GinkgoT().TempDir()
		plugin := filepath.Join(dir, "kubectl-eval")
		build := exec.CommandContext(ctx, "go", "build", "-o", plugin, "./cmd/kubectl-eval")
		build.Dir = framework.RepoRoot()
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		imported := filepath.Join(dir, "metrics")
		out, err = exec.CommandContext(ctx, plugin, "import", "--kubeconfig", controlPlane.Kubeconfig,
			"--project-id", "proj-web", "-n", ns, "--secret", "eval-key", "--api-url", upstream.URL(), "-o", imported).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(string(out)).NotTo(ContainSubstring(evalapitest.DefaultKey))

		files, err := filepath.Glob(filepath.Join(imported, "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(HaveLen(made))
		for _, f := range files {
			data, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			var m v1alpha1.Metric
			Expect(yaml.UnmarshalStrict(data, &m)).To(Succeed())
			Expect(k8s.Create(ctx, &m)).To(Succeed(), f)
		}

		startManager(ctx, "manager", "--api-url="+upstream.URL())

		Eventually(func(g Gomega) {
			var list v1alpha1.MetricList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			g.Expect(list.Items).To(HaveLen(made))
			for i := range list.Items {
				ready := meta.FindStatusCondition(list.Items[i].Status.Conditions, v1alpha1.ConditionReady)
				g.Expect(ready).NotTo(BeNil())
				g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), list.Items[i].Name)
				g.Expect(ready.Reason).To(Equal(v1alpha1.ReasonAdopted), list.Items[i].Name)
			}
		}).Should(Succeed())
		Expect(upstream.Creates()).To(Equal(made), "adopting created nothing")
		Expect(upstream.Calls(evalapitest.OpUpdateMetric)).To(BeZero(), "the imported specs equal the remote Metrics")
	})
})
