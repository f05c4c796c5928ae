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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
)

const bulkDeletePath = BasePath + "/testcases/bulk-delete"

var _ = Describe("POST /testcases/bulk-delete", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	bulkDelete := func(body string) reply {
		GinkgoHelper()
		return send(request{method: http.MethodPost, path: bulkDeletePath, key: t.key, body: body})
	}

	It("answers 200 success once the TestcaseDeletion completed", func() {
		rep := bulkDelete(`{"ids":["tc-1","tc-2","tc-3"]}`)
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(rep.body).To(MatchJSON(`{"success":true}`))

		var l evaluationv1alpha1.TestcaseDeletionList
		Expect(h.k8s.List(context.Background(), &l, client.InNamespace(t.namespace))).To(Succeed())
		Expect(l.Items).To(HaveLen(1))
		d := l.Items[0]
		Expect(d.Spec.TestcaseIDs).To(Equal([]evaluationv1alpha1.ResourceID{"tc-1", "tc-2", "tc-3"}))
		Expect(d.Spec.APIKeySecretRef.Name).To(Equal(t.secret))
		Expect(d.Spec.TTLSecondsAfterFinished).To(Equal(ptr.To(int32(DefaultDeletionTTL.Seconds()))))
		Eventually(func(g Gomega) {
			g.Expect(h.k8s.Get(context.Background(), client.ObjectKeyFromObject(&d), &d)).To(Succeed())
			g.Expect(d.Status.Success).To(Equal(ptr.To(true)), "the reconciler records the success it answered")
		}).Should(Succeed())
	})

	It("answers from the committed create in standalone mode, without waiting for the reconciler", func() {
		// With a sync timeout of 1ns any wait would answer 504.
		_, url := runServer(Options{Connector: standaloneConnector(h.mgr), SyncTimeout: time.Nanosecond})
		for _, rq := range []request{
			{method: http.MethodPost, path: bulkDeletePath, key: t.key, body: `{"ids":["tc-1"]}`},
			{method: http.MethodDelete, path: BasePath + "/testsets/ts-1", key: t.key, contentType: "-"},
		} {
			rep := sendTo(url, rq)
			Expect(rep.status).To(Equal(http.StatusOK), "%s %s: %s", rq.method, rq.path, rep.body)
			Expect(rep.body).To(MatchJSON(`{"success":true}`))
		}
		Expect(deletionsIn(t.namespace)).To(Equal(2))
	})

	It("answers an empty list of ids with success and creates nothing, as the service does", func() {
		rep := bulkDelete(`{"ids":[]}`)
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(rep.body).To(MatchJSON(`{"success":true}`))
		Expect(deletionsIn(t.namespace)).To(BeZero())
	})

	DescribeTable("answers 400 VALIDATION_ERROR naming the field, and creates nothing",
		func(body, field string) {
			expectValidationError(bulkDelete(body), field)
			Expect(deletionsIn(t.namespace)).To(BeZero())
		},
		Entry("no ids", `{}`, "ids"),
		Entry("null ids", `{"ids":null}`, "ids"),
		Entry("a duplicate id", `{"ids":["a","b","a"]}`, "ids[2]"),
		Entry("a malformed id", `{"ids":["ok","not ok"]}`, "ids[1]"),
		Entry("a number for an id", `{"ids":[1]}`, "ids"),
		Entry("a string for the list", `{"ids":"a"}`, "ids"),
		Entry("an unknown field", `{"ids":["a"],"force":true}`, "force"),
		Entry("more than 10000 ids", `{"ids":["`+strings.Repeat(`a","`, 10000)+`b"]}`, "ids"),
	)
})

var _ = Describe("DELETE /testsets/{testsetId}", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	It("answers 200 success once the TestsetDeletion completed", func() {
		rep := send(request{method: http.MethodDelete, path: BasePath + "/testsets/ts-42", key: t.key, contentType: "-"})
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(rep.body).To(MatchJSON(`{"success":true}`))

		var l evaluationv1alpha1.TestsetDeletionList
		Expect(h.k8s.List(context.Background(), &l, client.InNamespace(t.namespace))).To(Succeed())
		Expect(l.Items).To(ConsistOf(HaveField("Spec.TestsetID", evaluationv1alpha1.ResourceID("ts-42"))))
	})

	It("answers 400 naming testsetId when the id is malformed, and creates nothing", func() {
		rep := send(request{method: http.MethodDelete, path: BasePath + "/testsets/-bad", key: t.key})
		expectValidationError(rep, "testsetId")
		Expect(deletionsIn(t.namespace)).To(BeZero())
	})
})

var _ = Describe("Routing", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	DescribeTable("answers 404 NOT_FOUND to unknown paths",
		func(method, path string) {
			rep := send(request{method: method, path: path, key: t.key, body: `{}`})
			Expect(rep.status).To(Equal(http.StatusNotFound))
			Expect(apiErrorOf(rep)["code"]).To(Equal("NOT_FOUND"))
		},
		Entry("the root", http.MethodGet, "/"),
		Entry("an unknown resource", http.MethodGet, BasePath+"/testcases"),
		Entry("no metric id", http.MethodGet, BasePath+"/metrics/"),
		Entry("a path below an operation", http.MethodPost, projectPath+"/extra"),
		Entry("no project", http.MethodPost, BasePath+"/projects//metrics"),
		Entry("no testset", http.MethodDelete, BasePath+"/testsets/"),
		Entry("another API version", http.MethodPost, "/api/v1/testcases/bulk-delete"),
	)

	DescribeTable("answers 405 METHOD_NOT_ALLOWED with an Allow header",
		func(method, path, allow string) {
			rep := send(request{method: method, path: path, key: t.key})
			Expect(rep.status).To(Equal(http.StatusMethodNotAllowed))
			Expect(rep.header.Get("Allow")).To(Equal(allow))
			Expect(apiErrorOf(rep)["code"]).To(Equal("METHOD_NOT_ALLOWED"))
		},
		Entry("PUT metrics", http.MethodPut, projectPath, "GET, POST"),
		Entry("POST a metric", http.MethodPost, BasePath+"/metrics/met-1", "DELETE, GET, PATCH"),
		Entry("GET bulk-delete", http.MethodGet, bulkDeletePath, "POST"),
		Entry("POST a testset", http.MethodPost, BasePath+"/testsets/ts-1", "DELETE, GET, PATCH"),
		Entry("DELETE a testcase", http.MethodDelete, BasePath+"/testcases/ts-1.a", "GET, PUT"),
		Entry("DELETE the document", http.MethodDelete, routeOpenAPI, "GET, HEAD"),
	)

	It("serves its OpenAPI document without a key", func() {
		rep := send(request{method: http.MethodGet, path: routeOpenAPI})
		Expect(rep.status).To(Equal(http.StatusOK))
		Expect(rep.header.Get("Content-Type")).To(Equal("application/json"))
		doc, err := OpenAPIDocument()
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.body).To(MatchJSON(doc))
		Expect(decodeAny(rep.body)).To(HaveKeyWithValue("openapi", HavePrefix("3.")))

		rep = send(request{method: http.MethodHead, path: routeOpenAPI})
		Expect(rep.status).To(Equal(http.StatusOK))
		Expect(rep.body).To(BeEmpty())
	})
})
