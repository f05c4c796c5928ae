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

package controller_test

import (
	"net/http"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("Metric deletion", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	// readyMetric creates m and waits until it is Ready with a remote id.
	readyMetric := func(m *v1alpha1.Metric) string {
		GinkgoHelper()
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		return m.Status.ID
	}
	remoteExists := func(id string) bool {
		_, ok := up.Metric(id)
		return ok
	}

	It("adds the finalizer in the create-pending write, and deletes the remote Metric with the object", func() {
		versions := watchMetrics(ns)
		startManager(up.opts)
		m := humanBoolean(ns, "doomed")
		id := readyMetric(m)
		Expect(m.Finalizers).To(ConsistOf(v1alpha1.MetricFinalizer))
		Eventually(func(g Gomega) map[string]string {
			ms := versions()
			g.Expect(ms).NotTo(BeEmpty())
			return ms[len(ms)-1].Annotations
		}).Should(HaveKey(v1alpha1.MetricIDAnnotation))
		for _, v := range versions() {
			_, pending := v.Annotations[v1alpha1.CreatePendingAnnotation]
			has := controllerutil.ContainsFinalizer(&v, v1alpha1.MetricFinalizer)
			// One write: the finalizer never comes without the mark or the id.
			Expect(has).To(Equal(pending || v.Annotations[v1alpha1.MetricIDAnnotation] != ""), v.ResourceVersion)
		}

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Expect(remoteExists(id)).To(BeFalse())
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(Equal(1))
		Eventually(eventReasons(ns, m.Name, corev1.EventTypeNormal)).Should(ContainElement(v1alpha1.ReasonCompleted))
	})

	It("completes the deletion when the service answers 404 NOT_FOUND", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "already-gone")
		id := readyMetric(m)
		Expect(up.RemoveMetric(id)).To(BeTrue())

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(Equal(1))
		Eventually(eventReasons(ns, m.Name, corev1.EventTypeNormal)).Should(ContainElement(v1alpha1.ReasonAlreadyDeleted))
	})

	It("waits on a 401 and deletes once the Secret is fixed", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "revoked")
		id := readyMetric(m)
		up.SetKeys(rotatedKey)

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonUnauthorized))
		Expect(meta.IsStatusConditionTrue(m.Status.Conditions, v1alpha1.ConditionStalled)).To(BeTrue())
		Expect(meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady).Message).
			To(ContainSubstring("set spec.deletionPolicy to Orphan"))
		Expect(remoteExists(id)).To(BeTrue())

		Expect(k8s.Update(rootCtx, apiKeySecret(ns, rotatedKey))).To(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Expect(remoteExists(id)).To(BeFalse())
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(Equal(2))
	})

	It("retries 500s with backoff as DeletingRemote and deletes exactly once", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "flaky-delete")
		id := readyMetric(m)
		up.InjectFaults(evalapitest.OpDeleteMetric, evalapitest.Status500, evalapitest.Status500, evalapitest.Status500)

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonDeletingRemote))
		Expect(meta.IsStatusConditionTrue(m.Status.Conditions, v1alpha1.ConditionReconciling)).To(BeTrue())
		Eventually(gone(m)).Should(BeTrue())
		Expect(remoteExists(id)).To(BeFalse())
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(Equal(4))
	})

	It("never completes on a 404 without the service's NOT_FOUND, and lets go once the policy is Orphan", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "wrong-url")
		id := readyMetric(m)
		// Every retry meets the wrong URL too: one that got through before the
		// policy changes would delete the remote Metric.
		for range 100 {
			up.InjectFaults(evalapitest.OpDeleteMetric, evalapitest.GatewayStatus(http.StatusNotFound))
		}

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonDeletingRemote))
		Expect(remoteExists(id)).To(BeTrue())

		// Forcing it: the object goes, the remote Metric stays.
		Eventually(func(g Gomega) error {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			m.Spec.DeletionPolicy = v1alpha1.DeletionPolicyOrphan
			return k8s.Update(rootCtx, m)
		}).Should(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Expect(remoteExists(id)).To(BeTrue())
		Eventually(eventReasons(ns, m.Name, corev1.EventTypeNormal)).Should(ContainElement(v1alpha1.EventOrphaned))
	})

	It("keeps the remote Metric of an Orphan Metric, which carries no finalizer", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "orphan")
		m.Spec.DeletionPolicy = v1alpha1.DeletionPolicyOrphan
		id := readyMetric(m)
		Expect(m.Finalizers).To(BeEmpty())

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		// Nor later: a DELETE sent once the object is gone loses the remote Metric too.
		Consistently(func(g Gomega) {
			g.Expect(up.Calls(evalapitest.OpDeleteMetric)).To(BeZero())
			g.Expect(remoteExists(id)).To(BeTrue())
		}, 2*time.Second).Should(Succeed())
	})

	It("removes the finalizer when the policy changes to Orphan", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "to-orphan")
		id := readyMetric(m)
		Expect(m.Finalizers).To(ConsistOf(v1alpha1.MetricFinalizer))

		editSpec(m, func(s *v1alpha1.MetricSpec) { s.DeletionPolicy = v1alpha1.DeletionPolicyOrphan })
		Eventually(func(g Gomega) []string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return m.Finalizers
		}).Should(BeEmpty())
		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Expect(remoteExists(id)).To(BeTrue())
	})

	It("adds the finalizer to an adopted Metric, and again when it is lost", func() {
		remote, err := up.opts.Service.CreateMetric(rootCtx, testKey, "proj-1",
			convert.RequestFor(&humanBoolean(ns, "x").Spec))
		Expect(err).NotTo(HaveOccurred())
		startManager(up.opts)
		m := humanBoolean(ns, "adopted")
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: remote.ID}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(finalizers(m)).Should(ConsistOf(v1alpha1.MetricFinalizer))

		// A replace without the finalizer.
		patch := client.MergeFrom(m.DeepCopy())
		m.Finalizers = nil
		Expect(k8s.Patch(rootCtx, m, patch)).To(Succeed())
		Eventually(finalizers(m)).Should(ConsistOf(v1alpha1.MetricFinalizer))

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Expect(remoteExists(remote.ID)).To(BeFalse())
	})

	It("lets a Metric whose create was rejected go without a call", func() {
		up.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Status(http.StatusBadRequest))
		startManager(up.opts)
		m := humanBoolean(ns, "never-created")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(BeZero())
	})

	It("holds a Metric deleted while its create outcome is unknown until a person decides", func() {
		up.InjectFaults(evalapitest.OpCreateMetric, evalapitest.CommitThenReset)
		up.opts.Clock = clocktesting.NewFakePassiveClock(testStart)
		startManager(up.opts)
		m := humanBoolean(ns, "unknown")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))
		Expect(m.Finalizers).To(ConsistOf(v1alpha1.MetricFinalizer))

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(func(g Gomega) string {
			c := readyCondition(m)(g)
			g.Expect(c).To(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))
			return c.Message
		}).Should(And(ContainSubstring("may have reached the service"), ContainSubstring("project proj-1"),
			ContainSubstring("deletionPolicy to Orphan")))
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(BeZero())

		// The person finds the Metric and records its id: the deletion runs.
		id := up.CreatedMetrics()[0].Metric.ID
		Eventually(func(g Gomega) error {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			m.Annotations[v1alpha1.MetricIDAnnotation] = id
			return k8s.Update(rootCtx, m)
		}).Should(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Expect(remoteExists(id)).To(BeFalse())
		Expect(up.Creates()).To(Equal(1))
	})

	It("keeps no finalizer in standalone mode, and removes one left from upstream mode", func() {
		startManager(managerOptions{})
		m := newMetric(ns, "local", variants()["human-boolean"].spec)
		m.Finalizers = []string{v1alpha1.MetricFinalizer}
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: "met_from_upstream"}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(finalizers(m)).Should(BeEmpty())
		fresh := newMetric(ns, "fresh", variants()["human-boolean"].spec)
		Expect(k8s.Create(rootCtx, fresh)).To(Succeed())
		Eventually(readyCondition(fresh)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(fresh.Finalizers).To(BeEmpty())
	})

	It("keeps every remote Metric when the Metric CRD is removed", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "cascade")
		id := readyMetric(m)

		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
		crd.SetName("metrics.evaluation.eval-operator.dev")
		DeferCleanup(reinstallMetricCRD, crd)
		Expect(k8s.Delete(rootCtx, crd)).To(Succeed())

		Eventually(gone(m)).Should(BeTrue())
		Expect(remoteExists(id)).To(BeTrue())
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(BeZero())
		Eventually(eventReasons(ns, m.Name, corev1.EventTypeWarning)).Should(ContainElement(v1alpha1.EventOrphaned))
	})
})

// reinstallMetricCRD waits for the removal of the Metric CRD to finish, then
// installs it again for the specs that follow. Metrics that other specs left
// behind with the finalizer, and no running operator, would hold the removal
// forever: their finalizers go, as a person would remove them.
func reinstallMetricCRD(crd *unstructured.Unstructured) {
	Eventually(func(g Gomega) error {
		var left v1alpha1.MetricList
		if err := k8s.List(rootCtx, &left); err == nil {
			for i := range left.Items {
				patch := client.MergeFrom(left.Items[i].DeepCopy())
				left.Items[i].Finalizers = nil
				g.Expect(client.IgnoreNotFound(k8s.Patch(rootCtx, &left.Items[i], patch))).To(Succeed())
			}
		}
		return k8s.Get(rootCtx, client.ObjectKeyFromObject(crd), crd)
	}, "30s").Should(Satisfy(apierrors.IsNotFound), "the Metric CRD is still being removed")
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(framework.RepoRoot(), "config", "crd", "bases", "evaluation.eval-operator.dev_metrics.yaml")},
		ErrorIfPathMissing: true,
		// The Metric CRD's CEL rules take a while to compile on a busy machine.
		MaxTime: time.Minute,
	})
	Expect(err).NotTo(HaveOccurred())
}

// watchMetrics records every version of the Metrics in ns from now on.
func watchMetrics(ns string) func() []v1alpha1.Metric {
	GinkgoHelper()
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: framework.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(rootCtx, &v1alpha1.MetricList{}, client.InNamespace(ns))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	var seen []v1alpha1.Metric
	return func() []v1alpha1.Metric {
		for {
			select {
			case e := <-w.ResultChan():
				if m, ok := e.Object.(*v1alpha1.Metric); ok && e.Type != watch.Error {
					seen = append(seen, *m)
				}
			default:
				return seen
			}
		}
	}
}

func finalizers(m *v1alpha1.Metric) func(Gomega) []string {
	return func(g Gomega) []string {
		g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		return m.Finalizers
	}
}

// gone reports whether obj no longer exists.
func gone(obj client.Object) func() bool {
	return func() bool {
		return apierrors.IsNotFound(k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj))
	}
}
