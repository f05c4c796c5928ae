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
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/test/framework"
)

// podMemoryLimit is the chart's memory limit of the manager.
const podMemoryLimit = 256 << 20

var _ = Describe("A tenant flooding the REST server", func() {
	const (
		floodInflight = 200
		// The other tenant sends in its write budget (a quarter of
		// --api-qps, 5 a second by default): one request at a time, four a
		// second.
		politeInterval = 250 * time.Millisecond
	)

	// Under `make test` only what is not timing is asserted: every answer
	// to the polite tenant is 201. The long run (RELIABILITY_LONG) also
	// holds its p50 and p99 during the flood to 2x those alone, with 600
	// requests a phase, so that p99 is not one of the few slowest requests.
	// Every fourth request of the flood is a list, as an SDK that pages
	// between its creates sends.
	It("is refused with 429 while another tenant gets its 201s, as fast as alone", func(ctx SpecContext) {
		politeRequests := scale(50, 600)
		f := newFixture(ctx)
		keyA := f.secrets[0]
		// The budget of objects is not under test: B's 1,200 creates fit.
		keyB, nsB, p, c := f.serveTwoTenants(ctx, "relb", floodInflight, "--rest-tenant-max=Metric=5000")

		alone := c.polite(ctx, keyB, "alone", politeRequests, politeInterval)

		// A floods at its default budget for as long as B's second phase
		// lasts, so that every one of B's requests meets the flood: 200
		// workers, each waiting out a 429's Retry-After (1 s) as the official
		// SDKs do, keep A's budget spent. (The hostile tenant's test floods
		// without waiting.)
		statusesA, listsA := &statusCounts{}, &statusCounts{}
		stop := make(chan struct{})
		floodDone := make(chan time.Duration, 1)
		var sent atomic.Int64
		go func() {
			defer GinkgoRecover()
			start := time.Now()
			var wg sync.WaitGroup
			failures := make(chan error, floodInflight)
			for range floodInflight {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						i := sent.Add(1)
						var status int
						var err error
						if i%4 == 3 {
							status, err = c.list(ctx, keyA)
							listsA.add(status)
						} else {
							status, err = c.post(ctx, keyA, fmt.Sprintf("flood-a-%07d", i))
							statusesA.add(status)
						}
						if err != nil {
							failures <- err
							return
						}
						if status == http.StatusTooManyRequests {
							time.Sleep(time.Second)
						}
					}
				})
			}
			wg.Wait()
			close(failures)
			for err := range failures {
				Expect(err).NotTo(HaveOccurred(), "a request of the flooding tenant failed (a timeout?)")
			}
			floodDone <- time.Since(start)
		}()
		during := c.polite(ctx, keyB, "during", politeRequests, politeInterval)
		close(stop)
		floodTime := <-floodDone
		floodRequests := sent.Load()

		mem, err := p.Memory()
		Expect(err).NotTo(HaveOccurred())

		counts := statusesA.snapshot()
		AddReportEntry("flood", fmt.Sprintf(
			"A: %d requests (a list every fourth), %d in flight, in %s: POSTs %v, lists %v; B: %d POSTs at %s intervals: p50/p99 alone %s/%s (%v), "+
				"during the flood %s/%s (%v); manager peak RSS %d MiB",
			floodRequests, floodInflight, floodTime.Round(time.Millisecond), counts, listsA.snapshot(),
			politeRequests, politeInterval, alone.pct(50), alone.pct(99), alone.counts(), during.pct(50), during.pct(99),
			during.counts(), mem.Peak>>20), ReportEntryVisibilityAlways)
		Expect(alone.statuses).To(HaveEach(http.StatusCreated))
		Expect(during.statuses).To(HaveEach(http.StatusCreated), "the polite tenant was refused")
		Expect(during.statuses).To(HaveLen(politeRequests))
		if long {
			Expect(during.pct(50)).To(BeNumerically("<=", 2*alone.pct(50)), "the flood slowed the polite tenant down")
			Expect(during.pct(99)).To(BeNumerically("<=", 2*alone.pct(99)), "the flood slowed the polite tenant down")
		}
		for status := range counts {
			Expect(status).To(BeElementOf(http.StatusCreated, http.StatusTooManyRequests))
		}
		for status := range listsA.snapshot() {
			Expect(status).To(BeElementOf(http.StatusOK, http.StatusTooManyRequests))
		}
		Expect(counts[http.StatusTooManyRequests]).To(BeNumerically(">", 0), "the flood was never refused")
		Expect(mem.Peak).To(BeNumerically("<", podMemoryLimit))

		s := f.expectSettled(ctx, counts[http.StatusCreated], 2*time.Minute)
		b := *f
		b.ns = nsB
		sB := b.expectSettled(ctx, 2*politeRequests, 2*time.Minute)
		f.expectNoDuplicates()
		AddReportEntry("flood: Metrics", fmt.Sprintf("A %d Ready, B %d Ready, %d CreateOutcomeUnknown",
			s.ready, sB.ready, s.unknown+sB.unknown), ReportEntryVisibilityAlways)
		Expect(s.unknown + sB.unknown).To(BeZero())
	}, SpecTimeout(15*time.Minute))
})

// restClient sends requests to the manager's REST server.
type restClient struct {
	base string
	http *http.Client
}

// newRESTClient is a client of the REST server at addr holding up to
// conns connections.
func newRESTClient(addr string, conns int) *restClient {
	return &restClient{base: "http://" + addr + "/api/v2", http: &http.Client{
		Timeout:   time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns},
	}}
}

// serveTwoTenants starts a manager serving the REST API, with args, to the
// fixture's namespace and a second tenant's, and waits until it accepts both
// keys. It returns the second tenant's key and namespace, the manager, and a
// client holding up to conns connections.
func (f *fixture) serveTwoTenants(ctx context.Context, prefix string, conns int, args ...string) (
	key, ns string, p *framework.MeteredManager, c *restClient) {
	GinkgoHelper()
	f.logLevel = "info" // request logs would cost the flooded manager more than its answers
	key = framework.NewKey(prefix)
	f.secrets = append(f.secrets, key)
	f.server.SetKeys(f.secrets...)
	ns, err := framework.NewNamespace(ctx, k8s, prefix, key)
	Expect(err).NotTo(HaveOccurred())
	rest, err := framework.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	p = f.start(append([]string{"--serve-api=" + rest}, args...)...)
	c = newRESTClient(rest, conns)
	for _, k := range f.secrets {
		Eventually(c.list).WithArguments(ctx, k).WithTimeout(30 * time.Second).Should(Equal(http.StatusOK))
	}
	return key, ns, p, c
}

// metricsPath is the project the specs' Metrics are created in.
const metricsPath = "/projects/proj-testbed/metrics"

// send sends body (if any) to path with key, and returns the answer.
func (c *restClient) send(ctx context.Context, method, path, key string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = res.Body.Close() }()
	answer, err := io.ReadAll(res.Body)
	return res.StatusCode, answer, err
}

func (c *restClient) list(ctx context.Context, key string) (int, error) {
	status, _, err := c.send(ctx, http.MethodGet, metricsPath, key, nil)
	return status, err
}

func (c *restClient) post(ctx context.Context, key, name string) (int, error) {
	status, _, err := c.send(ctx, http.MethodPost, metricsPath, key,
		[]byte(`{"name":"`+name+`","evalType":"human","outputType":"boolean"}`))
	return status, err
}

// politeRun is what a tenant that stays in its quota saw.
type politeRun struct {
	statuses  []int
	latencies []time.Duration
}

// polite sends n POSTs one at a time, one per interval, as a client within
// its rate does.
func (c *restClient) polite(ctx context.Context, key, prefix string, n int, interval time.Duration) politeRun {
	GinkgoHelper()
	var run politeRun
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := range n {
		start := time.Now()
		status, err := c.post(ctx, key, fmt.Sprintf("polite-%s-%04d", prefix, i))
		Expect(err).NotTo(HaveOccurred())
		run.statuses = append(run.statuses, status)
		run.latencies = append(run.latencies, time.Since(start))
		select {
		case <-tick.C:
		case <-ctx.Done():
			Fail(errors.Join(errors.New("stopped"), ctx.Err()).Error())
		}
	}
	return run
}

// counts are the run's answers by status code.
func (r politeRun) counts() map[int]int {
	c := map[int]int{}
	for _, s := range r.statuses {
		c[s]++
	}
	return c
}

// pct is the p-th percentile latency, rounded to 0.1 ms.
func (r politeRun) pct(p int) time.Duration {
	sorted := slices.Sorted(slices.Values(r.latencies))
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, i-1)].Round(100 * time.Microsecond)
}

// statusCounts counts answers by status code.
type statusCounts struct {
	mu     sync.Mutex
	counts map[int]int
}

func (s *statusCounts) add(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts = map[int]int{}
	}
	s.counts[status]++
}

func (s *statusCounts) snapshot() map[int]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.counts)
}
