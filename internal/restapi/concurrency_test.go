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
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Concurrent requests", func() {
	It("answers 300 concurrent creates, one Metric per 201 and each with its own id", func() {
		const n = 300
		t := newTenant()
		variants := [][2]string{{"ai", "int"}, {"human", "float"}, {"heuristic", "boolean"}}
		replies := make([]reply, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				v := variants[i%len(variants)]
				replies[i], errs[i] = h.do(context.Background(), h.url, request{
					method: http.MethodPost, path: projectPath, key: t.key, body: variantBody(v[0], v[1]),
				})
			})
		}
		wg.Wait()

		ids := map[string]bool{}
		for i, rep := range replies {
			Expect(errs[i]).NotTo(HaveOccurred())
			ids[idOf(rep)] = true
		}
		Expect(ids).To(HaveLen(n))
		items := metricsIn(t.namespace)
		Expect(items).To(HaveLen(n))
		for _, m := range items {
			Expect(ids).To(HaveKey(m.RecordedID())) // status.id follows from the reconciler
		}
	})
})
