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
		Expect(m.Status.ID).To(Equal(created.ID))
		Expect(m.Spec.Name).To(Equal("Exact match"))
		Expect(m.Spec.ProjectID).To(BeEquivalentTo("proj_e2e"))
		Expect(m.Spec.APIKeySecretRef).To(HaveValue(HaveField("Name", "rest-key")))
		Eventually(kstatusOf(ctx, v1alpha1.GroupVersion.WithKind("Metric"), client.ObjectKeyFromObject(&m))).
			Should(Equal(status.CurrentStatus))
	})
})

// post sends body to url as the holder of key and returns the answer.
func post(ctx context.Context, url, key, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "e2e-post-metric")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}
