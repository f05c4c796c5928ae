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
			Expect(ids).To(HaveKey(m.Status.ID))
		}
	})
})
