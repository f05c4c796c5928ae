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

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/manifests"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("export-ids", func() {
	var (
		ns   string
		repo string
		// live are the cluster's Metrics, as the repository holds them.
		live []v1alpha1.Metric
	)

	BeforeEach(func(ctx SpecContext) {
		var err error
		ns, err = framework.NewNamespace(ctx, k8s, "export-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		live = make([]v1alpha1.Metric, 0, 3)
		for i, name := range []string{"annotated", "status-only", "not-created"} {
			live = append(live, *framework.NewMetric("", name, i))
		}
		// The repository: the manifests without ids, namespaced by the kustomization.
		repo = GinkgoT().TempDir()
		var stream strings.Builder
		Expect(manifests.WriteStream(&stream, live)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(repo, "metrics.yaml"), []byte(stream.String()), 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(repo, "kustomization.yaml"),
			[]byte("namespace: "+ns+"\nresources: [metrics.yaml]\ncomponents: [metric-ids]\n"), 0o600)).To(Succeed())

		// The cluster: one id in the annotation, one only in status (a
		// replaced object), one Metric without an id yet.
		for i := range live {
			m := live[i].DeepCopy()
			m.Namespace = ns
			if m.Name == "annotated" {
				m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: "m-annotated"}
			}
			Expect(k8s.Create(ctx, m)).To(Succeed())
			if m.Name == "status-only" {
				m.Status.ID = "m-status"
				Expect(k8s.Status().Update(ctx, m)).To(Succeed())
			}
		}
	})

	It("writes a kustomize Component that kustomize build turns into adopting manifests", func(ctx SpecContext) {
		Expect(os.Mkdir(filepath.Join(repo, "metric-ids"), 0o750)).To(Succeed())

		_, stderr, err := run(ctx, nil, "export-ids", "-n", ns, "-o", filepath.Join(repo, "metric-ids", "kustomization.yaml"))
		Expect(err).NotTo(HaveOccurred(), stderr)

		out, err := exec.Command(filepath.Join(framework.RepoRoot(), "bin", "kustomize"), "build", repo).Output()
		Expect(err).NotTo(HaveOccurred())
		built := decodeMetrics(strings.NewReader(string(out)))
		ids := map[string]string{}
		for _, m := range built {
			Expect(m.Namespace).To(Equal(ns))
			ids[m.Name] = m.Annotations[v1alpha1.MetricIDAnnotation]
		}
		Expect(ids).To(Equal(map[string]string{"annotated": "m-annotated", "status-only": "m-status", "not-created": ""}))
	})

	It("annotates the manifests in place with --write", func(ctx SpecContext) {
		stdout, stderr, err := run(ctx, nil, "export-ids", "-n", ns, "--write", repo)
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(stdout).To(ContainSubstring("Metric annotated: metric-id m-annotated"))
		Expect(stdout).To(ContainSubstring("Metric status-only: metric-id m-status"))

		written, err := os.ReadFile(filepath.Join(repo, "metrics.yaml"))
		Expect(err).NotTo(HaveOccurred())
		ids := map[string]string{}
		for _, m := range decodeMetrics(strings.NewReader(string(written))) {
			ids[m.Name] = m.Annotations[v1alpha1.MetricIDAnnotation]
		}
		Expect(ids).To(Equal(map[string]string{"annotated": "m-annotated", "status-only": "m-status", "not-created": ""}))
	})

	It("takes the namespace from the kubeconfig unless -A", func(ctx SpecContext) {
		stdout, stderr, err := run(ctx, nil, "export-ids", "-A")
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(stdout).To(ContainSubstring("m-annotated"))

		// The control plane's kubeconfig names no namespace: default, which holds none.
		stdout, stderr, err = run(ctx, nil, "export-ids")
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(stdout).NotTo(ContainSubstring("m-annotated"))
	})
})
