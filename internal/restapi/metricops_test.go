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
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/test/framework"
)

func metricPath(id string) string { return BasePath + "/metrics/" + url.PathEscape(id) }

// createdID posts a valid Metric of the variant and returns its remote id.
func createdID(t tenant, evalType, outputType string) string {
	GinkgoHelper()
	rep := postMetric(t, variantBody(evalType, outputType))
	Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
	return idOf(rep)
}

// metricByID is the resource whose remote id is id, read from the API
// server; nil when there is none.
func metricByID(t tenant, id string) *evaluationv1alpha1.Metric {
	GinkgoHelper()
	for _, m := range metricsIn(t.namespace) {
		if m.RecordedID() == id {
			return &m
		}
	}
	return nil
}

func getMetric(t tenant, id string) reply {
	GinkgoHelper()
	return send(request{method: http.MethodGet, path: metricPath(id), key: t.key})
}

func patchMetric(t tenant, id, body string) reply {
	GinkgoHelper()
	return send(request{method: http.MethodPatch, path: metricPath(id), key: t.key, body: body})
}

func deleteMetric(t tenant, id string) reply {
	GinkgoHelper()
	return send(request{method: http.MethodDelete, path: metricPath(id), key: t.key})
}

func listMetrics(t tenant, query string) reply {
	GinkgoHelper()
	return send(request{method: http.MethodGet, path: projectPath + query, key: t.key})
}

func pageOf(rep reply) evalapi.MetricPage {
	GinkgoHelper()
	Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
	var p evalapi.MetricPage
	Expect(json.Unmarshal(rep.body, &p)).To(Succeed())
	return p
}

func expectNotFound(rep reply) {
	GinkgoHelper()
	Expect(rep.status).To(Equal(http.StatusNotFound), "body: %s", rep.body)
	Expect(apiErrorOf(rep)["code"]).To(Equal(evalapi.CodeNotFound))
}

// kubectlMetric creates Metric "from-kubectl" as kubectl apply would, in
// projectPath's project, and waits for its remote id.
func kubectlMetric(t tenant) string {
	GinkgoHelper()
	m := framework.NewMetric(t.namespace, "from-kubectl", 0)
	m.Spec.ProjectID = "proj-1"
	m.Spec.APIKeySecretRef = &evaluationv1alpha1.SecretKeySelector{Name: t.secret, Key: "apiKey"}
	Expect(h.k8s.Create(context.Background(), m)).To(Succeed())
	Eventually(func(g Gomega) string {
		g.Expect(h.k8s.Get(context.Background(), client.ObjectKeyFromObject(m), m)).To(Succeed())
		return m.Status.ID
	}).ShouldNot(BeEmpty())
	return m.Status.ID
}

var _ = Describe("GET /metrics/{metricId}", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	It("answers the Metric as its create did", func() {
		created := postMetric(t, variantBody("ai", "float"))
		Expect(created.status).To(Equal(http.StatusCreated))
		rep := getMetric(t, idOf(created))
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(rep.body).To(MatchJSON(created.body))
	})

	It("finds a Metric made with kubectl", func() {
		id := kubectlMetric(t)
		rep := getMetric(t, id)
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(decodeAny(rep.body)).To(HaveKeyWithValue("name", "from-kubectl"))
	})

	It("answers 404 NOT_FOUND to an unknown id, and to another namespace's Metric", func() {
		expectNotFound(getMetric(t, "met_unknown"))
		id := createdID(newTenant(), "human", "int")
		expectNotFound(getMetric(t, id))
	})

	It("answers 401 without a valid key", func() {
		id := createdID(t, "human", "int")
		expectUnauthorized(send(request{method: http.MethodGet, path: metricPath(id)}))
		expectUnauthorized(getMetric(tenant{key: framework.NewKey("nobody")}, id))
	})
})

var _ = Describe("GET /projects/{projectId}/metrics", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	It("lists the project's Metrics newest first, with the total, and nothing of other projects or namespaces", func() {
		ids := map[string]bool{createdID(t, "human", "int"): true, createdID(t, "ai", "boolean"): true}
		ids[kubectlMetric(t)] = true
		Expect(send(request{method: http.MethodPost, path: BasePath + "/projects/proj-2/metrics", key: t.key,
			body: variantBody("human", "float")}).status).To(Equal(http.StatusCreated))
		createdID(newTenant(), "human", "int")

		p := pageOf(listMetrics(t, ""))
		Expect(p.Total).To(HaveValue(Equal(3)))
		Expect(p.HasMore).To(BeFalse())
		Expect(p.NextCursor).To(BeNil())
		Expect(p.Data).To(HaveLen(3))
		positions := make([]position, 0, len(p.Data))
		for _, m := range p.Data {
			Expect(ids).To(HaveKey(m.ID))
			positions = append(positions, positionOf(metricByID(t, m.ID)))
		}
		for i := 1; i < len(positions); i++ {
			Expect(positions[i-1].compare(positions[i])).To(BeNumerically("<", 0), "newest first")
		}
	})

	It("answers an empty page for a project without Metrics", func() {
		rep := listMetrics(t, "")
		Expect(rep.body).To(MatchJSON(`{"data":[],"nextCursor":null,"hasMore":false,"total":0}`))
	})

	It("pages with an opaque cursor, skipping and repeating nothing while Metrics are added", func() {
		const before, during = 7, 6
		for range before {
			createdID(t, "human", "boolean")
		}
		all := metricsIn(t.namespace)

		var wg sync.WaitGroup
		defer wg.Wait()
		for range during {
			wg.Go(func() {
				defer GinkgoRecover()
				createdID(t, "heuristic", "int")
			})
		}
		seen := map[string]int{}
		query := "?limit=2"
		for pages := 0; ; pages++ {
			Expect(pages).To(BeNumerically("<", before+during), "paging ends")
			p := pageOf(listMetrics(t, query))
			Expect(len(p.Data)).To(BeNumerically("<=", 2))
			for _, m := range p.Data {
				seen[m.ID]++
			}
			if !p.HasMore {
				Expect(p.NextCursor).To(BeNil())
				break
			}
			query = "?limit=2&cursor=" + url.QueryEscape(*p.NextCursor)
		}
		for id, n := range seen {
			Expect(n).To(Equal(1), "Metric %s listed %d times", id, n)
		}
		for _, m := range all {
			Expect(seen).To(HaveKey(m.RecordedID()), "a Metric that existed before paging was skipped")
		}
	})

	DescribeTable("answers 400 VALIDATION_ERROR to a bad query",
		func(query, field string) { expectValidationError(listMetrics(t, query), field) },
		Entry("limit 0", "?limit=0", "limit"),
		Entry("limit 101", "?limit=101", "limit"),
		Entry("a word for limit", "?limit=ten", "limit"),
		Entry("a cursor it never issued", "?cursor=not-a-cursor", "cursor"),
	)

	It("accepts limits 1 and 100 and defaults to 20", func() {
		for range 21 {
			Expect(h.k8s.Create(context.Background(), apiMetric(t))).To(Succeed())
		}
		Eventually(func() int { return *pageOf(listMetrics(t, "?limit=100")).Total }).Should(Equal(21))
		Expect(pageOf(listMetrics(t, "")).Data).To(HaveLen(20))
		Expect(pageOf(listMetrics(t, "?limit=1")).Data).To(HaveLen(1))
		// Once the cache holds them without their texts, a page reads at most
		// maxReadsPerPage of them whole: it ends early, with a cursor.
		Eventually(func() int { return len(pageOf(listMetrics(t, "?limit=100")).Data) }).Should(Equal(maxReadsPerPage))
		page := pageOf(listMetrics(t, "?limit=100"))
		Expect(page.HasMore).To(BeTrue())
		cursor, err := base64.RawURLEncoding.DecodeString(*page.NextCursor)
		Expect(err).NotTo(HaveOccurred())
		for _, m := range metricsIn(t.namespace) {
			Expect(string(cursor)).NotTo(ContainSubstring(m.Name), "the cursor shows no resource's name")
		}
		Expect(pageOf(listMetrics(t, "?limit=100&cursor="+url.QueryEscape(*page.NextCursor))).Data).To(HaveLen(1))
	})

	It("reads the Metrics a page needs whole from the API server's watch cache, not from etcd", func(ctx SpecContext) {
		for range maxReadsPerPage + 1 {
			Expect(h.k8s.Create(ctx, apiMetric(t))).To(Succeed())
		}
		// Once the cache holds them without their texts, a page reads them whole.
		Eventually(func() int { return len(pageOf(listMetrics(t, "?limit=100")).Data) }).Should(Equal(maxReadsPerPage))
		before := etcdMetricReads(ctx)
		Expect(pageOf(listMetrics(t, "?limit=100")).Data).To(HaveLen(maxReadsPerPage))
		// The reconciler may read one or two meanwhile; each read from etcd
		// would be one per Metric on the page.
		Expect(etcdMetricReads(ctx) - before).To(BeNumerically("<", maxReadsPerPage/2))
	})

	It("answers 401 without a key", func() {
		expectUnauthorized(send(request{method: http.MethodGet, path: projectPath}))
	})
})

// etcdMetricReads is how many single Metrics the API server has read from
// etcd, from its own metrics.
func etcdMetricReads(ctx context.Context) int {
	GinkgoHelper()
	cs, err := kubernetes.NewForConfig(h.cfg)
	Expect(err).NotTo(HaveOccurred())
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	for line := range strings.Lines(string(raw)) {
		if strings.HasPrefix(line, "etcd_request_duration_seconds_count{") && strings.Contains(line, `operation="get"`) &&
			strings.Contains(line, `group="evaluation.eval-operator.dev"`) && strings.Contains(line, `resource="metrics"`) {
			fields := strings.Fields(line)
			n, err := strconv.Atoi(fields[len(fields)-1])
			Expect(err).NotTo(HaveOccurred())
			return n
		}
	}
	Fail("the API server's metrics have no count of its etcd reads of Metrics")
	return 0
}

// apiMetric is a valid human/int Metric of projectPath's project using t's key.
func apiMetric(t tenant) *evaluationv1alpha1.Metric {
	m := framework.NewMetric(t.namespace, "", 3)
	m.GenerateName, m.Spec.Name = "m-", "m"
	m.Spec.ProjectID = "proj-1"
	m.Spec.APIKeySecretRef = &evaluationv1alpha1.SecretKeySelector{Name: t.secret, Key: "apiKey"}
	return m
}

var _ = Describe("PATCH /metrics/{metricId}", func() {
	var t tenant
	var id string
	BeforeEach(func() {
		t = newTenant()
		rep := postMetric(t, `{"name":"judge","description":"d","evalType":"ai","outputType":"int",
			"guidelines":"g","promptTemplate":"p {{outputs.response}}","temperature":0.5,"passingThreshold":3}`)
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		id = idOf(rep)
	})

	It("changes the fields sent and keeps the others, and answers once synced", func() {
		rep := patchMetric(t, id, `{"evalType":"ai","outputType":"int","name":"judge 2","promptTemplate":"q"}`)
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		m := metricByID(t, id)
		Expect(m.Spec.Name).To(Equal(evaluationv1alpha1.LineText("judge 2")))
		Expect(m.Spec.PromptTemplate).To(Equal(ptr.To[evaluationv1alpha1.Text]("q")))
		Expect(m.Spec.Description).To(Equal(ptr.To[evaluationv1alpha1.Text]("d")))
		Expect(m.Spec.Guidelines).To(Equal(ptr.To[evaluationv1alpha1.Text]("g")))
		Expect(m.Spec.Temperature).To(Equal(ptr.To(0.5)))
		Expect(m.Spec.PassingThreshold).To(Equal(ptr.To(3.0)))
		Expect(m.Spec.EvalModelName).To(BeNil(), "a default left to the service stays unset")
		Expect(m.Generation).To(BeEquivalentTo(2))
		Expect(decodeAny(rep.body)).To(And(HaveKeyWithValue("id", id), HaveKeyWithValue("name", "judge 2"),
			HaveKeyWithValue("promptTemplate", "q")))
		Expect(rep.body).To(MatchJSON(getMetric(t, id).body), "the answer is the Metric as GET shows it")
	})

	It("clears the description with null", func() {
		Expect(patchMetric(t, id, `{"evalType":"ai","outputType":"int","description":null}`).status).To(Equal(http.StatusOK))
		Expect(metricByID(t, id).Spec.Description).To(BeNil())
	})

	It("changes the variant, dropping the fields the new one lacks", func() {
		rep := patchMetric(t, id, `{"evalType":"heuristic","outputType":"boolean"}`)
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		spec := metricByID(t, id).Spec
		Expect(spec.EvalType).To(BeEquivalentTo("heuristic"))
		Expect(spec.OutputType).To(BeEquivalentTo("boolean"))
		Expect(spec.PromptTemplate).To(BeNil())
		Expect(spec.Temperature).To(BeNil())
		Expect(spec.PassingThreshold).To(BeNil())
		Expect(spec.Name).To(Equal(evaluationv1alpha1.LineText("judge")))
		Expect(spec.Guidelines).To(Equal(ptr.To[evaluationv1alpha1.Text]("g")))
		Expect(decodeAny(rep.body)).To(And(HaveKeyWithValue("evalType", "heuristic"), Not(HaveKey("promptTemplate")),
			Not(HaveKey("temperature")), Not(HaveKey("passingThreshold"))))
	})

	It("keeps a threshold only on the same scale", func() {
		Expect(patchMetric(t, id, `{"evalType":"human","outputType":"int"}`).status).To(Equal(http.StatusOK))
		Expect(metricByID(t, id).Spec.PassingThreshold).To(Equal(ptr.To(3.0)))
		// From int (1 to 5) to float (0 to 1), 3 would mean something else.
		Expect(patchedSpec(metricByID(t, id).Spec, evalapi.MetricUpdate{EvalType: "human", OutputType: "float"}).
			PassingThreshold).To(BeNil())
	})

	It("edits a Metric made with kubectl", func() {
		kid := kubectlMetric(t)
		Expect(patchMetric(t, kid, `{"evalType":"ai","outputType":"int","guidelines":"new"}`).status).To(Equal(http.StatusOK))
		Expect(metricByID(t, kid).Spec.Guidelines).To(Equal(ptr.To[evaluationv1alpha1.Text]("new")))
	})

	DescribeTable("answers 400 VALIDATION_ERROR naming the field, and changes nothing",
		func(body, field string) {
			expectValidationError(patchMetric(t, id, body), field)
			Expect(metricByID(t, id).Generation).To(BeEquivalentTo(1))
		},
		Entry("no evalType", `{"outputType":"int","name":"n"}`, "evalType"),
		Entry("no outputType", `{"evalType":"ai","name":"n"}`, "outputType"),
		Entry("an unknown field", `{"evalType":"ai","outputType":"int","colour":"red"}`, "colour"),
		Entry("a string for a number", `{"evalType":"ai","outputType":"int","temperature":"1"}`, "temperature"),
		Entry("an empty name", `{"evalType":"ai","outputType":"int","name":""}`, "name"),
		Entry("an unknown evalType", `{"evalType":"robot","outputType":"int"}`, "evalType"),
		Entry("temperature above 2", `{"evalType":"ai","outputType":"int","temperature":2.5}`, "temperature"),
		Entry("a field the new variant lacks", `{"evalType":"human","outputType":"int","temperature":1}`, "temperature"),
		Entry("ai without a promptTemplate it never had", `{"evalType":"ai","outputType":"int","promptTemplate":""}`, "promptTemplate"),
		Entry("a fractional int threshold", `{"evalType":"ai","outputType":"int","passingThreshold":3.5}`, "passingThreshold"),
		Entry("an empty body", ``, "body"),
	)

	It("answers 404 to an unknown id and to another namespace's Metric, and changes nothing", func() {
		other := newTenant()
		body := `{"evalType":"human","outputType":"int"}`
		expectNotFound(patchMetric(other, id, body))
		expectNotFound(patchMetric(t, "met_unknown", body))
		Expect(metricByID(t, id).Generation).To(BeEquivalentTo(1))
	})
})

var _ = Describe("DELETE /metrics/{metricId}", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	It("deletes the resource and answers success once it is gone; then the id is not found", func() {
		id := createdID(t, "heuristic", "float")
		rep := deleteMetric(t, id)
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(rep.body).To(MatchJSON(`{"success":true}`))
		Expect(metricsIn(t.namespace)).To(BeEmpty())
		expectNotFound(deleteMetric(t, id))
		expectNotFound(getMetric(t, id))
	})

	It("deletes a Metric made with kubectl", func() {
		Expect(deleteMetric(t, kubectlMetric(t)).status).To(Equal(http.StatusOK))
		Expect(metricsIn(t.namespace)).To(BeEmpty())
	})

	It("answers 404 to another namespace's Metric and leaves it alone", func() {
		other := newTenant()
		id := createdID(other, "human", "int")
		expectNotFound(deleteMetric(t, id))
		Expect(metricsIn(other.namespace)).To(HaveLen(1))
	})
})

var _ = Describe("The OpenAPI document", func() {
	It("describes exactly the routes and methods served", func() {
		served := map[string]bool{}
		for _, op := range h.server.operations(nil) {
			// The gate webhooks are Flagger's contract, not the API's.
			if !strings.HasPrefix(op.route, tenancy.GatesPath) {
				served[op.method+" "+op.route] = true
			}
		}
		documented := map[string]bool{}
		for path, item := range spec.Paths.Map() {
			for method := range item.Operations() {
				documented[method+" "+BasePath+path] = true
			}
		}
		Expect(documented).To(Equal(served))
	})
})

var _ = Describe("Retries by the official SDKs", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	// sdkPost posts as the SDKs do: up to 2 retries of 408, 409, 429 and
	// 5xx, x-should-retry overruling the status either way.
	sdkPost := func(header map[string]string) (last reply, attempts int) {
		GinkgoHelper()
		for attempts = 1; ; attempts++ {
			var err error
			last, err = h.do(context.Background(), h.impatientURL, request{method: http.MethodPost,
				path: projectPath, key: t.key, body: variantBody("human", "int"), header: header})
			Expect(err).NotTo(HaveOccurred())
			retry := last.status == http.StatusRequestTimeout || last.status == http.StatusConflict ||
				last.status == http.StatusTooManyRequests || last.status >= http.StatusInternalServerError
			if v := last.header.Get(apierror.ShouldRetryHeader); v != "" {
				retry = v == "true"
			}
			if !retry || attempts == 3 {
				return last, attempts
			}
		}
	}

	It("makes exactly one Metric per request when the reconciler is slower than the sync timeout", func() {
		const n = 5
		for range n {
			rep, attempts := sdkPost(nil)
			Expect(rep.status).To(Equal(http.StatusGatewayTimeout))
			Expect(rep.header.Get(apierror.ShouldRetryHeader)).To(Equal("false"))
			Expect(attempts).To(Equal(1))
		}
		Expect(metricsIn(t.namespace)).To(HaveLen(n))
	})

	It("retries a request with an Idempotency-Key, which replays it", func() {
		const n = 3
		for i := range n {
			rep, attempts := sdkPost(map[string]string{apierror.IdempotencyKeyHeader: "sdk-" + strconv.Itoa(i)})
			// A replay may find the Metric reconciled by then and answer it.
			Expect(rep.status).To(BeElementOf(http.StatusGatewayTimeout, http.StatusCreated), "body: %s", rep.body)
			if rep.status == http.StatusGatewayTimeout {
				Expect(rep.header.Get(apierror.ShouldRetryHeader)).To(Equal("true"))
				Expect(attempts).To(Equal(3))
			}
		}
		Expect(metricsIn(t.namespace)).To(HaveLen(n))
	})
})
