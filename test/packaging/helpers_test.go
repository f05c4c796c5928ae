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
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/eval-operator/eval-operator/test/framework"
)

// run runs a command from the repository root and returns its stdout and
// stderr; it fails the spec, showing stderr, if the command fails.
func run(ctx context.Context, stdin []byte, name string, args ...string) (stdout []byte, stderr string) {
	GinkgoHelper()
	stdout, stderr, err := runErr(ctx, stdin, name, args...)
	Expect(err).NotTo(HaveOccurred(), "%s %s\n%s", name, strings.Join(args, " "), stderr)
	return stdout, stderr
}

// runErr runs a command from the repository root that may fail.
func runErr(ctx context.Context, stdin []byte, name string, args ...string) (stdout []byte, stderr string, err error) {
	return framework.Run(ctx, stdin, name, args...)
}

// tool is the command named by the environment variable env (the Makefile
// sets them), else def.
func tool(env, def string) string { return framework.Tool(env, def) }

// kubectl runs kubectl against the test API server.
func kubectl(ctx context.Context, stdin []byte, args ...string) (stdout []byte, stderr string) {
	GinkgoHelper()
	return run(ctx, stdin, tool("KUBECTL", "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

// apply server-side applies manifests as fieldManager, with strict field
// validation, and returns the warnings the API server sent back.
func apply(ctx context.Context, fieldManager string, manifests []byte) (warnings string) {
	GinkgoHelper()
	_, warnings = kubectl(ctx, manifests, "apply", "--server-side", "--validate=strict",
		"--field-manager="+fieldManager, "-f", "-")
	return warnings
}

// waitEstablished waits until the named CRDs serve their kinds.
func waitEstablished(ctx context.Context, crds ...string) {
	GinkgoHelper()
	args := make([]string, 0, 3+len(crds))
	args = append(args, "wait", "--for=condition=Established", "--timeout=60s")
	for _, crd := range crds {
		args = append(args, "customresourcedefinition/"+crd)
	}
	kubectl(ctx, nil, args...)
}

// kustomize renders a kustomization directory with the pinned kustomize
// (bin/kustomize; the Makefile sets KUSTOMIZE).
func kustomize(ctx context.Context, dir string) []byte {
	GinkgoHelper()
	out, _ := run(ctx, nil, tool("KUSTOMIZE", filepath.Join(repoRoot, "bin", "kustomize")), "build", dir)
	return out
}

// helmBin is the helm command. It skips the spec when helm is not installed
// and nothing asked for it; under make, HELM is set and a missing helm fails.
func helmBin() string {
	GinkgoHelper()
	helm := os.Getenv("HELM")
	if helm == "" {
		helm = filepath.Join(repoRoot, "bin", "helm")
		if _, err := os.Stat(helm); err != nil {
			Skip("bin/helm is missing: run `make helm`, or `make test-packaging`, which installs it")
		}
	}
	return helm
}

// helmTemplate renders the chart, CRDs included, with values given as --set
// key=value pairs.
func helmTemplate(ctx context.Context, release, namespace string, values ...string) []byte {
	GinkgoHelper()
	args := withValues([]string{"template", release, filepath.Join(repoRoot, "charts", "eval-operator"),
		"--namespace", namespace, "--include-crds"}, values)
	out, _ := run(ctx, nil, helmBin(), args...)
	return out
}

// withValues appends values to a helm command line as --set key=value pairs.
func withValues(args, values []string) []string {
	for _, v := range values {
		args = append(args, "--set", v)
	}
	return args
}

// helm runs helm against the test API server, which keeps the releases (in
// Secrets) like any cluster.
func helm(ctx context.Context, args ...string) (stdout []byte) {
	GinkgoHelper()
	stdout, _ = run(ctx, nil, helmBin(), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	return stdout
}

// namespace is a Namespace that warns about Pods breaking the restricted Pod
// Security Standard, so that an apply reports a workload that would.
func namespace(name string) []byte {
	return []byte(`apiVersion: v1
kind: Namespace
metadata:
  name: ` + name + `
  labels:
    pod-security.kubernetes.io/warn: restricted
`)
}

// decode splits a multi-document render into objects.
func decode(manifests []byte) []unstructured.Unstructured {
	GinkgoHelper()
	var objs []unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs
		}
		Expect(err).NotTo(HaveOccurred())
		if obj != nil {
			objs = append(objs, unstructured.Unstructured{Object: obj})
		}
	}
}

// ofKind converts the objects of one kind to their Go type.
func ofKind[T any](objs []unstructured.Unstructured, kind string) []T {
	GinkgoHelper()
	var typed []T
	for _, o := range objs {
		if o.GetKind() != kind {
			continue
		}
		var t T
		Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &t)).To(Succeed())
		typed = append(typed, t)
	}
	return typed
}

// kinds lists the kind of every object.
func kinds(objs []unstructured.Unstructured) []string {
	names := make([]string, 0, len(objs))
	for _, o := range objs {
		names = append(names, o.GetKind())
	}
	return names
}

// expectLeastPrivilege checks every Role and ClusterRole: no wildcards, no
// privilege-granting verbs, and Secrets only ever read, never written.
func expectLeastPrivilege(objs []unstructured.Unstructured) {
	GinkgoHelper()
	var rules, secretRules int
	for _, role := range append(ofKind[rbacv1.ClusterRole](objs, "ClusterRole"), roles(objs)...) {
		for _, r := range role.Rules {
			rules++
			where := role.Name + ": " + r.String()
			Expect(r.Verbs).NotTo(ContainElement("*"), where)
			Expect(r.APIGroups).NotTo(ContainElement("*"), where)
			Expect(r.Resources).NotTo(ContainElement("*"), where)
			Expect(r.Verbs).NotTo(ContainElement(BeElementOf("escalate", "bind", "impersonate")), where)
			if slices.Contains(r.Resources, "secrets") {
				secretRules++
				Expect(r.Verbs).To(ConsistOf("get", "list", "watch"), where)
			}
		}
	}
	Expect(rules).NotTo(BeZero(), "no RBAC rules rendered")
	Expect(secretRules).NotTo(BeZero(), "the manager must be able to read Secrets")
}

// roles returns the namespaced Roles as ClusterRoles, which have the same rules.
func roles(objs []unstructured.Unstructured) []rbacv1.ClusterRole {
	namespaced := ofKind[rbacv1.Role](objs, "Role")
	out := make([]rbacv1.ClusterRole, 0, len(namespaced))
	for _, r := range namespaced {
		out = append(out, rbacv1.ClusterRole{ObjectMeta: r.ObjectMeta, Rules: r.Rules})
	}
	return out
}

// manager returns the one manager container of the render.
func manager(objs []unstructured.Unstructured) (corev1.PodSpec, corev1.Container) {
	GinkgoHelper()
	deployments := ofKind[appsv1.Deployment](objs, "Deployment")
	Expect(deployments).To(HaveLen(1))
	pod := deployments[0].Spec.Template.Spec
	Expect(pod.Containers).To(HaveLen(1))
	return pod, pod.Containers[0]
}

// expectRestricted checks that the manager meets the restricted Pod Security
// Standard, with a read-only root filesystem, probes and resource bounds.
func expectRestricted(objs []unstructured.Unstructured) {
	GinkgoHelper()
	pod, c := manager(objs)
	Expect(pod.SecurityContext).NotTo(BeNil())
	Expect(pod.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
	Expect(pod.SecurityContext.SeccompProfile).NotTo(BeNil())
	Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
	sc := c.SecurityContext
	Expect(sc).NotTo(BeNil())
	Expect(sc.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
	Expect(sc.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
	Expect(sc.Capabilities).NotTo(BeNil())
	Expect(sc.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
	Expect(c.LivenessProbe).NotTo(BeNil())
	Expect(c.ReadinessProbe).NotTo(BeNil())
	Expect(c.Resources.Requests).NotTo(BeEmpty())
	Expect(c.Resources.Limits).NotTo(BeEmpty())
}
