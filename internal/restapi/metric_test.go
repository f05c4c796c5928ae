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
	watchapi "k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

const projectPath = BasePath + "/projects/proj-1/metrics"

func newTenant() tenant {
	GinkgoHelper()
	t, err := h.newTenant(context.Background())
	Expect(err).NotTo(HaveOccurred())
	return t
}

func metricsIn(namespace string) []evaluationv1alpha1.Metric {
	GinkgoHelper()
	var l evaluationv1alpha1.MetricList
	Expect(h.k8s.List(context.Background(), &l, client.InNamespace(namespace))).To(Succeed())
	return l.Items
}

func postMetric(t tenant, body string) reply {
	GinkgoHelper()
	return send(request{method: http.MethodPost, path: projectPath, key: t.key, body: body})
}

// variantBody is a minimal valid request for an evalType and outputType.
func variantBody(evalType, outputType string) string {
	req := map[string]any{"name": "m", "evalType": evalType, "outputType": outputType}
	if evalType == evalapi.EvalTypeAI {
		req["promptTemplate"] = "Rate {{outputs.response}}"
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// expectValidationError expects a VALIDATION_ERROR naming field.
func expectValidationError(rep reply, field string) {
	GinkgoHelper()
	Expect(rep.status).To(Equal(http.StatusBadRequest), "body: %s", rep.body)
	e := apiErrorOf(rep)
	Expect(e["code"]).To(Equal(evalapi.CodeValidation))
	Expect(e["details"]).To(HaveKeyWithValue("errors", ContainElement(HaveKeyWithValue("field", field))),
		"body: %s", rep.body)
}

var _ = Describe("POST /projects/{projectId}/metrics", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	DescribeTable("creates each of the nine variants and answers with every default",
		func(evalType, outputType, want string) {
			body := variantBody(evalType, outputType)
			rq := request{method: http.MethodPost, path: projectPath, key: t.key, body: body}
			Expect(requestConforms(rq)).To(Succeed())

			rep := send(rq)
			Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
			var got evalapi.Metric
			Expect(json.Unmarshal(rep.body, &got)).To(Succeed())
			Expect(got.ID).NotTo(BeEmpty())
			// description is present as null, not left out.
			Expect(rep.body).To(MatchJSON(`{"id":"` + got.ID + `","name":"m","description":null,` + want + `}`))

			items := metricsIn(t.namespace)
			Expect(items).To(HaveLen(1))
			m := items[0]
			Expect(m.RecordedID()).To(Equal(got.ID)) // status.id follows from the reconciler
			Expect(m.Spec.ProjectID).To(BeEquivalentTo("proj-1"))
			Expect(m.Spec.APIKeySecretRef).To(Equal(&evaluationv1alpha1.SecretKeySelector{Name: t.secret, Key: "apiKey"}))
			Expect(m.Labels).To(HaveKeyWithValue(evaluationv1alpha1.CreatedByLabel, evaluationv1alpha1.CreatedByRESTAPI))
		},
		Entry("ai int", "ai", "int", `"evalType":"ai","outputType":"int","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0,"passingThreshold":4`),
		Entry("ai float", "ai", "float", `"evalType":"ai","outputType":"float","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0,"passingThreshold":0.9`),
		Entry("ai boolean", "ai", "boolean", `"evalType":"ai","outputType":"boolean","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0`),
		Entry("human int", "human", "int", `"evalType":"human","outputType":"int","guidelines":"","passingThreshold":4`),
		Entry("human float", "human", "float", `"evalType":"human","outputType":"float","guidelines":"","passingThreshold":0.9`),
		Entry("human boolean", "human", "boolean", `"evalType":"human","outputType":"boolean","guidelines":""`),
		Entry("heuristic int", "heuristic", "int", `"evalType":"heuristic","outputType":"int","guidelines":"","passingThreshold":4`),
		Entry("heuristic float", "heuristic", "float", `"evalType":"heuristic","outputType":"float","guidelines":"","passingThreshold":0.9`),
		Entry("heuristic boolean", "heuristic", "boolean", `"evalType":"heuristic","outputType":"boolean","guidelines":""`),
	)

	It("answers in standalone mode from its one write, which leaves the reconciler only the status", func() {
		w, err := client.NewWithWatch(h.cfg, client.Options{Scheme: h.k8s.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		watch, err := w.Watch(context.Background(), &evaluationv1alpha1.MetricList{}, client.InNamespace(t.namespace))
		Expect(err).NotTo(HaveOccurred())
		defer watch.Stop()

		id := idOf(postMetric(t, variantBody("ai", "int")))
		// The watch sees every write, in order: the server's create, then the reconciler's.
		var writes []*evaluationv1alpha1.Metric
		for len(writes) == 0 || !meta.IsStatusConditionTrue(writes[len(writes)-1].Status.Conditions, evaluationv1alpha1.ConditionReady) {
			var ev watchapi.Event
			Eventually(watch.ResultChan()).Should(Receive(&ev))
			writes = append(writes, ev.Object.(*evaluationv1alpha1.Metric))
		}
		Expect(writes).To(HaveLen(2), "the create and the status")
		created, ready := writes[0], writes[1]
		Expect(created.Annotations).To(HaveKeyWithValue(evaluationv1alpha1.MetricIDAnnotation, id))
		Expect(ready.Annotations).To(Equal(created.Annotations))
		Expect(ready.Status.ID).To(Equal(id))
		Expect(meta.FindStatusCondition(ready.Status.Conditions, evaluationv1alpha1.ConditionReady)).
			To(HaveField("Reason", evaluationv1alpha1.ReasonCreated), "the server created it, nothing was adopted")
		Expect(convert.ResponseOf(ready)).To(Equal(convert.ResponseOf(created)), "status holds what the answer said")
	})

	It("keeps the values it was given, a whole-number 4.0 included", func() {
		rep := postMetric(t, `{"name":"judge","description":"d","evalType":"ai","outputType":"int",
			"guidelines":"g","promptTemplate":"p {{outputs.response}}","evalModelName":"gpt-4o-mini",
			"temperature":1.5,"passingThreshold":3.0}`)
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		Expect(decodeAny(rep.body)).To(And(
			HaveKeyWithValue("description", "d"),
			HaveKeyWithValue("guidelines", "g"),
			HaveKeyWithValue("evalModelName", "gpt-4o-mini"),
			HaveKeyWithValue("temperature", 1.5),
			HaveKeyWithValue("passingThreshold", 3.0),
		))
		Expect(string(rep.body)).To(ContainSubstring(`"passingThreshold":3`))
	})

	It("accepts a charset parameter on the Content-Type", func() {
		rep := send(request{method: http.MethodPost, path: projectPath, key: t.key,
			body: variantBody("human", "boolean"), contentType: "application/json; charset=utf-8"})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
	})

	DescribeTable("answers 400 VALIDATION_ERROR naming the field, and creates nothing",
		func(path, body, field string) {
			if path == "" {
				path = projectPath
			}
			rep := send(request{method: http.MethodPost, path: path, key: t.key, body: body})
			expectValidationError(rep, field)
			Expect(metricsIn(t.namespace)).To(BeEmpty())
		},
		// Decoding.
		Entry("an empty body", "", ``, "body"),
		Entry("broken JSON", "", `{"name": "m",`, "body"),
		Entry("not an object", "", `["m"]`, "body"),
		Entry("two JSON values", "", variantBody("human", "int")+` {}`, "body"),
		Entry("a string for a number", "", `{"name":"m","evalType":"ai","outputType":"int","promptTemplate":"p","temperature":"0.5"}`, "temperature"),
		Entry("a quoted threshold", "", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":"4"}`, "passingThreshold"),
		Entry("a number for a string", "", `{"name":7,"evalType":"human","outputType":"int"}`, "name"),
		Entry("a number out of float64 range", "", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":1e999}`, "passingThreshold"),
		Entry("an unknown field", "", `{"name":"m","evalType":"human","outputType":"int","colour":"red"}`, "colour"),
		Entry("a field in the wrong case", "", `{"Name":"m","evalType":"human","outputType":"int"}`, "Name"),
		Entry("a duplicate field", "", `{"name":"m","name":"n","evalType":"human","outputType":"int"}`, "name"),
		// The CRD's OpenAPI schema.
		Entry("no name", "", `{"evalType":"human","outputType":"int"}`, "name"),
		Entry("an empty name", "", `{"name":"","evalType":"human","outputType":"int"}`, "name"),
		Entry("an unknown evalType", "", `{"name":"m","evalType":"robot","outputType":"int"}`, "evalType"),
		Entry("an unknown outputType", "", `{"name":"m","evalType":"human","outputType":"text"}`, "outputType"),
		Entry("temperature above 2", "", `{"name":"m","evalType":"ai","outputType":"int","promptTemplate":"p","temperature":2.5}`, "temperature"),
		Entry("a negative threshold", "", `{"name":"m","evalType":"human","outputType":"float","passingThreshold":-0.1}`, "passingThreshold"),
		Entry("an empty promptTemplate", "", `{"name":"m","evalType":"ai","outputType":"int","promptTemplate":""}`, "promptTemplate"),
		Entry("a malformed evalModelName", "", `{"name":"m","evalType":"ai","outputType":"int","promptTemplate":"p","evalModelName":"gpt 4"}`, "evalModelName"),
		Entry("a malformed projectId", BasePath+"/projects/bad%20id!/metrics", variantBody("human", "int"), "projectId"),
		// The CRD's CEL rules, one by one.
		Entry("ai without promptTemplate", "", `{"name":"m","evalType":"ai","outputType":"int"}`, "promptTemplate"),
		Entry("human with promptTemplate", "", `{"name":"m","evalType":"human","outputType":"int","promptTemplate":"p"}`, "promptTemplate"),
		Entry("heuristic with evalModelName", "", `{"name":"m","evalType":"heuristic","outputType":"int","evalModelName":"gpt-4o"}`, "evalModelName"),
		Entry("human with temperature", "", `{"name":"m","evalType":"human","outputType":"int","temperature":0}`, "temperature"),
		Entry("boolean with passingThreshold", "", `{"name":"m","evalType":"human","outputType":"boolean","passingThreshold":1}`, "passingThreshold"),
		Entry("int with a fractional threshold", "", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":3.5}`, "passingThreshold"),
		Entry("int with a threshold below 1", "", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":0}`, "passingThreshold"),
		Entry("float with a threshold above 1", "", `{"name":"m","evalType":"human","outputType":"float","passingThreshold":1.5}`, "passingThreshold"),
	)

	It("reports every broken rule at once, with a plain message", func() {
		rep := postMetric(t, `{"name":"m","evalType":"human","outputType":"boolean","promptTemplate":"p","passingThreshold":1}`)
		expectValidationError(rep, "promptTemplate")
		expectValidationError(rep, "passingThreshold")
		Expect(string(rep.body)).To(ContainSubstring("passingThreshold is not allowed when outputType is boolean"))
		Expect(string(rep.body)).NotTo(ContainSubstring("spec."))
	})

	It("never answers 500 to malformed bodies", func() {
		for _, body := range malformedBodies {
			rep := postMetric(t, body)
			Expect(rep.status).To(Equal(http.StatusBadRequest), "body %q: %s", body, rep.body)
		}
		Expect(metricsIn(t.namespace)).To(BeEmpty())
	})

	It("answers 413 to a body over 1 MiB, with or without a Content-Length", func() {
		big := `{"name":"` + strings.Repeat("x", DefaultMaxBodyBytes) + `"}`
		rep := postMetric(t, big)
		Expect(rep.status).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(apiErrorOf(rep)["code"]).To(Equal("PAYLOAD_TOO_LARGE"))

		rep = send(request{method: http.MethodPost, path: projectPath, key: t.key, body: big, chunked: true})
		Expect(rep.status).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(metricsIn(t.namespace)).To(BeEmpty())
	})

	DescribeTable("answers 415 unless the body is declared JSON",
		func(contentType string) {
			rep := send(request{method: http.MethodPost, path: projectPath, key: t.key,
				body: variantBody("human", "int"), contentType: contentType})
			Expect(rep.status).To(Equal(http.StatusUnsupportedMediaType))
			Expect(apiErrorOf(rep)["code"]).To(Equal("UNSUPPORTED_MEDIA_TYPE"))
			Expect(metricsIn(t.namespace)).To(BeEmpty())
		},
		Entry("none", "-"),
		Entry("text/plain", "text/plain"),
		Entry("form data", "application/x-www-form-urlencoded"),
		Entry("garbage", ";;;"),
	)
})

// malformedBodies are bodies that must be refused with 400; they also seed
// the fuzz target.
var malformedBodies = []string{
	``, ` `, `null`, `true`, `0`, `"s"`, `[]`, `{`, `}`, `{"name"}`, `{"name":}`, `{"name":"m",}`,
	`{"name":"m"}{"name":"m"}`, `{"name":"\ud800"}`, `{"name":"m","evalType":"ai","outputType":"int","promptTemplate":{"a":1}}`,
	`{"temperature":1e400}`, `{"passingThreshold":-1e-400}`, `{"name":null,"evalType":null,"outputType":null}`,
	`{"name":"m","evalType":"human","outputType":"int","description":["a"]}`, "\x00", "\xff\xfe{}",
	`{"name":"m","evalType":"human","outputType":"int","guidelines":` + strings.Repeat("[", 20000) + `}`,
}
