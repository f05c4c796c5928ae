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
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	groupkinds "github.com/eval-operator/eval-operator/internal/kinds"
)

// namesOf are the names of the objects of kind in a render.
func namesOf(render []byte, kind string) []string {
	GinkgoHelper()
	var names []string
	for _, o := range decode(render) {
		if o.GetKind() == kind {
			names = append(names, o.GetName())
		}
	}
	return names
}

// The installs list the kinds in several places; each list must name every
// kind of the group (groupkinds.All), so a new kind cannot be left out of one.
var _ = Describe("Every list of kinds in the installs", func() {
	It("gives each namespaced kind an editor and a viewer role, and the cluster-scoped service none", func(ctx context.Context) {
		chart := namesOf(helmTemplate(ctx, "kinds", "kinds"), "ClusterRole")
		kustomized := namesOf(kustomize(ctx, "config/default"), "ClusterRole")
		for _, k := range groupkinds.All {
			for _, role := range []string{"editor", "viewer"} {
				inChart := "kinds-eval-operator-" + k.Resource + "-" + role
				inKustomize := "eval-operator-" + strings.ToLower(k.Kind) + "-" + role + "-role"
				if k.Namespaced {
					Expect(chart).To(ContainElement(inChart))
					Expect(kustomized).To(ContainElement(inKustomize))
				} else {
					// Aggregated to namespace admins, it would let them edit a
					// service every namespace may use.
					Expect(chart).NotTo(ContainElement(inChart))
					Expect(kustomized).NotTo(ContainElement(inKustomize))
				}
			}
		}
	})

	It("bounds in a tenant's quota every kind a tenant creates through the REST server or kubectl", func() {
		users := groupkinds.Users()
		want := make([]corev1.ResourceName, 0, len(users))
		for _, k := range users {
			want = append(want, corev1.ResourceName("count/"+k.Resource+"."+v1alpha1.GroupVersion.Group))
		}
		quota := tenantQuota()
		got := make([]corev1.ResourceName, 0, len(quota))
		for name := range quota { // what the chart's and config/namespaced's quotas are checked against
			got = append(got, name)
		}
		Expect(got).To(ConsistOf(want))
	})

	It("gives every kind an Argo CD health check", func() {
		data, err := os.ReadFile(filepath.Join(repoRoot, "config", "argocd", "argocd-cm-patch.yaml"))
		Expect(err).NotTo(HaveOccurred())
		patch := string(data)
		for _, k := range groupkinds.All {
			Expect(patch).To(ContainSubstring("resource.customizations.health." + v1alpha1.GroupVersion.Group + "_" + k.Kind + ":"))
		}
	})
})
