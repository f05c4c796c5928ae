//go:build e2e

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

package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("The REST server", func() {
	It("answers a POST metric with 201 and a Metric resource", func(ctx SpecContext) {
		ns := newNamespace(ctx, "rest")
		key := framework.NewKey("e2e")
		createKeySecret(ctx, ns, "rest-key", key, true)
		addr, err := framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		startManager(ctx, "manager", "--serve-api="+addr)

		url := "http://" + addr + "/api/v2/projects/proj_e2e/metrics"
		body := `{"name": "Exact match", "evalType": "heuristic", "outputType": "boolean"}`
		var code int
		var answer []byte
		// Until the server listens and has seen the key Secret, the POST is
		// refused or 401; the Idempotency-Key makes retrying it safe.
		Eventually(func() (int, error) {
			code, answer, err = post(ctx, url, key, body)
			return code, err
		}).Should(Equal(http.StatusCreated), func() string { return string(answer) })

		var created evalapi.Metric
		Expect(json.Unmarshal(answer, &created)).To(Succeed())
		Expect(created.ID).NotTo(BeEmpty())
		Expect(created.Name).To(Equal("Exact match"))

		var list v1alpha1.MetricList
		Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		m := list.Items[0]
		// In standalone mode the answer follows the create, which records
		// the id; the reconciler writes status after it.
		Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, created.ID))
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&m), &m)).To(Succeed())
			g.Expect(m.Status.ID).To(Equal(created.ID))
		}).Should(Succeed())
		Expect(m.Spec.Name).To(Equal(v1alpha1.LineText("Exact match")))
		Expect(m.Spec.ProjectID).To(BeEquivalentTo("proj_e2e"))
		Expect(m.Spec.APIKeySecretRef).To(HaveValue(HaveField("Name", "rest-key")))
		Eventually(kstatusOf(ctx, v1alpha1.GroupVersion.WithKind("Metric"), client.ObjectKeyFromObject(&m))).
			Should(Equal(status.CurrentStatus))
	})

	It("lists, gets, updates and deletes Metrics, kubectl's included", func(ctx SpecContext) {
		ns := newNamespace(ctx, "rest-crud")
		key := framework.NewKey("e2e")
		createKeySecret(ctx, ns, "rest-key", key, true)
		addr, err := framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		startManager(ctx, "manager", "--serve-api="+addr)
		api := "http://" + addr + "/api/v2"

		// A Metric made with kubectl, once the manager gave it a remote id.
		m := framework.NewMetric(ns, "from-kubectl", 0)
		m.Spec.ProjectID = "proj_crud"
		m.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "rest-key", Key: "apiKey"}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return m.Status.ID
		}).ShouldNot(BeEmpty())

		var code int
		var answer []byte
		Eventually(func() (int, error) { // until the server listens and knows the key
			code, answer, err = call(ctx, http.MethodGet, api+"/projects/proj_crud/metrics?limit=10", key, "")
			return code, err
		}).Should(Equal(http.StatusOK), func() string { return string(answer) })
		var page evalapi.MetricPage
		Expect(json.Unmarshal(answer, &page)).To(Succeed())
		Expect(page.Data).To(HaveLen(1))
		Expect(page.Data[0].ID).To(Equal(m.Status.ID))
		Expect(page.HasMore).To(BeFalse())

		metric := api + "/metrics/" + m.Status.ID
		code, answer, err = call(ctx, http.MethodGet, metric, key, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), string(answer))
		Expect(answer).To(MatchJSON(mustJSON(page.Data[0])))

		code, answer, err = call(ctx, http.MethodPatch, metric, key,
			`{"evalType":"`+string(m.Spec.EvalType)+`","outputType":"`+string(m.Spec.OutputType)+`","name":"renamed"}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), string(answer))
		Expect(decodeJSON(answer)).To(HaveKeyWithValue("name", "renamed"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		Expect(m.Spec.Name).To(Equal(v1alpha1.LineText("renamed")), "kubectl sees the update")

		code, answer, err = call(ctx, http.MethodDelete, metric, key, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), string(answer))
		Expect(answer).To(MatchJSON(`{"success":true}`))
		var list v1alpha1.MetricList
		Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(BeEmpty())

		code, _, err = call(ctx, http.MethodGet, metric, key, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusNotFound))
	})

	It("serves an SDK's testset against a real service: created once there, its testcases synced", func(ctx SpecContext) {
		// A key of its own: the REST server refuses one that labelled Secrets
		// of two namespaces hold, as other specs' may.
		key := framework.NewKey("e2e")
		upstream := evalapitest.New(evalapitest.WithKeys(key))
		DeferCleanup(upstream.Close)
		ns := newNamespace(ctx, "rest-testsets")
		createKeySecret(ctx, ns, "rest-key", key, true)
		addr, err := framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		startManager(ctx, "manager", "--serve-api="+addr, "--api-url="+upstream.URL())
		api := "http://" + addr + "/api/v2"

		var code int
		var answer []byte
		Eventually(func() (int, error) { // until the server listens and knows the key
			code, answer, err = send(ctx, http.MethodPost, api+"/projects/proj_ts/testsets", key,
				`{"name":"QA","description":"","jsonSchema":{"type":"object"},
				"fieldMapping":{"inputs":["question"],"expected":["answer"],"metadata":[]}}`, "e2e-testset")
			return code, err
		}).Should(Equal(http.StatusCreated), func() string { return string(answer) })
		var ts evalapi.Testset
		Expect(json.Unmarshal(answer, &ts)).To(Succeed())
		remote, ok := upstream.Testset(ts.ID)
		Expect(ok).To(BeTrue(), "the answer's id is the service's")
		Expect(remote.Name).To(Equal("QA"))

		code, answer, err = call(ctx, http.MethodPost, api+"/testsets/"+ts.ID+"/testcases", key,
			`{"items":[{"jsonData":{"question":"2+2?","answer":"4"}},{"jsonData":{"question":"3+3?","answer":"6"}}]}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusCreated), string(answer))
		Expect(upstream.Testcases(ts.ID)).To(HaveLen(2), "answered once the reconciler synced them")
		for _, c := range upstream.Testcases(ts.ID) {
			Expect(decodeJSON(c.JSONData)).To(HaveKey("question"))
		}
		Expect(upstream.Calls("create_testset")).To(Equal(1))

		code, answer, err = call(ctx, http.MethodDelete, api+"/testsets/"+ts.ID, key, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), string(answer))
		_, ok = upstream.Testset(ts.ID)
		Expect(ok).To(BeFalse(), "deleting the resource deleted the service's Testset")
	})
})

// post sends a create to url as the holder of key, with an Idempotency-Key,
// and returns the answer.
func post(ctx context.Context, url, key, body string) (int, []byte, error) {
	return send(ctx, http.MethodPost, url, key, body, "e2e-post-metric")
}

// call sends a request to url as the holder of key and returns the answer.
func call(ctx context.Context, method, url, key, body string) (int, []byte, error) {
	return send(ctx, method, url, key, body, "")
}

func send(ctx context.Context, method, url, key, body, idempotencyKey string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

func mustJSON(v any) []byte {
	GinkgoHelper()
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return b
}

func decodeJSON(b []byte) map[string]any {
	GinkgoHelper()
	var v map[string]any
	Expect(json.Unmarshal(b, &v)).To(Succeed(), string(b))
	return v
}
