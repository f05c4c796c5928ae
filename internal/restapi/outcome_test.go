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
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// metricWith is a generation-2 ai/int Metric with the given conditions.
func metricWith(conds ...metav1.Condition) *evaluationv1alpha1.Metric {
	m := &evaluationv1alpha1.Metric{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", Generation: 2},
		Spec: evaluationv1alpha1.MetricSpec{
			ProjectID: "p", Name: "m", EvalType: "ai", OutputType: "int", PromptTemplate: ptr.To[evaluationv1alpha1.Text]("p"),
		},
		Status: evaluationv1alpha1.MetricStatus{ID: "met_1", Conditions: conds},
	}
	return m
}

func cond(condType string, status metav1.ConditionStatus, reason string, generation int64) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: "msg " + reason,
		ObservedGeneration: generation}
}

const condReady, condStalled = evaluationv1alpha1.ConditionReady, evaluationv1alpha1.ConditionStalled

// readyFalseAndStalled are the conditions the reconciler sets for an outcome
// of the Metric's current generation that it will not retry.
func readyFalseAndStalled(reason string) []metav1.Condition {
	return []metav1.Condition{cond(condReady, metav1.ConditionFalse, reason, 2), cond(condStalled, metav1.ConditionTrue, reason, 2)}
}

func TestJudge(t *testing.T) {
	tr, f := metav1.ConditionTrue, metav1.ConditionFalse
	cases := []struct {
		name   string
		conds  []metav1.Condition
		want   progress
		status int    // checked unless pending
		code   string // checked when set
	}{
		{"no conditions yet", nil, pending, 0, ""},
		{"Ready for an older generation",
			[]metav1.Condition{cond(condReady, tr, evaluationv1alpha1.ReasonCreated, 1)}, pending, 0, ""},
		{"Creating", []metav1.Condition{cond(condReady, f, evaluationv1alpha1.ReasonCreating, 2)}, pending, 0, ""},
		{"upstream unavailable, retrying",
			[]metav1.Condition{cond(condReady, f, evaluationv1alpha1.ReasonUpstreamUnavailable, 2)}, pending, 0, ""},
		{"a transient SecretNotFound, not stalled",
			[]metav1.Condition{cond(condReady, f, evaluationv1alpha1.ReasonSecretNotFound, 2)}, pending, 0, ""},
		{"Created", []metav1.Condition{cond(condReady, tr, evaluationv1alpha1.ReasonCreated, 2)},
			succeeded, http.StatusCreated, ""},
		{"Adopted", []metav1.Condition{cond(condReady, tr, evaluationv1alpha1.ReasonAdopted, 2)},
			succeeded, http.StatusCreated, ""},
		{"Rejected", readyFalseAndStalled(evaluationv1alpha1.ReasonRejected),
			refused, http.StatusBadRequest, apierror.CodeRejected},
		{"Unauthorized", readyFalseAndStalled(evaluationv1alpha1.ReasonUnauthorized),
			refused, http.StatusUnauthorized, evalapi.CodeUnauthorized},
		{"InvalidCredentials", readyFalseAndStalled(evaluationv1alpha1.ReasonInvalidCredentials),
			refused, http.StatusUnauthorized, evalapi.CodeUnauthorized},
		{"SecretNotFound, stalled", readyFalseAndStalled(evaluationv1alpha1.ReasonSecretNotFound),
			refused, http.StatusUnauthorized, evalapi.CodeUnauthorized},
		{"CreateOutcomeUnknown", readyFalseAndStalled(evaluationv1alpha1.ReasonCreateOutcomeUnknown),
			stuck, http.StatusBadGateway, apierror.CodeUpstreamError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, v, _ := judge(createMetric(), metricWith(tc.conds...))
			if v != tc.want {
				t.Fatalf("progress = %d, want %d", v, tc.want)
			}
			if v == pending {
				return
			}
			if res.Status != tc.status {
				t.Errorf("status = %d, want %d", res.Status, tc.status)
			}
			if e, ok := res.Body.(evalapi.APIError); tc.code != "" && (!ok || e.Code != tc.code) {
				t.Errorf("body = %+v, want an ApiError with code %s", res.Body, tc.code)
			}
		})
	}
}

func TestJudgePassesRejectionMessageOn(t *testing.T) {
	res, _, _ := judge(createMetric(), metricWith(readyFalseAndStalled(evaluationv1alpha1.ReasonRejected)...))
	if e, ok := res.Body.(evalapi.APIError); !ok || e.Message != "msg Rejected" {
		t.Fatalf("body = %+v, want the upstream's message %q", res.Body, "msg Rejected")
	}
}

func TestJudgeAnswersWithServedValues(t *testing.T) {
	m := metricWith(cond(condReady, metav1.ConditionTrue, evaluationv1alpha1.ReasonCreated, 2))
	m.Status.EvalModelName = "served-model"
	m.Status.PassingThreshold = ptr.To(5.0)
	m.Status.Guidelines = ptr.To[evaluationv1alpha1.Text]("from the service")
	res, _, _ := judge(createMetric(), m)
	want := evalapi.Metric{
		ID: "met_1", Name: "m", EvalType: "ai", OutputType: "int", Guidelines: "from the service",
		PromptTemplate: ptr.To("p"), EvalModelName: ptr.To("served-model"), Temperature: ptr.To(0.0),
		PassingThreshold: ptr.To(5.0),
	}
	if !reflect.DeepEqual(res.Body, want) {
		got, _ := json.Marshal(res.Body)
		wantJSON, _ := json.Marshal(want)
		t.Fatalf("body = %T %s, want %s", res.Body, got, wantJSON)
	}
}

var _ = Describe("Mapping the reconciler's outcome to an answer, with the real reconciler", func() {
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
		res := h.server.await(context.Background(), createMetric(), key, "", 0)
		Expect(res.Status).To(Equal(http.StatusUnauthorized))
		Eventually(func() error {
			return h.k8s.Get(context.Background(), key, &evaluationv1alpha1.Metric{})
		}).Should(Satisfy(apierrors.IsNotFound))
	})

	It("answers 502 to a create whose outcome is unknown and keeps the resource for a person", func() {
		m := metricWith()
		m.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{evaluationv1alpha1.CreatePendingAnnotation: "true"}}
		key := create(m)
		res := h.server.await(context.Background(), createMetric(), key, "", 0)
		Expect(res.Status).To(Equal(http.StatusBadGateway))
		Expect(res.Body).To(HaveField("Details", HaveKeyWithValue("name", key.Name)))
		Consistently(func() error {
			return h.k8s.Get(context.Background(), key, &evaluationv1alpha1.Metric{})
		}, "300ms").Should(Succeed())
	})
})
