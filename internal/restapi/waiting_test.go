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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

var _ = Describe("A waiting request", func() {
	setPaused := func(m *evaluationv1alpha1.Metric, paused bool) {
		GinkgoHelper()
		patch := client.MergeFrom(m.DeepCopy())
		if paused {
			m.Annotations[evaluationv1alpha1.PausedAnnotation] = "true"
		} else {
			delete(m.Annotations, evaluationv1alpha1.PausedAnnotation)
		}
		Expect(h.k8s.Patch(context.Background(), m, patch)).To(Succeed())
	}

	It("wakes when its resource is deleted, answering 404 to an update, rather than waiting for the 504", func() {
		t := newTenant()
		id := createdID(t, evalapi.EvalTypeHuman, evalapi.OutputTypeInt)
		m := metricByID(t, id)
		// Paused, the reconciler leaves the update pending for good.
		setPaused(m, true)
		Eventually(func() string {
			c := meta.FindStatusCondition(metricByID(t, id).Status.Conditions, evaluationv1alpha1.ConditionReady)
			return c.Reason
		}).Should(Equal(evaluationv1alpha1.ReasonPaused))

		replies := make(chan reply, 1)
		rq := request{method: http.MethodPatch, path: metricPath(id), key: t.key,
			body: `{"evalType":"human","outputType":"int","description":"changed"}`}
		go func() {
			defer GinkgoRecover()
			rep, err := h.do(context.Background(), h.url, rq)
			Expect(err).NotTo(HaveOccurred())
			replies <- rep
		}()
		Eventually(func() int64 { return metricByID(t, id).Generation }).Should(BeNumerically(">", m.Generation),
			"the update was written and is waiting")

		Expect(h.k8s.Delete(context.Background(), metricByID(t, id))).To(Succeed())
		rep := <-replies // the server's sync timeout is 30s: a 504 would show that it slept through the deletion
		Expect(conformance(rq, rep)).To(Succeed())
		Expect(rep.status).To(Equal(http.StatusNotFound), "body: %s", rep.body)
		Expect(apiErrorOf(rep)["code"]).To(Equal(evalapi.CodeNotFound))

		if m := metricByID(t, id); m != nil {
			setPaused(m, false) // let the finalizer run
		}
	})
})

var _ = Describe("Judging a TestcaseDeletion", func() {
	refusedAfter := func(deleted int32) *evaluationv1alpha1.TestcaseDeletion {
		d := &evaluationv1alpha1.TestcaseDeletion{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "testcases-1", Generation: 1},
			Spec:       evaluationv1alpha1.TestcaseDeletionSpec{TestcaseIDs: []evaluationv1alpha1.ResourceID{"a", "b", "c", "d"}},
		}
		d.Status.Deleted = deleted
		d.Status.Conditions = []metav1.Condition{
			{Type: evaluationv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: evaluationv1alpha1.ReasonRejected,
				Message: "no such testcase: c", ObservedGeneration: 1},
			{Type: evaluationv1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: evaluationv1alpha1.ReasonRejected,
				ObservedGeneration: 1},
		}
		return d
	}

	It("discards a refused deletion that deleted nothing, answering the refusal", func() {
		res, v, _ := judge(bulkDeleteTestcases(nil), refusedAfter(0))
		Expect(v).To(Equal(refused))
		Expect(res.Status).To(Equal(http.StatusBadRequest))
	})

	It("keeps a deletion refused partway and answers 502 with what was deleted", func() {
		res, v, _ := judge(bulkDeleteTestcases(nil), refusedAfter(2))
		Expect(v).To(Equal(stuck), "stuck resources are kept")
		Expect(res.Status).To(Equal(http.StatusBadGateway))
		body, err := json.Marshal(res.Body)
		Expect(err).NotTo(HaveOccurred())
		Expect(body).To(MatchJSON(`{"code":"UPSTREAM_ERROR",
			"message":"The service refused the request partway; details say what was done: no such testcase: c",
			"details":{"kind":"TestcaseDeletion","namespace":"ns","name":"testcases-1","reason":"Rejected",
				"deleted":2,"deletedIds":["a","b"]}}`))
	})
})
