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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("Poison values", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	DescribeTable("a Metric whose text holds a control character or a non-character is refused before any write",
		func(field, body string) {
			rep := postMetric(t, body)
			expectValidationError(rep, field)
			rule := evaluationv1alpha1.TextRule // the API server's message too
			if field == "name" {
				rule = evaluationv1alpha1.LineTextRule
			}
			Expect(string(rep.body)).To(ContainSubstring(rule))
			Expect(metricsIn(t.namespace)).To(BeEmpty())
		},
		Entry("name with DEL", "name", `{"name":"a\u007fb","evalType":"human","outputType":"boolean"}`),
		Entry("name with a line feed", "name", `{"name":"a\nb","evalType":"human","outputType":"boolean"}`),
		Entry("guidelines with U+FFFF", "guidelines", `{"name":"n","evalType":"human","outputType":"boolean","guidelines":"\uffff"}`),
		Entry("description with a C1 control", "description", `{"name":"n","evalType":"human","outputType":"boolean","description":"\u0085"}`),
		Entry("promptTemplate with NUL", "promptTemplate", `{"name":"n","evalType":"ai","outputType":"boolean","promptTemplate":"\u0000"}`),
	)

	It("refuses the same in an update", func() {
		id := createdID(t, "human", "boolean")
		expectValidationError(patchMetric(t, id, `{"evalType":"human","outputType":"boolean","guidelines":"x\u007f"}`), "guidelines")
	})

	It("refuses a body that is not valid UTF-8 rather than altering it", func() {
		rep := postMetric(t, "{\"name\":\"caf\xe9\",\"evalType\":\"human\",\"outputType\":\"boolean\"}")
		expectValidationError(rep, "body")
		Expect(string(rep.body)).To(ContainSubstring("UTF-8"))
		Expect(metricsIn(t.namespace)).To(BeEmpty())
	})

	It("refuses a body in another charset than UTF-8 with a 415", func() {
		rep := send(request{method: http.MethodPost, path: projectPath, key: t.key,
			contentType: "application/json; charset=iso-8859-1", body: variantBody("human", "int")})
		Expect(rep.status).To(Equal(http.StatusUnsupportedMediaType), "body: %s", rep.body)
		Expect(metricsIn(t.namespace)).To(BeEmpty())
		rep = send(request{method: http.MethodPost, path: projectPath, key: t.key,
			contentType: "application/json; charset=UTF-8", body: variantBody("human", "int")})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
	})

	It("quotes at most a bounded prefix of a bad value in the error body", func() {
		huge := strings.Repeat("x", 1<<20)
		for _, body := range []string{
			`{"name":"n","evalType":"` + huge + `","outputType":"boolean"}`,           // refused by the API server
			`{"name":"n","evalType":"human","outputType":"boolean","` + huge + `":1}`, // refused by the decoder
		} {
			rep := postMetric(t, body)
			Expect(rep.status).To(Equal(http.StatusBadRequest))
			Expect(len(rep.body)).To(BeNumerically("<", 8<<10), "an error body of %d bytes", len(rep.body))
		}
	})

	DescribeTable("answers an unclean path with a 404 ApiError, not a redirect", func(path string) {
		rep := send(request{method: http.MethodGet, path: path, key: t.key})
		expectNotFound(rep)
	},
		Entry("a double slash", BasePath+"//projects/proj-1/metrics"),
		Entry("a dot segment", BasePath+"/projects/proj-1/./metrics"),
	)

	// claim creates a Metric as kubectl would, annotated with id, and waits
	// until the reconciler stalls it for reason.
	claim := func(name, id, reason string) {
		GinkgoHelper()
		m := framework.NewMetric(t.namespace, name, 0)
		m.Spec.ProjectID = "proj-1"
		m.Annotations = map[string]string{evaluationv1alpha1.MetricIDAnnotation: id}
		Expect(h.k8s.Create(context.Background(), m)).To(Succeed())
		Eventually(func(g Gomega) string {
			g.Expect(h.k8s.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
			c := meta.FindStatusCondition(m.Status.Conditions, evaluationv1alpha1.ConditionStalled)
			g.Expect(c).NotTo(BeNil())
			return c.Reason
		}).Should(Equal(reason))
	}

	It("never serves an invalid metric-id annotation", func() {
		claim("long-id", strings.Repeat("x", 300), evaluationv1alpha1.ReasonInvalidMetricID)
		Expect(pageOf(listMetrics(t, "")).Data).To(BeEmpty())
	})

	It("keeps serving the holder of an id another Metric copied", func() {
		created := postMetric(t, variantBody("human", "int"))
		id := idOf(created)
		// The copy comes later, as a copied manifest does: the holder serves the id already.
		Eventually(func() string { return metricByID(t, id).Status.ID }).Should(Equal(id))
		claim("copied", id, evaluationv1alpha1.ReasonMetricIDClaimed)

		rep := getMetric(t, id)
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(rep.body).To(MatchJSON(created.body), "the holder, not the copy")
		page := pageOf(listMetrics(t, ""))
		Expect(page.Data).To(HaveLen(1))
		Expect(page.Data[0].ID).To(Equal(id))
		Expect(page.Data[0].Name).To(Equal("m"), "the holder's name, from variantBody")
	})

	It("answers the service's values only where they are valid", func() {
		id := createdID(t, "human", "float")
		m := metricByID(t, id)
		base := m.DeepCopy()
		// Within the status schema's bounds (0 to 5), outside a float Metric's rules.
		threshold := 5.0
		m.Status.PassingThreshold = &threshold
		Expect(h.k8s.Status().Patch(context.Background(), m, client.MergeFrom(base))).To(Succeed())
		Eventually(func(g Gomega) *float64 {
			rep := getMetric(t, id)
			g.Expect(rep.status).To(Equal(http.StatusOK))
			var got evalapi.Metric
			g.Expect(json.Unmarshal(rep.body, &got)).To(Succeed())
			return got.PassingThreshold
		}).Should(HaveValue(BeNumerically("<=", 1)))
	})
})
