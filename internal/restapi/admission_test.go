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
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/internal/trimcache"
	"github.com/eval-operator/eval-operator/test/framework"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// rejections is how many requests were refused admission for reason, as the
// server's metrics report them.
func rejections(reason string) float64 {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "evaloperator_rest_rejections_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// expectRateLimited expects a 429 RATE_LIMITED for reason, with Retry-After.
func expectRateLimited(rep reply, reason, retryAfter string) {
	GinkgoHelper()
	Expect(rep.status).To(Equal(http.StatusTooManyRequests), "body: %s", rep.body)
	Expect(rep.header.Get("Retry-After")).To(Equal(retryAfter))
	Expect(rep.header.Get(apierror.ShouldRetryHeader)).To(Equal("true"), "nothing was written")
	e := apiErrorOf(rep)
	Expect(e["code"]).To(Equal(evalapi.CodeRateLimited))
	Expect(e["details"]).To(HaveKeyWithValue("reason", reason))
}

var _ = Describe("Admission control", func() {
	Describe("per tenant", func() {
		var (
			clock *fakeClock
			url   string
			srv   *Server
		)
		BeforeEach(func() {
			clock = &fakeClock{now: time.Unix(1_000_000, 0)}
			var err error
			// Buckets of 2 that refill one token in 100s: the third read, or
			// the third write, is refused.
			srv, url, err = addServer(h.mgr, 30*time.Second, ctrl.Log, func(o *Options) {
				o.TenantQPS, o.TenantBurst, o.Now = 0.01, 2, clock.Now
				o.TenantReadQPS, o.TenantReadBurst = 0.01, 2
			})
			Expect(err).NotTo(HaveOccurred())
		})

		waitKnown := func(t tenant) {
			GinkgoHelper()
			Eventually(func() bool { _, ok, _ := srv.keys.Lookup(t.key); return ok }).Should(BeTrue())
		}
		list := func(t tenant) reply {
			GinkgoHelper()
			return sendTo(url, request{method: http.MethodGet, path: projectPath, key: t.key})
		}

		It("answers 429 with Retry-After over a tenant's bucket, before writing, and leaves other tenants alone", func() {
			a, b := newTenant(), newTenant()
			waitKnown(a)
			waitKnown(b)
			before := rejections(tenancy.RejectTenantReadRate)

			Expect(list(a).status).To(Equal(http.StatusOK))
			Expect(list(a).status).To(Equal(http.StatusOK))
			expectRateLimited(list(a), tenancy.RejectTenantReadRate, "100")
			Expect(rejections(tenancy.RejectTenantReadRate) - before).To(BeEquivalentTo(1))

			Expect(list(b).status).To(Equal(http.StatusOK), "another namespace has a bucket of its own")

			clock.Step(100 * time.Second)
			Expect(list(a).status).To(Equal(http.StatusOK), "the bucket refilled after Retry-After")
		})

		It("budgets writes apart from reads, and refuses a write over its bucket before writing", func() {
			a := newTenant()
			waitKnown(a)
			post := func() reply {
				return sendTo(url, request{method: http.MethodPost, path: projectPath, key: a.key, body: variantBody("human", "int")})
			}
			before := rejections(tenancy.RejectTenantRate)
			Expect(list(a).status).To(Equal(http.StatusOK))
			Expect(list(a).status).To(Equal(http.StatusOK))
			expectRateLimited(list(a), tenancy.RejectTenantReadRate, "100")

			Expect(post().status).To(Equal(http.StatusCreated), "reads spent nothing of the write bucket")
			Expect(post().status).To(Equal(http.StatusCreated))
			expectRateLimited(post(), tenancy.RejectTenantRate, "100")
			Expect(metricsIn(a.namespace)).To(HaveLen(2), "the refused write wrote nothing")
			Expect(rejections(tenancy.RejectTenantRate) - before).To(BeEquivalentTo(1))
		})

		It("does not charge requests without a valid key to a tenant", func() {
			a := newTenant()
			waitKnown(a)
			for range 5 {
				expectUnauthorized(sendTo(url, request{method: http.MethodGet, path: projectPath, key: framework.NewKey("unknown")}))
				expectUnauthorized(sendTo(url, request{method: http.MethodGet, path: projectPath}))
			}
			Expect(list(a).status).To(Equal(http.StatusOK))
			Expect(list(a).status).To(Equal(http.StatusOK))
		})
	})

	It("never refuses a sequential client below 50 writes or 200 reads a second with the defaults", func() {
		now := time.Unix(1_000_000, 0)
		o := Options{}
		Expect(defaultAdmission(&o)).To(Succeed())
		a := tenancy.NewAdmission(o.MaxInflight, tenancy.Rate{QPS: o.TenantQPS, Burst: o.TenantBurst},
			tenancy.Rate{QPS: o.TenantReadQPS, Burst: o.TenantReadBurst}, func() time.Time { return now })
		send := func(write bool, perSecond int) {
			GinkgoHelper()
			for range 60 * perSecond { // a minute of one request after another
				leave, refusal := a.Enter(context.Background(), "sdk", write)
				Expect(refusal).NotTo(HaveOccurred())
				leave()
				now = now.Add(time.Second / time.Duration(perSecond))
			}
		}
		send(true, 50)
		send(false, 200)
		admitted := 0
		for range 1000 { // at one instant: only the burst passes
			leave, refusal := a.Enter(context.Background(), "flood", true)
			if refusal != nil {
				Expect(refusal.Details).To(HaveKeyWithValue("reason", tenancy.RejectTenantRate))
				break
			}
			leave()
			admitted++
		}
		Expect(admitted).To(Equal(DefaultTenantBurst), "writes are bounded by the burst")
	})

})

var _ = Describe("Protocol details", func() {
	It("answers 401 with an RFC 6750 challenge naming an invalid token", func() {
		rep := send(request{method: http.MethodGet, path: projectPath})
		expectUnauthorized(rep)
		Expect(rep.header.Get("WWW-Authenticate")).To(Equal(`Bearer realm="eval-operator"`))

		rep = send(request{method: http.MethodGet, path: projectPath, key: framework.NewKey("unknown")})
		expectUnauthorized(rep)
		Expect(rep.header.Get("WWW-Authenticate")).To(Equal(`Bearer realm="eval-operator", error="invalid_token"`))
	})

	It("answers 400 to more than one Authorization header, even when both hold the key", func() {
		t := newTenant()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, h.url+projectPath, nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Add("Authorization", "Bearer "+t.key)
		req.Header.Add("Authorization", "Bearer "+t.key)
		res, err := h.http.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = res.Body.Close() }()
		Expect(res.StatusCode).To(Equal(http.StatusBadRequest))
	})

	It("is ready for /readyz only once it listens and has listed the keys", func() {
		unstarted, err := New(h.server.opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(unstarted.ReadyCheck(nil)).NotTo(Succeed())
		Expect(h.server.ReadyCheck(nil)).To(Succeed(), "the suite's server answers requests")
	})
})

var _ = Describe("What a request costs its tenant's budget", func() {
	var clock *fakeClock
	BeforeEach(func() { clock = &fakeClock{now: time.Unix(1_000_000, 0)} })

	// serve runs a server with connector, a write and a read bucket of 20
	// that refill one token a second, and waits until it knows t's key.
	serve := func(t tenant, connector Connector) string {
		GinkgoHelper()
		srv, url := runServer(Options{Connector: connector, Reader: h.mgr.GetAPIReader(), Now: clock.Now,
			TenantQPS: 1, TenantBurst: 20, TenantReadQPS: 1, TenantReadBurst: 20})
		Eventually(func() bool { _, ok, _ := srv.keys.Lookup(t.key); return ok }).Should(BeTrue())
		return url
	}
	bulkDelete := func(url string, t tenant, n int, header ...map[string]string) reply {
		GinkgoHelper()
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("tc-%d", i)
		}
		body, err := json.Marshal(map[string]any{"ids": ids})
		Expect(err).NotTo(HaveOccurred())
		rq := request{method: http.MethodPost, path: bulkDeletePath, key: t.key, body: string(body)}
		if len(header) > 0 {
			rq.header = header[0]
		}
		return sendTo(url, rq)
	}
	createMetric := func(url string, t tenant) reply {
		return sendTo(url, request{method: http.MethodPost, path: projectPath, key: t.key, body: variantBody("human", "int")})
	}

	It("charges a bulk deletion one write per call it sends the service: a standalone one, none but its own", func() {
		fake := evalapitest.New()
		DeferCleanup(fake.Close)
		svc, err := evalapi.NewClient(evalapi.Options{BaseURL: fake.URL()})
		Expect(err).NotTo(HaveOccurred())
		// The manager's reconcilers are standalone: the deletion completes
		// at once; this server charges what the service would be sent.
		remoteService := remote.NewConnector(h.mgr.GetAPIReader(), remote.Defaults{Service: svc, BulkDeleteBatchSize: 100})

		t := newTenant()
		url := serve(t, remoteService)
		idem := map[string]string{apierror.IdempotencyKeyHeader: "bulk-1"}
		Expect(bulkDelete(url, t, 1000, idem).status).To(Equal(http.StatusOK))
		Expect(bulkDelete(url, t, 1000, idem).status).To(Equal(http.StatusOK), "a replay")
		// 10 batches, and the replay's own write, which sends nothing: 11 of
		// the 20 writes are spent.
		for range 9 {
			Expect(createMetric(url, t).status).To(Equal(http.StatusCreated))
		}
		expectRateLimited(createMetric(url, t), tenancy.RejectTenantRate, "1")

		clock.Step(time.Minute)
		Expect(bulkDelete(url, t, 10_000).status).To(Equal(http.StatusOK))
		// 100 batches: the bucket of 20 is 80 writes in debt, paid in 81 s.
		expectRateLimited(createMetric(url, t), tenancy.RejectTenantRate, "81")
		clock.Step(81 * time.Second)
		Expect(createMetric(url, t).status).To(Equal(http.StatusCreated))

		standalone := newTenant()
		url = serve(standalone, standaloneConnector(h.mgr))
		Expect(bulkDelete(url, standalone, 10_000).status).To(Equal(http.StatusOK))
		Expect(createMetric(url, standalone).status).To(Equal(http.StatusCreated), "a standalone deletion sends the service nothing")
	})

	It("charges a create of a large Metric one read whole, not one for each change it waits through", func() {
		// A Metric with more than 1 KiB of texts is cached without them from
		// the start; its create sees it change several times (created,
		// id recorded, Ready) before it answers.
		t := newTenant()
		url := serve(t, nil)
		body := fmt.Sprintf(`{"name":"m","evalType":"human","outputType":"boolean","guidelines":%q}`, strings.Repeat("g", 16000))
		Expect(sendTo(url, request{method: http.MethodPost, path: projectPath, key: t.key, body: body}).status).To(Equal(http.StatusCreated))
		list := func() reply { return sendTo(url, request{method: http.MethodGet, path: projectPath, key: t.key}) }
		// The answer read it whole Ready, 8 reads (16,000 bytes in spec and
		// status): 12 of 20 left. Each page costs 1 + 8, so the second goes
		// 6 into debt, paid with the next read's token in 7 s. A read at each
		// change as well (4 or 8 each) would leave too few for the second page.
		Expect(list().status).To(Equal(http.StatusOK))
		Expect(list().status).To(Equal(http.StatusOK))
		expectRateLimited(list(), tenancy.RejectTenantReadRate, "7")
	})

	It("charges a create or an update of a Metric one write per 4 KiB of its texts", func() {
		t := newTenant()
		url := serve(t, nil)
		large := fmt.Sprintf(`{"name":"m","evalType":"human","outputType":"boolean","guidelines":%q}`, strings.Repeat("g", 16000))
		create := func(body string) reply {
			return sendTo(url, request{method: http.MethodPost, path: projectPath, key: t.key, body: body})
		}
		// 16,000 bytes of guidelines: 4 writes each, 20 for five. At 3 or
		// fewer the sixth request would be admitted; at 5 the fifth refused.
		first := create(large)
		for i := range 4 {
			Expect(create(large).status).To(Equal(http.StatusCreated), "create %d", i+2)
		}
		expectRateLimited(create(variantBody("human", "int")), tenancy.RejectTenantRate, "1")

		// An update writes the whole Metric, whatever it changes: 16,000
		// bytes in its spec and 16,000 in its status are 8 writes. Of a full
		// bucket 12 are left, three large creates.
		clock.Step(time.Minute)
		rep := sendTo(url, request{method: http.MethodPatch, path: metricPath(idOf(first)), key: t.key, body: `{"evalType":"human","outputType":"boolean","name":"renamed"}`})
		Expect(rep.status).To(Equal(http.StatusOK))
		for i := range 3 {
			Expect(create(large).status).To(Equal(http.StatusCreated), "create %d after the update", i)
		}
		expectRateLimited(create(variantBody("human", "int")), tenancy.RejectTenantRate, "1")
	})

	It("charges a Metric read whole from the API server one read per 4 KiB of its texts", func() {
		// Five Metrics with 16,000 characters of guidelines each (in spec and
		// status, 8 units), and five with none; settled, so the cache holds
		// them without their texts and a page reads each whole.
		large, small := newTenant(), newTenant()
		for _, t := range []tenant{large, small} {
			body := variantBody("human", "boolean")
			if t == large {
				body = fmt.Sprintf(`{"name":"m","evalType":"human","outputType":"boolean","guidelines":%q}`, strings.Repeat("g", 16000))
			}
			for range 5 {
				Expect(send(request{method: http.MethodPost, path: projectPath, key: t.key, body: body}).status).To(Equal(http.StatusCreated))
			}
			Eventually(func(g Gomega) {
				var l evaluationv1alpha1.MetricList
				g.Expect(h.mgr.GetCache().List(context.Background(), &l, client.InNamespace(t.namespace))).To(Succeed())
				g.Expect(l.Items).To(HaveLen(5))
				g.Expect(l.Items).To(HaveEach(WithTransform(func(m evaluationv1alpha1.Metric) bool { return trimcache.Trimmed(&m) }, BeTrue())))
			}).Should(Succeed())
		}
		list := func(url string, t tenant) reply {
			return sendTo(url, request{method: http.MethodGet, path: projectPath, key: t.key})
		}

		url := serve(small, nil)
		Expect(list(url, small).status).To(Equal(http.StatusOK))
		Expect(list(url, small).status).To(Equal(http.StatusOK), "a page of 5 small Metrics cost 6 reads of 20")

		whole := metricsIn(large.namespace)[0]
		Expect(tenancy.TextCost(&whole)).To(Equal(8), "32,000 bytes of texts")
		url = serve(large, nil)
		Expect(list(url, large).status).To(Equal(http.StatusOK))
		// The page cost 1 + 5 x 8 reads: 21 more than the bucket held, paid
		// in 22 s before the next read.
		expectRateLimited(list(url, large), tenancy.RejectTenantReadRate, "22")
	})
})
