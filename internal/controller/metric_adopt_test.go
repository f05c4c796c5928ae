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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var _ = Describe("Metric adoption and durable ids", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	// remoteMetric creates a Metric in the service directly, as the web UI would.
	remoteMetric := func(req evalapi.MetricRequest) evalapi.Metric {
		GinkgoHelper()
		remote, err := up.opts.Service.CreateMetric(rootCtx, testKey, "proj-1", req)
		Expect(err).NotTo(HaveOccurred())
		return remote
	}

	It("reads an adopted Metric from the service and puts the spec in place with one update", func() {
		remote := remoteMetric(evalapi.MetricRequest{Name: "from the UI", EvalType: "human", OutputType: "int",
			Guidelines: ptr.To("edited in the UI"), PassingThreshold: ptr.To(2.0)})
		m := newMetric(ns, "adopted", variants()["human-int"].spec)
		m.Spec.APIKeySecretRef = ref()
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: remote.ID}
		startManager(up.opts)
		readyMetric(m, v1alpha1.ReasonAdopted)

		Expect(up.Calls(evalapitest.OpGetMetric)).To(Equal(1))
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
		Expect(remoteOf(up, remote.ID)).To(Equal(evalapi.Metric{ID: remote.ID, Name: "m", EvalType: "human", OutputType: "int",
			Guidelines: "be kind", PassingThreshold: ptr.To(4.0)}))
		expectStatusOf(m, remoteOf(up, remote.ID))
		Expect(up.Creates()).To(Equal(1), "only the test's own create")
	})

	It("records what the service holds, not the spec's guess, and sends nothing when they agree", func() {
		// The service chose a default the spec leaves unset.
		remote := remoteMetric(evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "float"})
		m := newMetric(ns, "agrees", variants()["human-float"].spec)
		m.Spec.APIKeySecretRef = ref()
		m.Spec.PassingThreshold = nil
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: remote.ID}
		startManager(up.opts)
		readyMetric(m, v1alpha1.ReasonAdopted)

		expectStatusOf(m, remote)
		Expect(up.Calls(evalapitest.OpGetMetric)).To(Equal(1))
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(BeZero())
	})

	It("is Stalled on RemoteNotFound when the adopted id does not exist, and creates nothing", func() {
		m := humanBoolean(ns, "missing")
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: "met_missing"}
		startManager(up.opts)
		createMetric(m)
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRemoteNotFound))
		Eventually(warningEvents(ns, m.Name)).Should(ContainElement(v1alpha1.ReasonRemoteNotFound))
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, time.Second).Should(BeZero())
	})

	It("reads the Metric again when its status was lost in a backup and restore", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "restored")
		id := readyMetric(m, v1alpha1.ReasonCreated)
		up.EditMetric(id, func(r *evalapi.Metric) { r.Description = ptr.To("changed in the UI") })

		// A restore brings metadata back, status not.
		base := m.DeepCopy()
		m.Status = v1alpha1.MetricStatus{}
		Expect(k8s.Status().Patch(rootCtx, m, client.MergeFrom(base))).To(Succeed())
		touchSecret(ns, "restored")

		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonAdopted))
		Expect(m.Status.ID).To(Equal(id))
		Expect(up.Calls(evalapitest.OpGetMetric)).To(Equal(1))
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(1), "the spec wins over the UI edit")
		Expect(remoteOf(up, id).Description).To(BeNil())
		Expect(up.Creates()).To(Equal(1))
	})

	It("never creates again after kubectl replace drops the annotations, across a restart", func() {
		mgr := startManager(up.opts)
		m := humanBoolean(ns, "replaced")
		id := readyMetric(m, v1alpha1.ReasonCreated)

		// kubectl replace, Argo CD Replace=true, Flux force: the same file
		// again, without the operator's annotations; status is a subresource
		// and stays.
		editStored(m, func() { m.Annotations = nil })
		mgr.stop()
		startManager(up.opts)
		touchSecret(ns, "replaced")

		Eventually(func(g Gomega) map[string]string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return m.Annotations
		}).Should(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, id))
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, 2*time.Second).Should(Equal(1))
		Expect(up.Creates()).To(Equal(1))
		Expect(readyCondition(m)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(m.Status.ID).To(Equal(id))
	})
})
