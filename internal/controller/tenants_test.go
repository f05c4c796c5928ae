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
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// stalledMessage fetches obj and returns its Stalled condition's message.
func stalledMessage(obj client.Object) string {
	GinkgoHelper()
	Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	c := meta.FindStatusCondition(*obj.(v1alpha1.Object).GetConditions(), v1alpha1.ConditionStalled)
	Expect(c).NotTo(BeNil())
	return c.Message
}

// sharedTenants starts a manager for two namespaces allowed by one
// ClusterEvaluationService, shared, whose own key (in a third namespace) is
// the only one: both are one identity at the service.
func sharedTenants() (teamA, teamB string, up *upstream, shared *v1alpha1.ClusterEvaluationService) {
	GinkgoHelper()
	admin := newNamespace()
	Expect(k8s.Create(rootCtx, namedKeySecret(admin, "admin-key", testKey))).To(Succeed())
	teamA, teamB = newNamespace(), newNamespace()
	up = newUpstream(evalapitest.WithIDPrefix("met_" + admin + "_"))
	shared = &v1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{GenerateName: "shared-all-"},
		Spec: v1alpha1.ClusterEvaluationServiceSpec{ServiceConnection: at(up), Namespaces: []string{teamA, teamB},
			APIKeySecretRef: &v1alpha1.NamespacedSecretKeySelector{Namespace: admin,
				SecretKeySelector: v1alpha1.SecretKeySelector{Name: "admin-key"}}}}
	Expect(k8s.Create(rootCtx, shared)).To(Succeed())
	DeferCleanup(func() { forceDelete(shared) })
	opts := up.opts
	opts.namespaces = []string{admin, teamA, teamB}
	startManager(opts)
	return teamA, teamB, up, shared
}

// With one cluster service's key, every namespace it allows is one identity
// at the service: the operator alone keeps them apart.
var _ = Describe("Tenants of one ClusterEvaluationService with a shared key", func() {
	var (
		teamA, teamB string
		up           *upstream
		shared       *v1alpha1.ClusterEvaluationService
	)
	BeforeEach(func() { teamA, teamB, up, shared = sharedTenants() })

	// onShared is a Metric of ns on the shared service, with its key.
	onShared := func(ns, name string) *v1alpha1.Metric {
		m := humanBoolean(ns, name)
		m.Spec.APIKeySecretRef = nil
		m.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: shared.Name}
		return m
	}
	// outside creates a Metric in the service directly, as the admin's web UI would.
	outside := func(name string) evalapi.Metric {
		GinkgoHelper()
		got, err := up.opts.Service.CreateMetric(rootCtx, testKey, "proj-1",
			evalapi.MetricRequest{Name: name, EvalType: "human", OutputType: "boolean"})
		Expect(err).NotTo(HaveOccurred())
		return got
	}

	It("never hands the shared key to a namespace's executor Pod: the run stops before it is created", func() {
		e := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: "nightly"},
			Spec: v1alpha1.EvaluationRunSpec{ProjectID: "proj-1", MetricIDs: []v1alpha1.ResourceID{"met_1"},
				ServiceRef: &v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: shared.Name},
				Executor: &v1alpha1.Executor{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "system", Image: "example.com/system:1"}}}}}}}
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		Eventually(stalledReason(e)).Should(Equal(v1alpha1.ReasonExecutorKeyUnavailable))
		Expect(stalledMessage(e)).To(ContainSubstring("set spec.apiKeySecretRef to a Secret of this namespace"))
		Expect(up.Calls(evalapitest.OpCreateRun)).To(BeZero())
		var jobs batchv1.JobList
		Expect(k8s.List(rootCtx, &jobs, client.InNamespace(teamA))).To(Succeed())
		Expect(jobs.Items).To(BeEmpty())
	})

	It("never lets one namespace read, change or delete another's remote Metric by its id", func() {
		bob := onShared(teamB, "bob")
		id := readyMetric(bob, v1alpha1.ReasonCreated)

		alice := onShared(teamA, "alice")
		alice.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: id}
		alice.Spec.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementObserve}
		Expect(k8s.Create(rootCtx, alice)).To(Succeed())
		Eventually(stalledReason(alice)).Should(Equal(v1alpha1.ReasonMetricIDClaimed))
		Expect(stalledMessage(alice)).To(And(ContainSubstring("another object of the cluster"),
			Not(ContainSubstring(bob.Name)), Not(ContainSubstring(teamB))), "the holder is not alice's to see")
		Expect(alice.Status.Description).To(BeNil())

		editSpec(alice, func(s *v1alpha1.MetricSpec) {
			s.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementAll}
			s.Name = "stolen"
		})
		Eventually(reconciles(alice, v1alpha1.ReasonMetricIDClaimed)).Should(BeNumerically(">=", 2))
		Expect(k8s.Delete(rootCtx, alice)).To(Succeed())
		Eventually(gone(alice)).Should(BeTrue())

		Expect(up.Calls(evalapitest.OpGetMetric)).To(BeZero(), "nothing read for alice")
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(BeZero(), "nothing changed for alice")
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(BeZero(), "nothing deleted for alice")
		Expect(remoteOf(up, id).Name).To(Equal("m"), "bob's remote Metric is as bob made it")
		Expect(readyCondition(bob)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
	})

	It("refuses adoption under the shared key until the service allows it; a namespace's own key may adopt", func() {
		byAnnotation, byName := outside("made in the UI"), outside("by name")
		alice := onShared(teamA, "alice")
		alice.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: byAnnotation.ID}
		Expect(k8s.Create(rootCtx, alice)).To(Succeed())
		carol := onShared(teamA, "carol")
		carol.Spec.Name = "by name"
		carol.Spec.AdoptionPolicy = v1alpha1.AdoptionByName
		carol.Spec.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementObserve}
		Expect(k8s.Create(rootCtx, carol)).To(Succeed())
		for _, m := range []*v1alpha1.Metric{alice, carol} {
			Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonAdoptionNotAllowed))
			Expect(stalledMessage(m)).To(And(ContainSubstring("ClusterEvaluationService/"+shared.Name+"'s key is shared"),
				ContainSubstring("spec.adoption")))
		}
		Expect(up.Calls(evalapitest.OpGetMetric)).To(BeZero(), "nothing read under the shared key")
		Expect(carol.Annotations).NotTo(HaveKey(v1alpha1.MetricIDAnnotation))

		// A namespace's own key is its own identity at the service.
		Expect(k8s.Create(rootCtx, apiKeySecret(teamB, testKey))).To(Succeed())
		own := onShared(teamB, "own")
		own.Spec.APIKeySecretRef = ref()
		own.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: outside("own key").ID}
		readyMetric(own, v1alpha1.ReasonAdopted)

		// The administrator trusts every allowed namespace.
		Expect(k8s.Patch(rootCtx, shared, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"adoption":"Allowed"}}`)))).To(Succeed())
		Eventually(readyCondition(alice)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonAdopted))
		Expect(alice.Status.ID).To(Equal(byAnnotation.ID))
		Eventually(readyCondition(carol)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonObserved))
		Expect(carol.Status.ID).To(Equal(byName.ID))
	})

	It("refuses a Testset's adoption under the shared key in the words a Metric's refusal uses", func() {
		remoteSet, err := up.opts.Service.CreateTestset(rootCtx, testKey, "proj-1", evalapi.TestsetRequest{Name: "made in the UI",
			JSONSchema:   json.RawMessage(`{"type":"object"}`),
			FieldMapping: evalapi.FieldMapping{Inputs: []string{"question"}, Expected: []string{"answer"}, Metadata: []string{}}})
		Expect(err).NotTo(HaveOccurred())
		t := newTestset(teamA, "adopting", inline(`{"id":"a","answer":"1"}`))
		t.Spec.APIKeySecretRef = nil
		t.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: shared.Name}
		t.Annotations = map[string]string{v1alpha1.TestsetIDAnnotation: remoteSet.ID}
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		m := onShared(teamA, "adopting")
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: outside("made in the UI").ID}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())

		Eventually(stalledReason(t)).Should(Equal(v1alpha1.ReasonAdoptionNotAllowed))
		Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonAdoptionNotAllowed))
		why := "ClusterEvaluationService/" + shared.Name + "'s key is shared by every namespace it allows, so which " +
			"namespace a remote id belongs to cannot be told, and its spec.adoption does not allow adoption"
		Expect(stalledMessage(t)).To(ContainSubstring(why))
		Expect(stalledMessage(m)).To(ContainSubstring(why))
	})

	It("never deletes an adopted id it could not read: deleting the object orphans it", func() {
		Expect(k8s.Create(rootCtx, apiKeySecret(teamA, testKey))).To(Succeed())
		m := onShared(teamA, "unread")
		m.Spec.APIKeySecretRef = ref() // its own key: it may adopt
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: "met_elsewhere"}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonRemoteNotFound))
		Expect(m.Finalizers).To(ContainElement(v1alpha1.MetricFinalizer))

		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(BeZero())
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(BeZero())
		Eventually(eventReasons(teamA, m.Name, "Warning")).Should(ContainElement(v1alpha1.EventOrphaned))
	})

	It("keeps a namespace the service does not allow from pinning it, and serves it once allowed", func() {
		outsider := teamB
		Expect(k8s.Create(rootCtx, apiKeySecret(outsider, testKey))).To(Succeed())
		restricted := &v1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{GenerateName: "restricted-"},
			Spec: v1alpha1.ClusterEvaluationServiceSpec{ServiceConnection: at(up), Namespaces: []string{teamA}}}
		Expect(k8s.Create(rootCtx, restricted)).To(Succeed())
		DeferCleanup(func() { forceDelete(restricted) })

		m := humanBoolean(outsider, "pin")
		m.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: restricted.Name}
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: "met_forged"}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonServiceNotAllowed))
		Expect(m.Status.Service).To(BeEmpty(), "a service that refused the namespace is not the one it resolved to")
		Expect(m.Finalizers).To(BeEmpty())
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(restricted), restricted)).To(Succeed())
			g.Expect(restricted.Status.Users).To(BeZero())
			g.Expect(restricted.Finalizers).NotTo(ContainElement(v1alpha1.ServiceFinalizer))
		}, time.Second).Should(Succeed())

		// Allowed later, the namespace's Metric tries again at once.
		Expect(k8s.Patch(rootCtx, restricted, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"namespaces":["`+teamA+`","`+outsider+`"]}}`)))).To(Succeed())
		Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonRemoteNotFound))
		Expect(m.Status.Service).To(Equal("ClusterEvaluationService/" + restricted.Name))

		// A service no remote Metric of its own belongs to goes at once.
		Expect(k8s.Delete(rootCtx, restricted)).To(Succeed())
		Eventually(gone(restricted)).Should(BeTrue())
		Expect(allCalls(up)).To(Equal(1), "the one read of the annotated id, allowed")
	})
})

var _ = Describe("A namespace that resolved to the wrong service by mistake", func() {
	It("goes back to the cluster default once the mistaken service is deleted: the edit reaches it, nothing the other", func() {
		ns, a := newFixture()
		b := newUpstream()
		clusterDefault(a.URL())
		opts := a.opts
		opts.AllowPrivateServiceAddresses = true // the fakes listen on loopback
		startManager(opts)
		m := humanBoolean(ns, "m")
		readyMetric(m, v1alpha1.ReasonCreated)
		Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.ServiceAnnotation, remote.NormalizeURL(a.URL())))

		mistake := namespacedService(ns, v1alpha1.DefaultServiceName, at(b))
		Expect(k8s.Create(rootCtx, mistake)).To(Succeed())
		Eventually(func() error { // the Metric re-resolves to the new service meanwhile
			if err := k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m); err != nil {
				return err
			}
			m.Spec.Guidelines = ptr.To[v1alpha1.Text]("edited")
			return k8s.Update(rootCtx, m)
		}).Should(Succeed())
		Eventually(stalledReason(m)).Should(Equal(v1alpha1.ReasonServiceChanged))

		Expect(k8s.Delete(rootCtx, mistake)).To(Succeed())
		Eventually(gone(mistake)).Should(BeTrue(), "no remote id belongs to it: nothing holds it")
		updatedAtGeneration(m)
		Expect(m.Status.Service).To(Equal("ClusterEvaluationService/default"))
		Expect(a.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
		Expect(remoteOf(a, m.Status.ID).Guidelines).To(Equal("edited"))

		later := humanBoolean(ns, "later")
		readyMetric(later, v1alpha1.ReasonCreated)
		Expect(later.Status.Service).To(Equal("ClusterEvaluationService/default"))
		Expect(allCalls(b)).To(BeZero(), "nothing was ever sent to the mistaken service")
	})

	It("keeps a deleted default that still holds remote Metrics from capturing new ones", func() {
		ns, a := newFixture()
		b := newUpstream()
		clusterDefault(a.URL())
		opts := a.opts
		opts.AllowPrivateServiceAddresses = true
		startManager(opts)
		own := namespacedService(ns, v1alpha1.DefaultServiceName, at(b))
		Expect(k8s.Create(rootCtx, own)).To(Succeed())
		held := humanBoolean(ns, "held")
		readyMetric(held, v1alpha1.ReasonCreated)
		Expect(held.Status.Service).To(Equal("EvaluationService/default"))
		Eventually(func(g Gomega) []string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(own), own)).To(Succeed())
			return own.Finalizers
		}).Should(ContainElement(v1alpha1.ServiceFinalizer))
		Expect(k8s.Delete(rootCtx, own)).To(Succeed())
		DeferCleanup(func() { forceDelete(own) })

		later := humanBoolean(ns, "later")
		readyMetric(later, v1alpha1.ReasonCreated)
		Expect(later.Status.Service).To(Equal("ClusterEvaluationService/default"))
		Expect(b.Calls(evalapitest.OpCreateMetric)).To(Equal(1), "only the held Metric's own create")
		Expect(readyCondition(held)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
	})
})
