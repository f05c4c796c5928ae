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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

// runYAML is an EvaluationRun that names the smoke Testset and two Metrics.
const runYAML = `apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: EvaluationRun
metadata:
  name: release-42
spec:
  projectId: proj-42
  testsetRef:
    name: smoke
  metricRefs:
  - name: faithfulness
  - name: relevance
`

// bundle is a complete set: the run and every object it names.
func bundle(run string) string {
	return stream(metricYAML, edit(metricYAML, "name: faithfulness", "name: relevance"), inlineTestsetYAML, run)
}

var _ = Describe("references in validate", func() {
	It("passes a run whose Metrics and Testset are among the manifests", func(ctx SpecContext) {
		out, code := runOffline(ctx, bundle(runYAML), "validate", "-n", "team-a")
		Expect(code).To(Equal(0), out)
		Expect(out).To(Equal("4 objects valid, 0 invalid, 0 other objects ignored\n"))
	})

	It("reports a misspelt Metric and a missing Testset by field path, with a hint", func(ctx SpecContext) {
		run := edit(edit(runYAML, "name: relevance", "name: relevanc"), "name: smoke", "name: smoke-v2")
		out, code := runOffline(ctx, bundle(run), "validate", "-n", "team-a")
		Expect(code).To(Equal(1))
		Expect(out).To(Equal(`-:39: EvaluationRun.evaluation.eval-operator.dev "release-42" is invalid: [` +
			`spec.testsetRef.name: Not found: "smoke-v2": no Testset of namespace team-a among the manifests, ` +
			`spec.metricRefs[1].name: Not found: "relevanc": no Metric of namespace team-a among the manifests; did you mean "relevance"?]` + "\n" +
			"3 objects valid, 1 invalid, 0 other objects ignored\n"))
	})

	It("matches references by namespace", func(ctx SpecContext) {
		out, code := runOffline(ctx, bundle(edit(runYAML, "name: release-42", "name: release-42\n  namespace: team-b")),
			"validate", "-n", "team-a", "-o", "json")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring(`"field": "spec.metricRefs[0].name"`))
	})

	It("checks no references with --no-ref-check", func(ctx SpecContext) {
		out, code := runOffline(ctx, runYAML, "validate", "--no-ref-check", "-")
		Expect(code).To(Equal(0), out)
	})

	It("takes the objects in the cluster with --live", func(ctx SpecContext) {
		ns, err := framework.NewNamespace(ctx, k8s, "refs-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		// relevance is not among the manifests.
		path := writeManifest(GinkgoT().TempDir(), "run.yaml", stream(metricYAML, inlineTestsetYAML, runYAML))

		stdout, _, err := run(ctx, nil, "validate", "--live", "-n", ns, path)
		Expect(exitCode(err)).To(Equal(1))
		Expect(stdout).To(ContainSubstring(`spec.metricRefs[1].name: Not found: "relevance": no Metric of namespace ` + ns +
			" among the manifests or in the cluster\n"))

		Expect(k8s.Create(ctx, framework.NewMetric(ns, "relevance", 0))).To(Succeed())
		stdout, stderr, err := run(ctx, nil, "validate", "--live", "-n", ns, path)
		Expect(err).NotTo(HaveOccurred(), stdout+stderr)
	})
})
