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
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

func idOf(rep reply) string {
	GinkgoHelper()
	Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
	var m evalapi.Metric
	Expect(json.Unmarshal(rep.body, &m)).To(Succeed())
	return m.ID
}

var _ = Describe("Idempotency-Key", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	postWithKey := func(t tenant, idemKey, body string) reply {
		GinkgoHelper()
		return send(request{method: http.MethodPost, path: projectPath, key: t.key, body: body,
			header: map[string]string{apierror.IdempotencyKeyHeader: idemKey}})
	}

	It("answers a retried create with the first answer and creates one Metric", func() {
		first := postWithKey(t, "key-1", variantBody("ai", "float"))
		again := postWithKey(t, "key-1", variantBody("ai", "float"))
		Expect(again.status).To(Equal(first.status))
		Expect(again.body).To(MatchJSON(first.body))
		Expect(metricsIn(t.namespace)).To(HaveLen(1))
		Expect(metricsIn(t.namespace)[0].Annotations).To(HaveKeyWithValue(IdempotencyKeyAnnotation, "key-1"))
	})

	It("treats reordered fields and 4 versus 4.0 as the same request", func() {
		id := idOf(postWithKey(t, "key-2", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":4}`))
		Expect(idOf(postWithKey(t, "key-2", `{"passingThreshold":4.0,"outputType":"int","evalType":"human","name":"m"}`))).To(Equal(id))
		Expect(metricsIn(t.namespace)).To(HaveLen(1))
	})

	It("creates a new Metric for a new key, and without one", func() {
		a := idOf(postWithKey(t, "key-a", variantBody("human", "int")))
		b := idOf(postWithKey(t, "key-b", variantBody("human", "int")))
		c := idOf(postMetric(t, variantBody("human", "int")))
		d := idOf(postMetric(t, variantBody("human", "int")))
		Expect([]string{a, b, c, d}).To(HaveLen(4))
		Expect(map[string]bool{a: true, b: true, c: true, d: true}).To(HaveLen(4))
		Expect(metricsIn(t.namespace)).To(HaveLen(4))
	})

	It("scopes keys to the namespace of the API key", func() {
		other := newTenant()
		a := idOf(postWithKey(t, "shared", variantBody("human", "int")))
		b := idOf(postWithKey(other, "shared", variantBody("human", "int")))
		Expect(a).NotTo(Equal(b))
	})

	It("answers 422 when the key is reused for a different request", func() {
		Expect(postWithKey(t, "key-3", variantBody("human", "int")).status).To(Equal(http.StatusCreated))
		for _, rq := range []request{
			{method: http.MethodPost, path: projectPath, body: variantBody("human", "float")},
			{method: http.MethodPost, path: BasePath + "/projects/proj-2/metrics", body: variantBody("human", "int")},
		} {
			rq.key, rq.header = t.key, map[string]string{apierror.IdempotencyKeyHeader: "key-3"}
			rep := send(rq)
			Expect(rep.status).To(Equal(http.StatusUnprocessableEntity))
			Expect(apiErrorOf(rep)["code"]).To(Equal(apierror.CodeIdempotencyKeyReused))
		}
		Expect(metricsIn(t.namespace)).To(HaveLen(1))
	})

	It("gives concurrent retries one Metric and one answer", func() {
		const n = 20
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer GinkgoRecover()
				ids[i] = idOf(postWithKey(t, "key-4", variantBody("heuristic", "float")))
			})
		}
		wg.Wait()
		Expect(ids).To(HaveEach(ids[0]))
		Expect(metricsIn(t.namespace)).To(HaveLen(1))
	})

	It("works for both deletions", func() {
		for _, rq := range []request{
			{method: http.MethodPost, path: bulkDeletePath, body: `{"ids":["a"]}`},
			{method: http.MethodDelete, path: BasePath + "/testsets/ts-1"},
		} {
			rq.key, rq.header = t.key, map[string]string{apierror.IdempotencyKeyHeader: "del"}
			Expect(send(rq).status).To(Equal(http.StatusOK))
			Expect(send(rq).status).To(Equal(http.StatusOK))
		}
		Expect(deletionsIn(t.namespace)).To(Equal(2))
	})

	DescribeTable("answers 400 to a malformed key, and creates nothing",
		func(idemKey string) {
			expectValidationError(postWithKey(t, idemKey, variantBody("human", "int")), apierror.IdempotencyKeyHeader)
			Expect(metricsIn(t.namespace)).To(BeEmpty())
		},
		Entry("too long", strings.Repeat("k", 256)),
		Entry("with a space", "a b"),
		Entry("not ASCII", "schlüssel"),
	)

	It("lets a client recover a timed-out request by retrying with its key", func() {
		rep := sendTo(h.impatientURL, request{method: http.MethodPost, path: projectPath, key: t.key,
			body: variantBody("ai", "int"), header: map[string]string{apierror.IdempotencyKeyHeader: "slow"}})
		Expect(rep.status).To(Equal(http.StatusGatewayTimeout))
		e := apiErrorOf(rep)
		Expect(e["code"]).To(Equal(apierror.CodeUpstreamTimeout))
		Expect(e["details"]).To(And(
			HaveKeyWithValue("kind", "Metric"),
			HaveKeyWithValue("namespace", t.namespace),
			HaveKeyWithValue("name", HavePrefix("metric-")),
		))

		id := idOf(postWithKey(t, "slow", variantBody("ai", "int")))
		items := metricsIn(t.namespace)
		Expect(items).To(HaveLen(1))
		Expect(items[0].Name).To(Equal(e["details"].(map[string]any)["name"]))
		Expect(items[0].Status.ID).To(Equal(id))
	})
})
