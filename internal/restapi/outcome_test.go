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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// metricWith is a generation-2 ai/int Metric with the given conditions.
func metricWith(conds ...metav1.Condition) *evaluationv1alpha1.Metric {
	m := &evaluationv1alpha1.Metric{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", Generation: 2},
		Spec: evaluationv1alpha1.MetricSpec{
			ProjectID: "p", Name: "m", EvalType: "ai", OutputType: "int", PromptTemplate: ptr.To("p"),
		},
		Status: evaluationv1alpha1.MetricStatus{ID: "met_1", Conditions: conds},
	}
	return m
}

func cond(condType string, status metav1.ConditionStatus, reason string, generation int64) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: "msg " + reason,
		ObservedGeneration: generation}
}

var _ = Describe("Mapping the reconciler's outcome to an answer", func() {
	const ready, stalled = evaluationv1alpha1.ConditionReady, evaluationv1alpha1.ConditionStalled
	t, f := metav1.ConditionTrue, metav1.ConditionFalse

	DescribeTable("judges a Metric by its conditions",
		func(conds []metav1.Condition, want verdict, status int, code string) {
			res, v, _ := judge(createMetric(), metricWith(conds...))
			Expect(v).To(Equal(want))
			if want == pending {
				return
			}
			Expect(res.status).To(Equal(status))
			if code != "" {
				Expect(res.body).To(HaveField("Code", code))
			}
		},
		Entry("no conditions yet", nil, pending, 0, ""),
		Entry("Ready for an older generation",
			[]metav1.Condition{cond(ready, t, evaluationv1alpha1.ReasonCreated, 1)}, pending, 0, ""),
		Entry("Creating", []metav1.Condition{cond(ready, f, evaluationv1alpha1.ReasonCreating, 2)}, pending, 0, ""),
		Entry("upstream unavailable, retrying",
			[]metav1.Condition{cond(ready, f, evaluationv1alpha1.ReasonUpstreamUnavailable, 2)}, pending, 0, ""),
		Entry("a transient SecretNotFound, not stalled",
			[]metav1.Condition{cond(ready, f, evaluationv1alpha1.ReasonSecretNotFound, 2)}, pending, 0, ""),
		Entry("Created", []metav1.Condition{cond(ready, t, evaluationv1alpha1.ReasonCreated, 2)},
			succeeded, http.StatusCreated, ""),
		Entry("Adopted", []metav1.Condition{cond(ready, t, evaluationv1alpha1.ReasonAdopted, 2)},
			succeeded, http.StatusCreated, ""),
		Entry("Rejected", []metav1.Condition{
			cond(ready, f, evaluationv1alpha1.ReasonRejected, 2), cond(stalled, t, evaluationv1alpha1.ReasonRejected, 2),
		}, refused, http.StatusBadRequest, CodeRejected),
		Entry("Unauthorized", []metav1.Condition{
			cond(ready, f, evaluationv1alpha1.ReasonUnauthorized, 2), cond(stalled, t, evaluationv1alpha1.ReasonUnauthorized, 2),
		}, refused, http.StatusUnauthorized, evalapi.CodeUnauthorized),
		Entry("InvalidCredentials", []metav1.Condition{
			cond(ready, f, evaluationv1alpha1.ReasonInvalidCredentials, 2),
			cond(stalled, t, evaluationv1alpha1.ReasonInvalidCredentials, 2),
		}, refused, http.StatusUnauthorized, evalapi.CodeUnauthorized),
		Entry("SecretNotFound, stalled", []metav1.Condition{
			cond(ready, f, evaluationv1alpha1.ReasonSecretNotFound, 2),
			cond(stalled, t, evaluationv1alpha1.ReasonSecretNotFound, 2),
		}, refused, http.StatusUnauthorized, evalapi.CodeUnauthorized),
		Entry("CreateOutcomeUnknown", []metav1.Condition{
			cond(ready, f, evaluationv1alpha1.ReasonCreateOutcomeUnknown, 2),
			cond(stalled, t, evaluationv1alpha1.ReasonCreateOutcomeUnknown, 2),
		}, stuck, http.StatusBadGateway, CodeUpstreamError),
	)

	It("passes the upstream's message on when it rejects a request", func() {
		res, _, _ := judge(createMetric(), metricWith(
			cond(ready, f, evaluationv1alpha1.ReasonRejected, 2), cond(stalled, t, evaluationv1alpha1.ReasonRejected, 2)))
		Expect(res.body).To(HaveField("Message", "msg Rejected"))
	})

	It("answers with the effective values the service returned", func() {
		m := metricWith(cond(ready, t, evaluationv1alpha1.ReasonCreated, 2))
		m.Status.EvalModelName = "served-model"
		m.Status.PassingThreshold = ptr.To(5.0)
		m.Status.Guidelines = ptr.To("from the service")
		res, _, _ := judge(createMetric(), m)
		Expect(res.body).To(Equal(evalapi.Metric{
			ID: "met_1", Name: "m", EvalType: "ai", OutputType: "int", Guidelines: "from the service",
			PromptTemplate: ptr.To("p"), EvalModelName: ptr.To("served-model"), Temperature: ptr.To(0.0),
			PassingThreshold: ptr.To(5.0),
		}))
	})

	Context("with the real reconciler", func() {
		var tn tenant
		BeforeEach(func() { tn = newTenant() })

		create := func(m *evaluationv1alpha1.Metric) client.ObjectKey {
			GinkgoHelper()
			m.Namespace, m.GenerateName = tn.namespace, "direct-"
			Expect(h.k8s.Create(context.Background(), m)).To(Succeed())
			return client.ObjectKeyFromObject(m)
		}

		It("answers 401 to a refused key and deletes the resource, leaving nothing behind", func() {
			m := metricWith()
			m.ObjectMeta = metav1.ObjectMeta{}
			m.Spec.APIKeySecretRef = &evaluationv1alpha1.SecretKeySelector{Name: "missing", Key: "apiKey"}
			key := create(m)
			res := h.server.await(context.Background(), createMetric(), key, "")
			Expect(res.status).To(Equal(http.StatusUnauthorized))
			Eventually(func() error {
				return h.k8s.Get(context.Background(), key, &evaluationv1alpha1.Metric{})
			}).Should(Satisfy(apierrors.IsNotFound))
		})

		It("answers 502 to a create whose outcome is unknown and keeps the resource for a person", func() {
			m := metricWith()
			m.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{evaluationv1alpha1.CreatePendingAnnotation: "true"}}
			key := create(m)
			res := h.server.await(context.Background(), createMetric(), key, "")
			Expect(res.status).To(Equal(http.StatusBadGateway))
			Expect(res.body).To(HaveField("Details", HaveKeyWithValue("name", key.Name)))
			Consistently(func() error {
				return h.k8s.Get(context.Background(), key, &evaluationv1alpha1.Metric{})
			}, "300ms").Should(Succeed())
		})
	})
})
