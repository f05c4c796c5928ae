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
	"bytes"
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

// stopGrace is how long a manager gets to shut down when its spec ends.
const stopGrace = 10 * time.Second

// startManager runs the manager binary with args until the spec ends, and
// waits until it is ready. Its output goes to GinkgoWriter, each line behind
// name. Metrics are off, so replicas do not compete for a port.
func startManager(ctx context.Context, name string, args ...string) *framework.Manager {
	GinkgoHelper()
	return startManagerWithEnv(ctx, name, nil, args...)
}

// startManagerWithEnv is startManager with env ("NAME=value") added to the
// manager's environment, as the chart's extraEnv adds it to the container's.
func startManagerWithEnv(ctx context.Context, name string, env []string, args ...string) *framework.Manager {
	GinkgoHelper()
	return startManagerOn(ctx, controlPlane, name, env, args...)
}

// startManagerOn is startManagerWithEnv on another control plane, cp.
func startManagerOn(ctx context.Context, cp *framework.ControlPlane, name string, env []string, args ...string) *framework.Manager {
	GinkgoHelper()
	probeAddr, err := framework.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	m, err := framework.StartManagerWithEnv(managerBinary, cp.Kubeconfig, probeAddr, env, &prefixed{name: name},
		append([]string{"--metrics-bind-address=0"}, args...)...)
	Expect(err).NotTo(HaveOccurred())
	// One killed after stopGrace has stopped all the same; its log shows why.
	DeferCleanup(func() { _ = m.Stop(stopGrace, nil) })
	Expect(m.WaitReady(ctx)).To(Succeed())
	return m
}

// prefixed writes each line of a process's output to GinkgoWriter behind
// the process's name, so the logs of two replicas can be told apart. The
// process's stdout and stderr share it; os/exec then writes from one
// goroutine at a time.
type prefixed struct {
	name    string
	partial []byte
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	for {
		line, rest, ok := bytes.Cut(p.partial, []byte("\n"))
		if !ok {
			return len(b), nil
		}
		fmt.Fprintf(GinkgoWriter, "[%s] %s\n", p.name, line)
		p.partial = rest
	}
}

// newNamespace creates a namespace for one spec. The control plane has no
// namespace controller, so it is never deleted; each spec uses its own. Every
// manager watches all namespaces, so what a spec leaves unfinished would be
// taken up by the next spec's managers against the next spec's service: when
// the spec ends, its objects go, finalizers stripped, so nothing of it is
// left to reconcile.
func newNamespace(ctx context.Context, name string) string {
	GinkgoHelper()
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	DeferCleanup(removeAll, name)
	return name
}

// removeAll deletes every object of this API in namespace, without waiting
// for a manager to finalize them.
func removeAll(ctx context.Context, namespace string) {
	removeAllIn(ctx, k8s, namespace)
}

// removeAllIn is removeAll in the cluster of c.
func removeAllIn(ctx context.Context, c client.Client, namespace string) {
	for _, kind := range []string{"Metric", "TestsetDeletion", "TestcaseDeletion"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind + "List"))
		Expect(c.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		for i := range list.Items {
			obj := &list.Items[i]
			unfinalized := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
			Expect(client.IgnoreNotFound(c.Patch(ctx, obj, unfinalized))).To(Succeed())
			Expect(client.IgnoreNotFound(c.Delete(ctx, obj))).To(Succeed())
		}
	}
}

// createKeySecret creates a Secret holding key under the apiKey data key;
// labelled, the REST server accepts the key for the Secret's namespace.
func createKeySecret(ctx context.Context, namespace, name, key string, labelled bool) {
	GinkgoHelper()
	s := framework.KeySecret(namespace, name, key)
	if !labelled {
		s.Labels = nil
	}
	Expect(k8s.Create(ctx, s)).To(Succeed())
}

// kstatus fetches an object and computes its status the way Flux and
// `kubectl wait` do (kstatus). A new object is InProgress from the CRD's
// default status until the operator acts on it.
func kstatus(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (status.Status, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := k8s.Get(ctx, key, u); err != nil {
		return "", err
	}
	r, err := status.Compute(u)
	if err != nil {
		return "", err
	}
	return r.Status, nil
}

// kstatusOf returns a function for Eventually that polls an object's kstatus.
func kstatusOf(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) func() (status.Status, error) {
	return func() (status.Status, error) { return kstatus(ctx, gvk, key) }
}
