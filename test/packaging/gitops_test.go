//go:build packaging

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

package packaging

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/eval-operator/eval-operator/internal/validate"
)

// examples/gitops is a repository teams copy: each cluster's render must be
// what the plugin's validate and the API server both admit.
var _ = Describe("The example GitOps repository", func() {
	DescribeTable("renders a cluster that kubectl eval validate and the API server admit",
		func(ctx SpecContext, cluster string, observe bool) {
			rendered := kustomize(ctx, filepath.Join(repoRoot, "examples", "gitops", "clusters", cluster))
			docs, err := validate.Split(cluster, rendered)
			Expect(err).NotTo(HaveOccurred())
			v, err := validate.New()
			Expect(err).NotTo(HaveOccurred())
			var policies [][]any
			for _, d := range docs {
				if !v.Handles(d.Object.GroupVersionKind()) {
					continue
				}
				_, err = v.Create(ctx, d.Object)
				Expect(err).NotTo(HaveOccurred(), "%s %s", d.Object.GetKind(), d.Object.GetName())
				if d.Object.GetKind() == "Metric" {
					p, _, _ := unstructured.NestedSlice(d.Object.Object, "spec", "managementPolicies")
					policies = append(policies, p)
				}
			}
			Expect(policies).To(HaveLen(3))
			if observe {
				Expect(policies).To(HaveEach(Equal([]any{"Observe"})))
			} else {
				Expect(policies).To(HaveEach(BeNil()))
			}

			kubectl(ctx, kustomize(ctx, filepath.Join(repoRoot, "config", "crd")), "apply", "--server-side",
				"--field-manager=packaging-gitops", "-f", "-")
			waitEstablished(ctx, crdNames...)
			DeferCleanup(func(ctx SpecContext) {
				// The namespaces stay: without a controller-manager they would
				// stay Terminating, and the other cluster's render uses them.
				kubectl(ctx, nil, "delete", "--ignore-not-found", "clusterevaluationservice/default")
				for _, ns := range []string{"team-search", "team-support"} {
					kubectl(ctx, nil, "delete", "--ignore-not-found", "metrics", "--all", "-n", ns)
				}
			})
			Expect(apply(ctx, "packaging-gitops", rendered)).To(BeEmpty(), "warnings")
		},
		Entry("production, the writer", "production", false),
		Entry("staging, the read-only mirror", "staging", true),
	)
})
