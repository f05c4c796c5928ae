//go:build cluster

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

package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/test/framework"
)

// run runs a command from the repository root and returns its stdout; it
// fails the spec, showing stderr, if the command fails.
func run(ctx context.Context, stdin []byte, name string, args ...string) []byte {
	GinkgoHelper()
	out, stderr, err := framework.Run(ctx, stdin, name, args...)
	Expect(err).NotTo(HaveOccurred(), "%s %s\n%s", name, strings.Join(args, " "), stderr)
	return out
}

// tool is the command the Makefile names in env, else bin/<name>.
func tool(env, name string) string {
	return framework.Tool(env, filepath.Join(framework.RepoRoot(), "bin", name))
}

func kubectl(ctx context.Context, stdin []byte, args ...string) []byte {
	GinkgoHelper()
	return run(ctx, stdin, framework.Tool("KUBECTL", "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

func helm(ctx context.Context, args ...string) {
	GinkgoHelper()
	run(ctx, nil, tool("HELM", "helm"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// ctr runs containerd's client against the node's containerd.
func ctr(ctx context.Context, args ...string) {
	GinkgoHelper()
	sock := filepath.Join(stateDir, "containerd", "containerd.sock")
	run(ctx, nil, "ctr", append([]string{"-a", sock, "-n", "k8s.io"}, args...)...)
}

// restrictedNamespace creates a namespace that enforces the restricted Pod
// Security level: a pod breaking it is never created.
func restrictedNamespace(ctx context.Context, name string) {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
	}}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, ns))).To(Succeed())
}

// expectHealthyInstall checks a Deployment the way an operator of the
// operator would: every pod Ready and Running on image, liveness and
// readiness probes set and passing (Ready, no restart for a while), in a
// namespace enforcing the restricted Pod Security level, running as the
// ServiceAccount the install made, which no binding outside bindings names.
func expectHealthyInstall(ctx context.Context, namespace, deployment, image string, bindings []string) {
	GinkgoHelper()
	var ns corev1.Namespace
	Expect(k8s.Get(ctx, client.ObjectKey{Name: namespace}, &ns)).To(Succeed())
	Expect(ns.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))

	var d appsv1.Deployment
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: deployment}, &d)).To(Succeed())
	c := d.Spec.Template.Spec.Containers[0]
	Expect(c.Image).To(Equal(image))
	Expect(c.LivenessProbe).NotTo(BeNil(), "liveness probe")
	Expect(c.ReadinessProbe).NotTo(BeNil(), "readiness probe")
	sa := d.Spec.Template.Spec.ServiceAccountName
	Expect(sa).NotTo(BeEmpty())

	pods := func(g Gomega) []corev1.Pod {
		var list corev1.PodList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(namespace),
			client.MatchingLabels(d.Spec.Selector.MatchLabels))).To(Succeed())
		return list.Items
	}
	healthy := func(g Gomega) {
		ps := pods(g)
		g.Expect(ps).To(HaveLen(int(*d.Spec.Replicas)))
		for _, p := range ps {
			g.Expect(p.Spec.ServiceAccountName).To(Equal(sa))
			g.Expect(p.Status.ContainerStatuses).NotTo(BeEmpty())
			for _, s := range p.Status.ContainerStatuses {
				g.Expect(s.Ready).To(BeTrue(), "pod %s ready", p.Name)
				g.Expect(s.RestartCount).To(BeZero(), "pod %s restarts", p.Name)
			}
		}
	}
	Eventually(healthy).WithContext(ctx).Should(Succeed())
	// Long enough for a failing liveness probe to restart the container.
	Consistently(healthy).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(2 * time.Second).Should(Succeed())

	Expect(bindingsOf(ctx, namespace, sa)).To(ConsistOf(bindings), "the bindings that name ServiceAccount %s/%s", namespace, sa)
}

// bindingsOf names every RoleBinding and ClusterRoleBinding whose subjects
// include the ServiceAccount, as Kind/namespace/name.
func bindingsOf(ctx context.Context, namespace, sa string) []string {
	GinkgoHelper()
	names := func(subjects []rbacv1.Subject) bool {
		return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && s.Namespace == namespace
		})
	}
	var out []string
	var crbs rbacv1.ClusterRoleBindingList
	Expect(k8s.List(ctx, &crbs)).To(Succeed())
	for _, b := range crbs.Items {
		if names(b.Subjects) {
			out = append(out, "ClusterRoleBinding/"+b.Name)
		}
	}
	var rbs rbacv1.RoleBindingList
	Expect(k8s.List(ctx, &rbs)).To(Succeed())
	for _, b := range rbs.Items {
		if names(b.Subjects) {
			out = append(out, fmt.Sprintf("RoleBinding/%s/%s", b.Namespace, b.Name))
		}
	}
	return out
}

// may reports whether the ServiceAccount may verb resource (of this
// project's API group) in namespace, as the API server's authorizer answers.
func may(ctx context.Context, namespace, sa, verb, resource string) bool {
	GinkgoHelper()
	r := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + namespace + ":" + sa,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: "default", Verb: verb, Group: "evaluation.eval-operator.dev", Resource: resource,
		},
	}}
	Expect(k8s.Create(ctx, r)).To(Succeed())
	return r.Status.Allowed
}

// sourceAt extracts the repository as it was at commit into a temporary
// directory. It skips the spec when the clone lacks the commit (a shallow
// clone).
func sourceAt(ctx context.Context, commit string) string {
	GinkgoHelper()
	if _, _, err := framework.Run(ctx, nil, "git", "cat-file", "-e", commit+"^{commit}"); err != nil {
		Skip("commit " + commit + " is not in this clone, as in a shallow clone: `git fetch --unshallow` to run this")
	}
	dir := GinkgoT().TempDir()
	run(ctx, nil, "sh", "-c", "git archive "+commit+" | tar -x -C "+dir)
	return dir
}

// importManager builds the manager of the source tree src (an earlier
// release, from sourceAt) and imports it into the node as image ref: the
// binary alone, as /manager, running as nonroot.
func importManager(ctx context.Context, src, ref string) {
	GinkgoHelper()
	importBinary(ctx, src, "./cmd", "manager", ref)
}

// importBinary builds the command pkg of the source tree src and imports it
// into the node as image ref: the binary alone, as /<name>, its entrypoint,
// running as nonroot.
func importBinary(ctx context.Context, src, pkg, name, ref string) {
	GinkgoHelper()
	out := GinkgoT().TempDir()
	run(ctx, nil, "env", "CGO_ENABLED=0", "go", "-C", src, "build", "-trimpath", "-ldflags=-s -w",
		"-o", filepath.Join(out, name), pkg)
	tarball := filepath.Join(out, "image.tar")
	run(ctx, nil, "go", "-C", "hack/image", "run", ".", "binary", "--ref="+ref,
		"--binary="+filepath.Join(out, name), "--layout="+filepath.Join(out, "oci"), "--tarball="+tarball)
	ctr(ctx, "images", "import", tarball)
}
