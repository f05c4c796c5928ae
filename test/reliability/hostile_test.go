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

package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

// rssBudget is how much the manager's resident set may grow over a hostile run.
const rssBudget = 64 << 20

var _ = Describe("A hostile tenant", func() {
	It("stores no more than its budget, never gets a 500 or a stack trace, and leaves every kind printable as YAML",
		func(ctx SpecContext) {
			// A small budget, so the short run reaches it; the long run sends more of the same.
			const maxDeletions, maxMetrics = 3, 20
			f := newFixture(ctx)
			f.logLevel = "info"
			key := f.secrets[0]
			rest, err := framework.FreeAddr()
			Expect(err).NotTo(HaveOccurred())
			p := f.start("--serve-api="+rest, "--bulk-delete-batch-size=1000",
				fmt.Sprintf("--rest-tenant-max-testcase-deletions=%d", maxDeletions),
				fmt.Sprintf("--rest-tenant-max-metrics=%d", maxMetrics))
			base := "http://" + rest + "/api/v2"
			do := func(method, path string, body any) (int, error) {
				var payload bytes.Buffer
				if body != nil {
					Expect(json.NewEncoder(&payload).Encode(body)).To(Succeed())
				}
				req, err := http.NewRequestWithContext(ctx, method, base+path, &payload)
				Expect(err).NotTo(HaveOccurred())
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					return 0, err
				}
				_ = res.Body.Close()
				return res.StatusCode, nil
			}
			send := func(method, path string, body any) int {
				status, err := do(method, path, body)
				Expect(err).NotTo(HaveOccurred())
				return status
			}
			Eventually(func() (int, error) { return do(http.MethodGet, "/projects/p/metrics", nil) }).
				WithTimeout(30 * time.Second).Should(Equal(http.StatusOK))
			before, err := p.Memory()
			Expect(err).NotTo(HaveOccurred())

			statuses := map[int]int{}
			rounds := scale(maxDeletions+1, 40)
			for round := range rounds {
				// The largest valid requests: 10,000 ids of 128 characters, and a Metric with every text at its bound.
				ids := make([]string, 10000)
				for i := range ids {
					ids[i] = fmt.Sprintf("%06d-%03d-", i, round) + strings.Repeat("x", 117)
				}
				statuses[send(http.MethodPost, "/testcases/bulk-delete", map[string]any{"ids": ids})]++
				for range maxMetrics / 2 {
					statuses[send(http.MethodPost, "/projects/p/metrics", map[string]any{
						"name": strings.Repeat("n", 256), "description": strings.Repeat("d", 4096),
						"guidelines": strings.Repeat("g", 16384), "promptTemplate": strings.Repeat("p", 32768),
						"evalType": "ai", "outputType": "boolean",
					})]++
				}
				statuses[send(http.MethodGet, "/projects/p/metrics?limit=100", nil)]++
				statuses[send(http.MethodPost, "/projects/p/metrics", map[string]any{
					"name": "poison\u007f\uffff", "evalType": "human", "outputType": "boolean"})]++
			}
			after, err := p.Memory()
			Expect(err).NotTo(HaveOccurred())
			report := fmt.Sprintf("statuses %v, RSS %d -> %d MiB", statuses, before.Current>>20, after.Current>>20)
			AddReportEntry("hostile tenant", report)
			fmt.Fprintln(GinkgoWriter, "hostile tenant:", report)

			Expect(statuses).NotTo(HaveKey(BeNumerically(">=", 500)), report)
			Expect(statuses[http.StatusForbidden]).To(BeNumerically(">", 0), "the budget was reached: %s", report)
			Expect(after.Current-before.Current).To(BeNumerically("<", rssBudget), report)
			Expect(p.Output()).NotTo(Or(ContainSubstring("goroutine "), ContainSubstring("stacktrace")))

			var deletions v1alpha1.TestcaseDeletionList
			Expect(k8s.List(ctx, &deletions, client.InNamespace(f.ns))).To(Succeed())
			var metrics v1alpha1.MetricList
			Expect(k8s.List(ctx, &metrics, client.InNamespace(f.ns))).To(Succeed())
			Expect(len(deletions.Items)).To(BeNumerically("<=", maxDeletions))
			Expect(len(metrics.Items)).To(BeNumerically("<=", maxMetrics))
			expectPrintableAsYAML(ctx)
		})
})

// expectPrintableAsYAML does what `kubectl get <kind> -A -o yaml` does for
// every kind: the API server's JSON, turned into YAML by the same library.
func expectPrintableAsYAML(ctx context.Context) {
	GinkgoHelper()
	for _, kind := range []string{"MetricList", "TestsetDeletionList", "TestcaseDeletionList"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: v1alpha1.GroupVersion.Group, Version: "v1alpha1", Kind: kind})
		Expect(k8s.List(ctx, list)).To(Succeed())
		data, err := list.MarshalJSON()
		Expect(err).NotTo(HaveOccurred())
		_, err = yaml.JSONToYAML(data)
		Expect(err).NotTo(HaveOccurred(), "kubectl get %s -A -o yaml", kind)
	}
}
