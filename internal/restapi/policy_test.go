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

package restapi

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

var _ = Describe("writes a Metric's managementPolicies forbid", func() {
	var (
		t  tenant
		id string
		m  *evaluationv1alpha1.Metric
	)
	BeforeEach(func() {
		t = newTenant()
		id = createdID(t, "human", "boolean")
		m = metricByID(t, id)
	})

	// restrict sets m's policies as kubectl would, and waits until the
	// server's cache holds them.
	restrict := func(p ...evaluationv1alpha1.ManagementAction) {
		GinkgoHelper()
		base := m.DeepCopy()
		m.Spec.ManagementPolicies = p
		Expect(h.k8s.Patch(context.Background(), m, client.MergeFrom(base))).To(Succeed())
		// Writes sent before the cache holds the policies would be served;
		// each write is sent once, after.
		cached := &evaluationv1alpha1.Metric{}
		Eventually(func() ([]evaluationv1alpha1.ManagementAction, error) {
			err := h.mgr.GetCache().Get(context.Background(), client.ObjectKeyFromObject(m), cached)
			return cached.Spec.ManagementPolicies, err
		}).Should(Equal(p))
	}
	expectRefused := func(send func() reply, action string) {
		GinkgoHelper()
		rep := send()
		Expect(rep.status).To(Equal(http.StatusForbidden), "body: %s", rep.body)
		Expect(rep.header.Get(apierror.ShouldRetryHeader)).To(Equal("false"))
		e := apiErrorOf(rep)
		Expect(e["code"]).To(Equal(apierror.CodeForbidden))
		Expect(e["message"]).To(ContainSubstring("do not allow " + action))
		Expect(e["details"]).To(HaveKeyWithValue("action", action))
	}

	It(`refuses a PATCH and a DELETE of a read-only Metric (["Observe"]) and writes nothing`, func() {
		restrict(evaluationv1alpha1.ManagementObserve)
		generation := m.Generation
		expectRefused(func() reply {
			return patchMetric(t, id, `{"evalType":"human","outputType":"boolean","name":"renamed"}`)
		},
			"Update")
		expectRefused(func() reply { return deleteMetric(t, id) }, "Delete")

		Expect(h.k8s.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		Expect(m.Generation).To(Equal(generation))
		Expect(m.Spec.Name).NotTo(Equal(evaluationv1alpha1.LineText("renamed")))
		Expect(m.DeletionTimestamp).To(BeNil())
	})

	It("serves the writes the policies allow, and keeps the policies through a PATCH", func() {
		restrict(evaluationv1alpha1.ManagementUpdate)
		expectRefused(func() reply { return deleteMetric(t, id) }, "Delete")
		rep := patchMetric(t, id, `{"evalType":"human","outputType":"boolean","name":"renamed"}`)
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(h.k8s.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		Expect(m.Spec.Name).To(Equal(evaluationv1alpha1.LineText("renamed")))
		Expect(m.Spec.ManagementPolicies).To(ConsistOf(evaluationv1alpha1.ManagementUpdate))
	})
})
