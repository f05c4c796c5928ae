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
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

const testsetsPath = BasePath + "/projects/proj-1/testsets"

const qaTestset = `{"name":"QA","description":"questions","jsonSchema":{"type":"object","required":["question"]},
	"fieldMapping":{"inputs":["question"],"expected":["answer"],"metadata":[]}}`

func testsetPath(id string) string  { return BasePath + "/testsets/" + url.PathEscape(id) }
func testcasePath(id string) string { return BasePath + "/testcases/" + url.PathEscape(id) }

// postTestset creates qaTestset through the API and returns it.
func postTestset(t tenant) evalapi.Testset {
	GinkgoHelper()
	rep := send(request{method: http.MethodPost, path: testsetsPath, key: t.key, body: qaTestset})
	Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
	var ts evalapi.Testset
	Expect(json.Unmarshal(rep.body, &ts)).To(Succeed())
	return ts
}

func postTestcases(t tenant, testsetID, body string) reply {
	GinkgoHelper()
	return send(request{method: http.MethodPost, path: testsetPath(testsetID) + "/testcases", key: t.key, body: body})
}

func testcasesOf(rep reply) []evalapi.Testcase {
	GinkgoHelper()
	Expect(rep.status).To(BeElementOf(http.StatusOK, http.StatusCreated), "body: %s", rep.body)
	var out struct {
		Items []evalapi.Testcase `json:"items"`
		Data  []evalapi.Testcase `json:"data"`
	}
	Expect(json.Unmarshal(rep.body, &out)).To(Succeed())
	return append(out.Items, out.Data...)
}

func testcasePage(t tenant, testsetID, query string) evalapi.TestcasePage {
	GinkgoHelper()
	rep := send(request{method: http.MethodGet, path: testsetPath(testsetID) + "/testcases" + query, key: t.key})
	Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
	var p evalapi.TestcasePage
	Expect(json.Unmarshal(rep.body, &p)).To(Succeed())
	return p
}

// testsetObject is the Testset resource whose remote id is id.
func testsetObject(t tenant, id string) *evaluationv1alpha1.Testset {
	GinkgoHelper()
	var l evaluationv1alpha1.TestsetList
	Expect(h.k8s.List(context.Background(), &l, client.InNamespace(t.namespace))).To(Succeed())
	for i := range l.Items {
		if l.Items[i].RecordedID() == id {
			return &l.Items[i]
		}
	}
	return nil
}

func jsonDataOf(c evalapi.Testcase) map[string]any {
	GinkgoHelper()
	var m map[string]any
	Expect(json.Unmarshal(c.JSONData, &m)).To(Succeed())
	return m
}

var _ = Describe("Testsets and testcases", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	It("serves an SDK's testset from create to delete, kept as one Testset resource", func() {
		ts := postTestset(t)
		Expect(ts.ID).To(HavePrefix("tst_"))
		Expect(ts.Name).To(Equal("QA"))
		Expect(ts.FieldMapping.Inputs).To(Equal([]string{"question"}))
		obj := testsetObject(t, ts.ID)
		Expect(obj).NotTo(BeNil())
		Expect(obj.Spec.Inline).To(BeEmpty())
		Expect(obj.Spec.KeyField).To(BeEquivalentTo(apiKeyField))

		By("adding testcases: each gets an id of its own, its data unchanged")
		created := testcasesOf(postTestcases(t, ts.ID, `{"items":[
			{"jsonData":{"question":"2+2?","answer":"4"}},
			{"jsonData":{"question":"3+3?","answer":"6"}},
			{"jsonData":{"answer":"none"}}]}`))
		Expect(created).To(HaveLen(3))
		ids := map[string]bool{}
		for _, c := range created {
			Expect(c.ID).To(HavePrefix(ts.ID + "."))
			Expect(c.TestsetID).To(Equal(ts.ID))
			Expect(jsonDataOf(c)).NotTo(HaveKey(apiKeyField))
			ids[c.ID] = true
		}
		Expect(ids).To(HaveLen(3))
		Expect(jsonDataOf(created[0])).To(Equal(map[string]any{"question": "2+2?", "answer": "4"}))
		Expect(created[0].Inputs).To(MatchJSON(`{"question":"2+2?"}`))
		Expect(created[0].Expected).To(MatchJSON(`{"answer":"4"}`))
		Expect(created[2].ValidationErrors).To(ConsistOf(evalapi.ValidationError{Path: "/data/question", Message: "Required field missing"}))
		Expect(testsetObject(t, ts.ID).Spec.Inline).To(HaveLen(3))

		By("listing them a page at a time, in the order they were added")
		first := testcasePage(t, ts.ID, "?limit=2")
		Expect(first.Data).To(HaveLen(2))
		Expect(first.HasMore).To(BeTrue())
		Expect(*first.Total).To(Equal(3))
		second := testcasePage(t, ts.ID, "?limit=2&cursor="+url.QueryEscape(*first.NextCursor))
		Expect(second.HasMore).To(BeFalse())
		Expect([]string{first.Data[0].ID, first.Data[1].ID, second.Data[0].ID}).To(Equal(
			[]string{created[0].ID, created[1].ID, created[2].ID}))

		By("replacing one testcase's data, which keeps its id")
		rep := send(request{method: http.MethodPut, path: testcasePath(created[1].ID), key: t.key,
			body: `{"jsonData":{"question":"3+3?","answer":"six"}}`})
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		rep = send(request{method: http.MethodGet, path: testcasePath(created[1].ID), key: t.key})
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		var got evalapi.Testcase
		Expect(json.Unmarshal(rep.body, &got)).To(Succeed())
		Expect(got.ID).To(Equal(created[1].ID))
		Expect(jsonDataOf(got)).To(Equal(map[string]any{"question": "3+3?", "answer": "six"}))

		By("bulk-deleting one")
		rep = send(request{method: http.MethodPost, path: BasePath + "/testcases/bulk-delete", key: t.key,
			body: `{"ids":["` + created[0].ID + `"]}`})
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		left := testcasePage(t, ts.ID, "")
		Expect(left.Data).To(HaveLen(2))
		Expect(left.Data[0].ID).To(Equal(created[1].ID))
		expectNotFound(send(request{method: http.MethodGet, path: testcasePath(created[0].ID), key: t.key}))
		var deletions evaluationv1alpha1.TestcaseDeletionList
		Expect(h.k8s.List(context.Background(), &deletions, client.InNamespace(t.namespace))).To(Succeed())
		Expect(deletions.Items).To(BeEmpty(), "the cluster held the testcases: nothing to delete on a service")

		By("renaming the Testset; the reconciler counts its testcases")
		rep = send(request{method: http.MethodPatch, path: testsetPath(ts.ID), key: t.key, body: `{"name":"QA v2"}`})
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(json.Unmarshal(rep.body, &ts)).To(Succeed())
		Expect(ts.Name).To(Equal("QA v2"))
		Expect(ts.Description).To(Equal("questions"))
		obj = testsetObject(t, ts.ID)
		Expect(obj.Status.Testcases).To(BeEquivalentTo(2))

		By("listing the project's Testsets and getting it")
		rep = send(request{method: http.MethodGet, path: testsetsPath, key: t.key})
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		var page evalapi.TestsetPage
		Expect(json.Unmarshal(rep.body, &page)).To(Succeed())
		Expect(page.Data).To(ConsistOf(ts))
		rep = send(request{method: http.MethodGet, path: testsetPath(ts.ID), key: t.key})
		Expect(rep.body).To(MatchJSON(mustJSON(ts)))

		By("deleting it: the resource goes, and no TestsetDeletion is made")
		rep = send(request{method: http.MethodDelete, path: testsetPath(ts.ID), key: t.key})
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(testsetObject(t, ts.ID)).To(BeNil())
		var tds evaluationv1alpha1.TestsetDeletionList
		Expect(h.k8s.List(context.Background(), &tds, client.InNamespace(t.namespace))).To(Succeed())
		Expect(tds.Items).To(BeEmpty())
		expectNotFound(send(request{method: http.MethodGet, path: testsetPath(ts.ID), key: t.key}))
	})

	It("serves a ConfigMap Testset's testcases, ids from its keys, and refuses writes to them", func() {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "cases"},
			Data: map[string]string{"testcases.jsonl": `{"id":"q1","question":"a"}` + "\n" + `{"id":"q 2","question":"b"}` + "\n"}}
		Expect(h.k8s.Create(context.Background(), cm)).To(Succeed())
		obj := &evaluationv1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "from-git"},
			Spec: evaluationv1alpha1.TestsetSpec{ProjectID: "proj-1", Name: "from git", KeyField: "id",
				ConfigMapRef:    &evaluationv1alpha1.ConfigMapTestcases{Name: "cases"},
				APIKeySecretRef: &evaluationv1alpha1.SecretKeySelector{Name: t.secret, Key: "apiKey"}}}
		Expect(h.k8s.Create(context.Background(), obj)).To(Succeed())
		Eventually(func(g Gomega) string {
			g.Expect(h.k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			return obj.RecordedID()
		}).ShouldNot(BeEmpty())
		id := obj.RecordedID()

		cases := testcasePage(t, id, "").Data
		Expect(cases).To(HaveLen(2))
		Expect(cases[0].ID).To(Equal(id + ".q1"))
		Expect(cases[1].ID).To(HavePrefix(id + "~"))
		Expect(jsonDataOf(cases[1])).To(HaveKeyWithValue("id", "q 2"))
		rep := send(request{method: http.MethodGet, path: testcasePath(cases[1].ID), key: t.key})
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)

		rep = postTestcases(t, id, `{"items":[{"jsonData":{"id":"q3"}}]}`)
		Expect(rep.status).To(Equal(http.StatusConflict), "body: %s", rep.body)
		Expect(apiErrorOf(rep)["code"]).To(Equal(apierror.CodeConflict))
		Expect(apiErrorOf(rep)["message"]).To(ContainSubstring("ConfigMap cases"))
		rep = send(request{method: http.MethodPost, path: BasePath + "/testcases/bulk-delete", key: t.key,
			body: `{"ids":["` + cases[0].ID + `"]}`})
		Expect(rep.status).To(Equal(http.StatusConflict), "body: %s", rep.body)
		Expect(testcasePage(t, id, "").Data).To(HaveLen(2))
	})

	It("adds testcases to a kubectl Testset by its keyField, and refuses a repeated key", func() {
		ts := postTestset(t)
		obj := testsetObject(t, ts.ID)
		// A Testset made with kubectl names its own key field.
		Expect(h.k8s.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"keyField":"id"}}`)))).To(Succeed())
		created := testcasesOf(postTestcases(t, ts.ID, `{"items":[{"jsonData":{"id":"a","question":"q"}}]}`))
		Expect(created[0].ID).To(Equal(ts.ID + ".a"))
		rep := postTestcases(t, ts.ID, `{"items":[{"jsonData":{"id":"a","question":"again"}}]}`)
		Expect(rep.status).To(Equal(http.StatusBadRequest), "body: %s", rep.body)
		Expect(string(rep.body)).To(ContainSubstring(`the same id \"a\"`))
		rep = send(request{method: http.MethodPut, path: testcasePath(created[0].ID), key: t.key,
			body: `{"jsonData":{"id":"b"}}`})
		Expect(rep.status).To(Equal(http.StatusBadRequest), "body: %s", rep.body)
		Expect(string(rep.body)).To(ContainSubstring("jsonData.id"))
		Expect(testsetObject(t, ts.ID).Spec.Inline).To(HaveLen(1))
	})

	DescribeTable("answers bad requests with the field named, and writes nothing",
		func(path func(id string) string, method, body string, status int, field string) {
			ts := postTestset(t)
			rep := send(request{method: method, path: path(ts.ID), key: t.key, body: body})
			Expect(rep.status).To(Equal(status), "body: %s", rep.body)
			if field != "" {
				expectValidationError(rep, field)
			}
			Expect(testsetObject(t, ts.ID).Spec.Inline).To(BeEmpty())
			Expect(testsetObject(t, ts.ID).Generation).To(BeEquivalentTo(1))
		},
		Entry("a create without its fields", func(string) string { return testsetsPath }, http.MethodPost,
			`{"name":"x"}`, http.StatusBadRequest, "fieldMapping"),
		Entry("a jsonSchema that is not an object", func(string) string { return testsetsPath }, http.MethodPost,
			`{"name":"x","description":"","jsonSchema":null,"fieldMapping":{"inputs":[],"expected":[],"metadata":[]}}`,
			http.StatusBadRequest, "jsonSchema"),
		Entry("a testcase setting the server's key", func(id string) string { return testsetPath(id) + "/testcases" },
			http.MethodPost, `{"items":[{"jsonData":{"_testcaseKey":"x"}}]}`, http.StatusBadRequest, "items[0].jsonData._testcaseKey"),
		Entry("jsonData that is not an object", func(id string) string { return testsetPath(id) + "/testcases" },
			http.MethodPost, `{"items":[{"jsonData":"q"}]}`, http.StatusBadRequest, "items[0].jsonData"),
		Entry("no items", func(id string) string { return testsetPath(id) + "/testcases" },
			http.MethodPost, `{"items":[]}`, http.StatusBadRequest, "items"),
		Entry("101 items", func(id string) string { return testsetPath(id) + "/testcases" },
			http.MethodPost, `{"items":[`+strings.Repeat(`{"jsonData":{}},`, 100)+`{"jsonData":{}}]}`, http.StatusBadRequest, "items"),
		Entry("testcases over the inline bound", func(id string) string { return testsetPath(id) + "/testcases" },
			http.MethodPost, `{"items":[{"jsonData":{"q":"`+strings.Repeat("x", maxAPITestcaseBytes)+`"}}]}`,
			http.StatusRequestEntityTooLarge, ""),
		Entry("a testcase id of no Testset", func(id string) string { return testcasePath(id + "x.k") },
			http.MethodGet, "", http.StatusNotFound, ""),
		Entry("a testcase id without a key", func(id string) string { return testcasePath(id) },
			http.MethodGet, "", http.StatusNotFound, ""),
	)

	It("does not show a Testset to another namespace's key", func() {
		ts := postTestset(t)
		other := newTenant()
		expectNotFound(send(request{method: http.MethodGet, path: testsetPath(ts.ID), key: other.key}))
		rep := postTestcases(other, ts.ID, `{"items":[{"jsonData":{"q":1}}]}`)
		expectNotFound(rep)
		Expect(testsetObject(t, ts.ID).Spec.Inline).To(BeEmpty())
	})
})

func mustJSON(v any) string {
	GinkgoHelper()
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}
