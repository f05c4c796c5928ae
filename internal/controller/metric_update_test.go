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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

// createMetric creates m and deletes it when the test ends, finalizers and
// all: every later test's manager sees every namespace, and must not find a
// Metric of this test that still calls the service.
func createMetric(m *v1alpha1.Metric) {
	GinkgoHelper()
	Expect(k8s.Create(rootCtx, m)).To(Succeed())
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8s.Delete(rootCtx, m))).To(Succeed())
		Expect(client.IgnoreNotFound(k8s.Patch(rootCtx, m,
			client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
	})
}

// readyMetric creates m and waits until it is Ready, returning its remote id.
func readyMetric(m *v1alpha1.Metric, reason string) string {
	GinkgoHelper()
	createMetric(m)
	Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, reason))
	return m.Status.ID
}

// editSpec applies edit to the stored m, as kubectl apply of a changed file would.
func editSpec(m *v1alpha1.Metric, edit func(*v1alpha1.MetricSpec)) {
	GinkgoHelper()
	editStored(m, func() { edit(&m.Spec) })
}

// editStored applies change to the stored obj and writes it. It is read and
// written again when the manager wrote obj meanwhile, as kubectl edit would be.
func editStored(obj client.Object, change func()) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return k8s.Update(rootCtx, obj)
	})).To(Succeed())
}

// updatedAtGeneration waits until m is Ready, Updated, at its current generation.
func updatedAtGeneration(m *v1alpha1.Metric) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		c := readyCondition(m)(g)
		g.Expect(c).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonUpdated))
		g.Expect(c.ObservedGeneration).To(Equal(m.Generation))
	}).Should(Succeed())
}

// expectStatusOf checks that m's status holds remote's values.
func expectStatusOf(m *v1alpha1.Metric, remote evalapi.Metric) {
	GinkgoHelper()
	Expect(m.Status.ID).To(Equal(remote.ID))
	Expect(m.Status.Description).To(Equal((*v1alpha1.Text)(remote.Description)))
	Expect(m.Status.Guidelines).To(HaveValue(Equal(v1alpha1.Text(remote.Guidelines))))
	Expect(m.Status.Temperature).To(Equal(remote.Temperature))
	Expect(m.Status.PassingThreshold).To(Equal(remote.PassingThreshold))
	Expect(m.Status.EvalModelName).To(Equal(ptr.Deref(remote.EvalModelName, "")))
}

// remoteOf is the Metric the fake service holds under id.
func remoteOf(up *upstream, id string) evalapi.Metric {
	GinkgoHelper()
	remote, ok := up.Metric(id)
	Expect(ok).To(BeTrue(), "the service holds no Metric "+id)
	return remote
}

var _ = Describe("Metric updates", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	It("sends a new generation as one update of the whole desired variant and records the answer", func() {
		startManager(up.opts)
		m := newMetric(ns, "edited", variants()["human-int"].spec)
		m.Spec.APIKeySecretRef = ref()
		m.Spec.Description = ptr.To[v1alpha1.Text]("first")
		m.Spec.PassingThreshold = ptr.To(2.0)
		id := readyMetric(m, v1alpha1.ReasonCreated)

		// Dropping guidelines and passingThreshold from the file resets them
		// to the service's defaults; description becomes null.
		editSpec(m, func(s *v1alpha1.MetricSpec) {
			s.Name = "renamed"
			s.Description, s.Guidelines, s.PassingThreshold = nil, nil, nil
		})
		updatedAtGeneration(m)
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
		Expect(up.Calls(evalapitest.OpGetMetric)).To(BeZero())
		Expect(up.Creates()).To(Equal(1))
		remote := remoteOf(up, id)
		Expect(remote).To(Equal(evalapi.Metric{ID: id, Name: "renamed", EvalType: "human", OutputType: "int", PassingThreshold: ptr.To(4.0)}))
		expectStatusOf(m, remote)
	})

	It("moves a Metric to another variant", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "variant")
		id := readyMetric(m, v1alpha1.ReasonCreated)
		Expect(m.Status.PassingThreshold).To(BeNil())

		editSpec(m, func(s *v1alpha1.MetricSpec) {
			s.EvalType, s.OutputType = v1alpha1.EvalTypeAI, v1alpha1.OutputTypeFloat
			s.PromptTemplate = ptr.To[v1alpha1.Text]("Rate {{outputs.response}}")
		})
		updatedAtGeneration(m)
		remote := remoteOf(up, id)
		Expect(remote.EvalType).To(Equal(evalapi.EvalTypeAI))
		Expect(remote).To(Equal(evalapi.Metric{ID: id, Name: "m", EvalType: "ai", OutputType: "float",
			PromptTemplate: ptr.To("Rate {{outputs.response}}"), EvalModelName: ptr.To("gpt-4o"), Temperature: ptr.To(0.0),
			PassingThreshold: ptr.To(0.9)}))
		Expect(m.Status.EvalModelName).To(Equal("gpt-4o"))
		Expect(m.Status.PassingThreshold).To(HaveValue(Equal(0.9)))
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
	})

	It("costs no call and no write for a label edit or a resync", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "labelled")
		readyMetric(m, v1alpha1.ReasonCreated)
		// Let the reconciles of the operator's own writes settle.
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, time.Second).Should(Equal(1))

		editStored(m, func() {
			m.Labels = map[string]string{"team": "search"}
			m.Annotations["note"] = "hand-written"
		})
		version := m.ResourceVersion
		touchSecret(ns, "resync")

		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			g.Expect(m.ResourceVersion).To(Equal(version))
			g.Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
			g.Expect(up.Calls(evalapitest.OpGetMetric) + up.Calls(evalapitest.OpUpdateMetric)).To(BeZero())
		}, 2*time.Second).Should(Succeed())
	})

	DescribeTable("maps a failed update like any call",
		func(fault evalapitest.Fault, reason string, stalls bool) {
			startManager(up.opts)
			m := humanBoolean(ns, "failing")
			readyMetric(m, v1alpha1.ReasonCreated)
			up.InjectFaults(evalapitest.OpUpdateMetric, fault)
			editSpec(m, func(s *v1alpha1.MetricSpec) { s.Guidelines = ptr.To[v1alpha1.Text]("new") })
			Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, reason))
			Expect(meta.IsStatusConditionTrue(m.Status.Conditions, v1alpha1.ConditionStalled)).To(Equal(stalls))
			if !stalls {
				// Retried with backoff: the update is idempotent, even when its outcome is unknown.
				updatedAtGeneration(m)
				Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(2))
			}
			Expect(up.Creates()).To(Equal(1))
		},
		Entry("401", evalapitest.Status401, v1alpha1.ReasonUnauthorized, true),
		Entry("500", evalapitest.Status500, v1alpha1.ReasonUpstreamUnavailable, false),
		Entry("502 from a gateway", evalapitest.Status502Gateway, v1alpha1.ReasonUpstreamUnavailable, false),
		Entry("429", evalapitest.Status429(""), v1alpha1.ReasonUpstreamUnavailable, false),
	)

	It("is Stalled on a rejected update until the spec changes again", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "rejected-update")
		readyMetric(m, v1alpha1.ReasonCreated)
		up.InjectFaults(evalapitest.OpUpdateMetric, evalapitest.Status(http.StatusBadRequest))
		editSpec(m, func(s *v1alpha1.MetricSpec) { s.Guidelines = ptr.To[v1alpha1.Text]("refused") })
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))

		touchSecret(ns, "again")
		Consistently(func() int { return up.Calls(evalapitest.OpUpdateMetric) }, 2*time.Second).Should(Equal(1))

		editSpec(m, func(s *v1alpha1.MetricSpec) { s.Guidelines = ptr.To[v1alpha1.Text]("accepted") })
		updatedAtGeneration(m)
		Expect(remoteOf(up, m.Status.ID).Guidelines).To(Equal("accepted"))
	})

	It("is Stalled on RemoteNotFound when the remote Metric is gone, and never creates it again", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "gone")
		id := readyMetric(m, v1alpha1.ReasonCreated)
		Expect(up.RemoveMetric(id)).To(BeTrue())

		editSpec(m, func(s *v1alpha1.MetricSpec) { s.Guidelines = ptr.To[v1alpha1.Text]("new") })
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRemoteNotFound))
		Expect(meta.IsStatusConditionTrue(m.Status.Conditions, v1alpha1.ConditionStalled)).To(BeTrue())
		Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, id))
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, time.Second).Should(Equal(1))
	})

	It("updates status from the desired variant at once in standalone mode", func() {
		startManager(managerOptions{})
		m := newMetric(ns, "local", variants()["ai-int"].spec)
		id := readyMetric(m, v1alpha1.ReasonCreated)

		editSpec(m, func(s *v1alpha1.MetricSpec) { s.Temperature, s.PassingThreshold = ptr.To(1.5), nil })
		updatedAtGeneration(m)
		expectStatusOf(m, evalapi.Metric{ID: id, Name: "m", EvalType: "ai", OutputType: "int",
			PromptTemplate: (*string)(variants()["ai-int"].spec.PromptTemplate), EvalModelName: ptr.To("gpt-4o"), Temperature: ptr.To(1.5),
			PassingThreshold: ptr.To(4.0)})
	})
})
