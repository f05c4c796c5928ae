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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// defaultService makes the EvaluationService named default of ns, pointing at url.
func defaultService(ns string, conn v1alpha1.ServiceConnection) {
	GinkgoHelper()
	Expect(k8s.Create(rootCtx, namespacedService(ns, v1alpha1.DefaultServiceName, conn))).To(Succeed())
}

// clusterDefault makes the ClusterEvaluationService named default, removed
// with its finalizer when the test ends: it would serve every later test.
func clusterDefault(url string) *v1alpha1.ClusterEvaluationService {
	GinkgoHelper()
	svc := &v1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DefaultServiceName},
		Spec: v1alpha1.ClusterEvaluationServiceSpec{ServiceConnection: v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL(url)}}}
	Expect(k8s.Create(rootCtx, svc)).To(Succeed())
	DeferCleanup(func() { forceDelete(svc) })
	return svc
}

// forceDelete deletes obj without waiting for its finalizers.
func forceDelete(obj client.Object) {
	GinkgoHelper()
	// Deleted first: no finalizer can be added to an object being deleted.
	Expect(client.IgnoreNotFound(k8s.Delete(rootCtx, obj))).To(Succeed())
	Eventually(func() error {
		if err := k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		obj.SetFinalizers(nil)
		return client.IgnoreNotFound(k8s.Update(rootCtx, obj))
	}).Should(Succeed())
	Eventually(gone(obj)).Should(BeTrue())
}

func at(up *upstream) v1alpha1.ServiceConnection {
	return v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL(up.URL())}
}

func stalledReason(obj client.Object) func(Gomega) string {
	return func(g Gomega) string {
		g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		c := meta.FindStatusCondition(*obj.(v1alpha1.Object).GetConditions(), v1alpha1.ConditionStalled)
		if c == nil {
			return ""
		}
		return c.Reason
	}
}

var _ = Describe("Connections", func() {
	It("serves two namespaces from two services and keeps a sandbox standalone, none through the flags", func() {
		nsA, flags := newFixture()
		a := newUpstream(evalapitest.WithIDPrefix("met_a_"))
		b := newUpstream(evalapitest.WithIDPrefix("met_b_"))
		nsB, nsC := newNamespace(), newNamespace()
		for _, ns := range []string{nsB, nsC} {
			Expect(k8s.Create(rootCtx, apiKeySecret(ns, testKey))).To(Succeed())
		}
		defaultService(nsA, at(a))
		defaultService(nsB, at(b))
		defaultService(nsC, v1alpha1.ServiceConnection{Standalone: &v1alpha1.StandaloneService{}})
		opts := flags.opts
		opts.namespaces = []string{nsA, nsB, nsC}
		opts.AllowPrivateServiceAddresses = true // the fakes listen on loopback
		startManager(opts)

		ms := map[string]*v1alpha1.Metric{}
		for _, ns := range []string{nsA, nsB, nsC} {
			ms[ns] = humanBoolean(ns, "m")
			Expect(k8s.Create(rootCtx, ms[ns])).To(Succeed())
		}
		for _, m := range ms {
			Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
			Expect(m.Status.Service).To(Equal("EvaluationService/default"))
		}
		Expect(ms[nsA].Status.ID).To(HavePrefix("met_a_"))
		Expect(ms[nsB].Status.ID).To(HavePrefix("met_b_"))
		Expect(ms[nsC].Status.ID).To(HavePrefix("met_"))
		Expect(ms[nsC].Annotations).To(HaveKeyWithValue(v1alpha1.ServiceAnnotation, remote.Standalone))
		Expect(ms[nsA].Annotations).To(HaveKeyWithValue(v1alpha1.ServiceAnnotation, remote.NormalizeURL(a.URL())))
		Expect(a.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
		Expect(b.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
		Expect(allCalls(flags)).To(BeZero(), "nothing goes through the flags' service")

		svc := &v1alpha1.EvaluationService{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(rootCtx, client.ObjectKey{Namespace: nsA, Name: "default"}, svc)).To(Succeed())
			g.Expect(svc.Status.Users).To(BeEquivalentTo(1))
			g.Expect(svc.Finalizers).To(ContainElement(v1alpha1.ServiceFinalizer))
		}).Should(Succeed())
	})

	It("keeps a namespaced service off the cluster's own network, and lets the administrator's through", func() {
		ns, up := newFixture()
		defaultService(ns, at(up))
		startManager(up.opts)
		m := humanBoolean(ns, "m")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonServiceNotAllowed),
			HaveField("Message", ContainSubstring("refusing to connect to a loopback")),
			HaveField("Message", ContainSubstring("--allow-private-service-addresses"))))
		Expect(meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionStalled)).
			To(HaveField("Status", metav1.ConditionTrue), "a person must act: no retry with backoff")
		Expect(allCalls(up)).To(BeZero(), "127.0.0.1 was never dialled")

		// A service no remote Metric belongs to is not held.
		clusterDefault(up.URL())
		Expect(k8s.Delete(rootCtx, &v1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}})).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(m.Status.Service).To(Equal("ClusterEvaluationService/default"))
	})

	It("keeps namespaced services to the hosts the administrator allows: no probe, no call elsewhere", func() {
		ns, up := newFixture()
		svc := namespacedService(ns, v1alpha1.DefaultServiceName, at(up))
		Expect(k8s.Create(rootCtx, svc)).To(Succeed())
		opts := up.opts
		opts.AllowPrivateServiceAddresses = true
		opts.NamespacedServiceHosts = []string{"api.example.com", "*.eval.example.com"}
		startManager(opts)
		m := humanBoolean(ns, "m")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonRejected))
		Expect(stalledMessage(m)).To(ContainSubstring("--namespaced-service-hosts"))
		Eventually(serviceReady(svc)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected),
			HaveField("Message", ContainSubstring("--namespaced-service-hosts"))))
		Expect(allCalls(up)).To(BeZero())
		Expect(up.Calls(evalapitest.OpListProjects)).To(BeZero(), "the namespace's key never went to the host")
	})

	It("moves from --api-url to a ClusterEvaluationService with the same URL without a re-create, and stops on another URL", func() {
		ns, up := newFixture()
		other := newUpstream()
		startManager(up.opts)
		m := humanBoolean(ns, "m")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(m.Status.Service).To(Equal(v1alpha1.ResolvedServiceFlags))

		// A Metric created before the record existed gets it on the next reconcile.
		setAnnotation(m, v1alpha1.ServiceAnnotation, nil)
		touchSecret(ns, "resync")
		Eventually(func(g Gomega) map[string]string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return m.Annotations
		}).Should(HaveKeyWithValue(v1alpha1.ServiceAnnotation, remote.NormalizeURL(up.URL())))

		svc := clusterDefault(up.URL() + "/")
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return m.Status.Service
		}).Should(Equal("ClusterEvaluationService/default"))
		Consistently(readyCondition(m), time.Second).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(1), "the same URL is the same service: nothing re-created")

		setClusterServiceURL(svc, other.URL())
		Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonServiceChanged))
		Expect(meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionStalled).Message).To(
			ContainSubstring("belongs to the service at " + remote.NormalizeURL(up.URL())))
		Expect(allCalls(other)).To(BeZero())

		setClusterServiceURL(svc, up.URL())
		Eventually(stalledReason(m)).Should(BeEmpty())
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
	})

	It("waits for a missing service, refuses a cluster service to a namespace it does not allow", func() {
		ns, up := newFixture()
		opts := up.opts
		opts.AllowPrivateServiceAddresses = true
		startManager(opts)
		m := humanBoolean(ns, "m")
		m.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindEvaluationService, Name: "later"}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonServiceNotFound))
		Expect(m.Status.Service).To(Equal("EvaluationService/later"))

		Expect(k8s.Create(rootCtx, namespacedService(ns, "later", at(up)))).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))

		restricted := &v1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{GenerateName: "restricted-"},
			Spec: v1alpha1.ClusterEvaluationServiceSpec{Namespaces: []string{"someone-else"}, ServiceConnection: at(up)}}
		Expect(k8s.Create(rootCtx, restricted)).To(Succeed())
		DeferCleanup(func() { forceDelete(restricted) })
		d := testsetDeletion(ns, "d", "ts1")
		d.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: restricted.Name}
		Expect(k8s.Create(rootCtx, d)).To(Succeed())
		Eventually(stalledReason(d)).Should(Equal(v1alpha1.ReasonServiceNotAllowed))
		Expect(up.Calls(evalapitest.OpDeleteTestset)).To(BeZero())
	})

	It("re-tries the objects of a service when its key Secret is rotated", func() {
		ns, up := newFixture()
		opts := up.opts
		opts.AllowPrivateServiceAddresses = true
		startManager(opts)
		Expect(k8s.Create(rootCtx, namedKeySecret(ns, "service-key", rotatedKey))).To(Succeed())
		svc := namespacedService(ns, v1alpha1.DefaultServiceName, at(up))
		svc.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "service-key"}
		Expect(k8s.Create(rootCtx, svc)).To(Succeed())
		m := humanBoolean(ns, "m")
		m.Spec.APIKeySecretRef = nil // the service's key
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonUnauthorized), "the fake knows only testKey")

		// A 401 waits five minutes unless the key changes: the Secret watch brings it back at once.
		s := namedKeySecret(ns, "service-key", testKey)
		Expect(k8s.Update(rootCtx, s)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
	})

	It("keeps a service while objects use it, and lets a Metric whose service is gone go only as Orphan", func() {
		ns, up := newFixture()
		opts := up.opts
		opts.AllowPrivateServiceAddresses = true
		startManager(opts)
		svc := namespacedService(ns, "own", at(up))
		Expect(k8s.Create(rootCtx, svc)).To(Succeed())
		m := humanBoolean(ns, "m")
		m.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindEvaluationService, Name: "own"}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		// The finalizer follows the Metric's pending mark by one reconcile of the service.
		Eventually(func(g Gomega) []string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
			return svc.Finalizers
		}).Should(ContainElement(v1alpha1.ServiceFinalizer))

		Expect(k8s.Delete(rootCtx, svc)).To(Succeed())
		Eventually(eventReasons(ns, svc.Name, "Warning")).Should(ContainElement(v1alpha1.EventInUse))
		Consistently(gone(svc), time.Second).Should(BeFalse(), "in use: kept")
		Consistently(readyCondition(m), time.Second).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))

		// Forced away, the Metric's deletion cannot reach the remote Metric.
		forceDelete(svc)
		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(func(g Gomega) *metav1.Condition {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionStalled)
		}).Should(And(Not(BeNil()), HaveField("Reason", v1alpha1.ReasonServiceNotFound),
			HaveField("Message", ContainSubstring("set spec.deletionPolicy to Orphan"))))
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(BeZero())
		editSpec(m, func(s *v1alpha1.MetricSpec) { s.DeletionPolicy = v1alpha1.DeletionPolicyOrphan })
		Eventually(gone(m)).Should(BeTrue())
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(BeZero())
	})
})

// setClusterServiceURL points svc at url, as a person's edit would: read
// and written again when the manager wrote it meanwhile (its finalizer,
// its status).
func setClusterServiceURL(svc *v1alpha1.ClusterEvaluationService, url string) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(rootCtx, client.ObjectKeyFromObject(svc), svc); err != nil {
			return err
		}
		svc.Spec.URL = v1alpha1.ServiceURL(url)
		return k8s.Update(rootCtx, svc)
	})).To(Succeed())
}
