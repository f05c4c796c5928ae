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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	groupkinds "github.com/eval-operator/eval-operator/internal/kinds"
)

// generatedRules are the manager's rules as `make manifests` generates them.
func generatedRules() []rbacv1.PolicyRule {
	GinkgoHelper()
	return rulesOf("rbac/role.yaml")
}

// restRules are the rules only the REST server needs (config/rest/role.yaml).
func restRules() []rbacv1.PolicyRule {
	GinkgoHelper()
	return rulesOf("rest/role.yaml")
}

// rulesOf reads the rules of the ClusterRole in config/<file>.
func rulesOf(file string) []rbacv1.PolicyRule {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", file))
	Expect(err).NotTo(HaveOccurred())
	var role rbacv1.ClusterRole
	Expect(yaml.UnmarshalStrict(data, &role)).To(Succeed())
	Expect(role.Rules).NotTo(BeEmpty(), "config/%s", file)
	return role.Rules
}

// clusterScopedKinds reports whether r is only about ClusterEvaluationServices,
// the one cluster-scoped kind of the API, which the ClusterRole keeps.
func clusterScopedKinds(r rbacv1.PolicyRule) bool {
	return len(r.Resources) > 0 && !slices.ContainsFunc(r.Resources, func(res string) bool {
		return !strings.HasPrefix(res, "clusterevaluationservices")
	})
}

// permissions flattens rules into one "group resource verb [name]" line per
// permission, so rules split across roles compare with the generated ones.
func permissions(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					p := g + " " + res + " " + v
					if len(r.ResourceNames) > 0 {
						p += " " + strings.Join(r.ResourceNames, ",")
					}
					out = append(out, p)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// expectNamespaceScoped checks a namespace-scoped render: the manager
// watches namespaces only, each has a Role with the rules of want on
// namespaced kinds, and the cluster-wide roles add only the rules on
// cluster-scoped kinds (no Secret read anywhere else).
func expectNamespaceScoped(objs []unstructured.Unstructured, want []rbacv1.PolicyRule, namespaces ...string) {
	GinkgoHelper()
	_, c := manager(objs)
	Expect(c.Args).To(ContainElement("--watch-namespaces=" + strings.Join(namespaces, ",")))
	var clusterRules []rbacv1.PolicyRule
	for _, role := range ofKind[rbacv1.ClusterRole](objs, "ClusterRole") {
		for _, r := range role.Rules {
			Expect(r.Resources).NotTo(ContainElement("secrets"), "ClusterRole %s reads Secrets", role.Name)
			if slices.Contains(r.APIGroups, "apiextensions.k8s.io") || clusterScopedKinds(r) {
				clusterRules = append(clusterRules, r)
			}
		}
	}
	for _, ns := range namespaces {
		var found []rbacv1.PolicyRule
		for _, role := range ofKind[rbacv1.Role](objs, "Role") {
			if role.Namespace == ns {
				found = append(found, role.Rules...)
			}
		}
		Expect(permissions(append(found, clusterRules...))).To(ConsistOf(permissions(want)),
			"the rules granted in %s", ns)
		Expect(ofKind[rbacv1.RoleBinding](objs, "RoleBinding")).To(ContainElement(And(
			HaveField("Namespace", ns), HaveField("RoleRef.Kind", "Role"))), "no RoleBinding in %s", ns)
	}
	expectLeastPrivilege(objs)
	expectRestricted(objs)
}

var _ = Describe("kustomize config/namespaced", func() {
	It("grants the manager Roles in its namespace instead of cluster-wide Secret read", func(ctx SpecContext) {
		rendered := kustomize(ctx, filepath.Join(repoRoot, "config", "namespaced"))
		expectNamespaceScoped(decode(rendered), generatedRules(), "team-a")
		quotas := ofKind[corev1.ResourceQuota](decode(rendered), "ResourceQuota")
		Expect(quotas).To(HaveLen(1))
		Expect(hardOf(quotas[0])).To(Equal(tenantQuota()), "the default budget")

		apply(ctx, "packaging-kustomize", namespace("team-a"))
		Expect(apply(ctx, "packaging-kustomize", rendered)).NotTo(ContainSubstring(podSecurityWarning))
		kubectl(ctx, nil, "get", "-n", "team-a", "role/eval-operator-manager-role",
			"rolebinding/eval-operator-manager-rolebinding")
	}, SpecTimeout(2*time.Minute))
})

var _ = Describe("Helm chart in namespace-scoped mode", func() {
	values := []string{"watchNamespaces={team-b,team-c}", "serveApi.enabled=true",
		"restNamespaceSelector=eval-operator.dev/rest=enabled", "allowInsecureApiUrl=true"}

	It("grants Roles in the watched namespaces, and namespace read only for the selector", func(ctx SpecContext) {
		objs := decode(helmTemplate(ctx, "eo", "ops", values...))
		// serveApi: the REST server's rules too.
		expectNamespaceScoped(objs, append(generatedRules(), restRules()...), "team-b", "team-c")
		_, c := manager(objs)
		Expect(c.Args).To(ContainElements("--rest-namespace-selector=eval-operator.dev/rest=enabled",
			"--allow-insecure-api-url"))
		Expect(ofKind[rbacv1.ClusterRole](objs, "ClusterRole")).To(ContainElement(And(
			HaveField("Name", "eo-eval-operator-namespace-reader"),
			HaveField("Rules", ConsistOf(HaveField("Resources", ConsistOf("namespaces")))))))

		defaults := decode(helmTemplate(ctx, "eo", "ops", "serveApi.enabled=true"))
		Expect(ofKind[rbacv1.ClusterRole](defaults, "ClusterRole")).NotTo(ContainElement(
			HaveField("Name", "eo-eval-operator-namespace-reader")), "namespaces are read only with a selector")
		_, c = manager(defaults)
		Expect(c.Args).NotTo(ContainElement(HavePrefix("--watch-namespaces")))
		Expect(kinds(defaults)).NotTo(ContainElement("ResourceQuota"))
	})

	It("bounds each kind in each watched namespace with a ResourceQuota, at the REST server's budget", func(ctx SpecContext) {
		objs := decode(helmTemplate(ctx, "eo", "ops", values...))
		quotas := ofKind[corev1.ResourceQuota](objs, "ResourceQuota")
		Expect(quotas).To(HaveLen(2))
		for _, q := range quotas {
			Expect(q.Namespace).To(BeElementOf("team-b", "team-c"))
			Expect(hardOf(q)).To(Equal(tenantQuota()))
		}
		_, c := manager(objs)
		Expect(c.Args).To(ContainElements(budgetArgs()))
	})

	It("applies to a real API server", func(ctx SpecContext) {
		for _, ns := range []string{"helm-scoped", "team-b", "team-c"} {
			apply(ctx, "packaging-helm-scoped", namespace(ns))
		}
		rendered := helmTemplate(ctx, "scoped", "helm-scoped", values...)
		Expect(apply(ctx, "packaging-helm-scoped", rendered)).NotTo(ContainSubstring(podSecurityWarning))
		kubectl(ctx, nil, "get", "-n", "team-b", "role/scoped-eval-operator-manager",
			"rolebinding/scoped-eval-operator-manager", "resourcequota/scoped-eval-operator-tenant")
	}, SpecTimeout(2*time.Minute))
})

// tenantQuota is the ResourceQuota of a tenant namespace at the REST
// server's default budget: the installers' quotas and the budget agree.
func tenantQuota() map[corev1.ResourceName]string {
	quota := map[corev1.ResourceName]string{}
	for _, k := range groupkinds.Budgeted() {
		quota[corev1.ResourceName("count/"+k.Resource+"."+v1alpha1.GroupVersion.Group)] = fmt.Sprint(k.TenantMax)
	}
	return quota
}

// hardOf is q's hard limits as text.
func hardOf(q corev1.ResourceQuota) map[corev1.ResourceName]string {
	hard := map[corev1.ResourceName]string{}
	for name, v := range q.Spec.Hard {
		hard[name] = v.String()
	}
	return hard
}

// budgetArgs are the manager's flags of the default budget.
func budgetArgs() []string {
	pairs := make([]string, 0, len(groupkinds.Budgeted()))
	for _, k := range groupkinds.Budgeted() {
		pairs = append(pairs, fmt.Sprintf("%s=%d", k.Kind, k.TenantMax))
	}
	return []string{"--rest-tenant-max=" + strings.Join(pairs, ",")}
}
