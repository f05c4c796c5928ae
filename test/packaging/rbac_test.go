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
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// apiGroup is the API group of the operator's kinds.
const apiGroup = "evaluation.eval-operator.dev"

// managerPermissions are the permissions on the operator's kinds of every
// Role and ClusterRole the render binds to the manager's service account,
// flattened as permissions does.
func managerPermissions(objs []unstructured.Unstructured) []string {
	GinkgoHelper()
	pod, _ := manager(objs)
	deployment := withKind(objs, "Deployment")[0]
	account := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: pod.ServiceAccountName,
		Namespace: deployment.GetNamespace()}

	bound := map[string]bool{} // kind/namespace/name of the roles bound to account
	bindings := ofKind[rbacv1.RoleBinding](objs, "RoleBinding")
	for _, b := range ofKind[rbacv1.ClusterRoleBinding](objs, "ClusterRoleBinding") {
		bindings = append(bindings, rbacv1.RoleBinding{ObjectMeta: b.ObjectMeta, Subjects: b.Subjects, RoleRef: b.RoleRef})
	}
	for _, b := range bindings {
		for _, s := range b.Subjects {
			if s.Kind == account.Kind && s.Name == account.Name && s.Namespace == account.Namespace {
				ns := b.Namespace
				if b.RoleRef.Kind == "ClusterRole" {
					ns = ""
				}
				bound[b.RoleRef.Kind+"/"+ns+"/"+b.RoleRef.Name] = true
			}
		}
	}
	var rules []rbacv1.PolicyRule
	for _, r := range ofKind[rbacv1.ClusterRole](objs, "ClusterRole") {
		if bound["ClusterRole//"+r.Name] {
			rules = append(rules, r.Rules...)
		}
	}
	for _, r := range ofKind[rbacv1.Role](objs, "Role") {
		if bound["Role/"+r.Namespace+"/"+r.Name] {
			rules = append(rules, r.Rules...)
		}
	}
	Expect(rules).NotTo(BeEmpty(), "no role is bound to %s/%s", account.Namespace, account.Name)
	return ofOperatorKinds(permissions(rules))
}

// ofOperatorKinds keeps the permissions on the operator's own kinds.
func ofOperatorKinds(perms []string) []string {
	var out []string
	for _, p := range perms {
		if strings.HasPrefix(p, apiGroup+" ") {
			out = append(out, p)
		}
	}
	return out
}

var _ = Describe("The manager's permissions", func() {
	It("keeps the REST server's rules out of the generated role", func() {
		generated := permissions(generatedRules())
		rest := permissions(restRules())
		Expect(rest).To(ConsistOf(
			apiGroup+" metrics create", apiGroup+" metrics delete", apiGroup+" testsets create", apiGroup+" testsets delete",
			apiGroup+" testsetdeletions create", apiGroup+" testcasedeletions create", apiGroup+" evaluationruns create",
			apiGroup+" systems create", apiGroup+" systems delete", apiGroup+" systemversions create",
			" configmaps create"))
		for _, p := range rest {
			Expect(generated).NotTo(ContainElement(p),
				"config/rbac/role.yaml grants %q: an RBAC marker asks for what only the REST server needs", p)
		}
	})

	// without and with are the grants on the operator's kinds without the
	// REST server (the generated role) and with it (plus config/rest).
	without := func() []string { return ofOperatorKinds(permissions(generatedRules())) }
	with := func() []string { return ofOperatorKinds(permissions(append(generatedRules(), restRules()...))) }

	DescribeTable("are the generated role's, and the REST server's only with the REST server",
		func(ctx SpecContext, render func(context.Context) []byte, want func() []string) {
			Expect(managerPermissions(decode(render(ctx)))).To(ConsistOf(want()))
		},
		Entry("Helm, the defaults", helmRender(), without),
		Entry("Helm, serveApi", helmRender("serveApi.enabled=true"), with),
		Entry("Helm, watchNamespaces", helmRender("watchNamespaces={team-b}"), without),
		Entry("Helm, watchNamespaces and serveApi", helmRender("watchNamespaces={team-b}", "serveApi.enabled=true"), with),
		Entry("kustomize config/default", kustomizeRender("default"), without),
		Entry("kustomize config/default with [API]", kustomizeRender("default", restComponent), with),
		Entry("kustomize config/default with every opt-in", kustomizeRender("default", optIns...), with),
		Entry("kustomize config/namespaced", kustomizeRender("namespaced"), without),
		Entry("kustomize config/namespaced with [API]", kustomizeRender("namespaced", restComponent), with),
	)
})

// helmRender renders the chart with values, for a table entry.
func helmRender(values ...string) func(context.Context) []byte {
	return func(ctx context.Context) []byte {
		GinkgoHelper()
		return helmTemplate(ctx, "eo", "ops", values...)
	}
}

// kustomizeRender renders the kustomization config/<dir> with the given
// opt-ins of config/default turned on, for a table entry.
func kustomizeRender(dir string, entries ...string) func(context.Context) []byte {
	return func(ctx context.Context) []byte {
		GinkgoHelper()
		return kustomize(ctx, filepath.Join(configWith(entries...), dir))
	}
}
