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

package tenancy

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

var rejectionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "evaloperator_rest_rejections_total",
	Help: "Requests the built-in REST server refused with 429 before doing anything, by reason: " +
		"inflight (the server is full), tenant_inflight (the key's namespace has its share in flight) " +
		"tenant_rate (the namespace is over its write rate), tenant_read_rate (over its read rate) or unauthenticated_rate (requests without a valid key, together).",
}, []string{"reason"})

func init() {
	metrics.Registry.MustRegister(rejectionsTotal)
}

// Why a request was refused admission: the label values of rejectionsTotal.
const (
	// RejectInflight: the server has MaxInflight requests in flight.
	RejectInflight = "inflight"
	// RejectTenantInflight: the namespace holds its share of them.
	RejectTenantInflight = "tenant_inflight"
	// RejectTenantRate: the namespace is over its write budget.
	RejectTenantRate = "tenant_rate"
	// RejectTenantReadRate: the namespace is over its read budget (GET).
	RejectTenantReadRate = "tenant_read_rate"
	// RejectUnauthenticatedRate: requests without a valid key, all together.
	RejectUnauthenticatedRate = "unauthenticated_rate"
)

// tenantShare is the share of the requests in flight one tenant may hold:
// a sixteenth, 4 of the default 64, half of the reconcilers' default 8
// workers, so a flooding tenant's admitted creates leave workers free for
// everyone else's.
const tenantShare = 16

// A request that finds its tenant's in-flight places taken waits in the
// tenant's own line, at most tenantQueueWait and behind at most
// tenantQueueDepth others, before it is refused: the SDKs send a run's
// records all at once (runAndEvaluate), and such a burst is served in turn
// rather than refused; the wait takes none of the server's places, so the
// other tenants do not see it.
const (
	tenantQueueWait  = 2 * time.Second
	tenantQueueDepth = 256
)

// unauthenticatedBudget is the one bucket every request without a valid key
// shares: answering 401 is cheap, but not free, so a stream of them cannot
// take the CPU from the tenants.
var unauthenticatedBudget = Rate{QPS: 80, Burst: 320}

// inflightRetryAfter is the Retry-After of a request refused because the
// server is full: requests in flight finish within milliseconds to the sync
// timeout, so a second is a fair first guess.
const inflightRetryAfter = 1

// Admission bounds the work the server takes on, before any body is read
// or anything written: requests in flight over the whole server, and the
// rate of each tenant (the namespace of its key's Secret), so one tenant that
// floods the server is refused without slowing the others down. Reads and
// writes have buckets of their own: a read is served from the manager's
// cache and costs the API server at most a bounded few GETs, while a write
// is an API-server write and, with a service, a call on its budget; so an
// SDK that pages a list does not spend the budget of its creates. Admission
// takes one token; a request that turns out to cost more pays the rest once
// its size is known (Charge). A tenant also holds at most a sixteenth of the
// requests in flight (tenantShare): its admitted requests wait for the
// reconciler, and could otherwise fill the server and the reconcilers'
// workers ahead of every other tenant's.
type Admission struct {
	inflight chan struct{}
	// tenantInflight is how many requests one tenant may have in flight;
	// queueWait how long one waits for a place.
	tenantInflight int
	queueWait      time.Duration
	writes, reads  Rate
	now            func() time.Time

	mu sync.Mutex
	// tenants holds each tenant's bucket and requests in flight; tenants are
	// namespaces holding a key Secret, so the map is as bounded as they are.
	tenants map[string]*tenantState
	// unauthenticated is the one bucket of every request without a valid
	// key (see enterUnauthenticated).
	unauthenticated *rate.Limiter
}

// Rate is a token bucket's refill rate and depth.
type Rate struct {
	QPS   float64
	Burst int
}

func (b Rate) limiter() *rate.Limiter { return rate.NewLimiter(rate.Limit(b.QPS), b.Burst) }

type tenantState struct {
	writes, reads *rate.Limiter
	inflight      int
	// waiting are the requests in the tenant's line; freed is closed, and
	// replaced, when one of its places is given back.
	waiting int
	freed   chan struct{}
}

// NewAdmission admits at most maxInflight requests at once, and each
// tenant's writes and reads at the rates writes and reads, on the clock now.
func NewAdmission(maxInflight int, writes, reads Rate, now func() time.Time) *Admission {
	return &Admission{
		inflight:        make(chan struct{}, maxInflight),
		tenantInflight:  max(1, maxInflight/tenantShare),
		queueWait:       tenantQueueWait,
		writes:          writes,
		reads:           reads,
		now:             now,
		tenants:         map[string]*tenantState{},
		unauthenticated: unauthenticatedBudget.limiter(),
	}
}

// Enter admits a request of tenant ("" for one without a valid key, which
// takes no tenant's tokens but the unauthenticated bucket's), a read or a
// write, or returns the 429 that refuses it. An admitted request calls the
// returned leave when it is done.
func (a *Admission) Enter(ctx context.Context, tenant string, write bool) (leave func(), refusal *apierror.Error) {
	leaveTenant, refusal := a.enterTenant(ctx, tenant, write)
	if refusal != nil {
		return nil, refusal
	}
	select {
	case a.inflight <- struct{}{}:
		return func() { <-a.inflight; leaveTenant(false) }, nil
	default:
		leaveTenant(true) // the tenant did not get to use its token
		return nil, tooManyRequests(RejectInflight, inflightRetryAfter,
			"The server has too many requests in flight")
	}
}

// enterTenant takes a token from tenant's bucket and one of its in-flight
// places, waiting in the tenant's line for a place (see tenantQueueWait);
// leave gives the place back, and the token too when refund is set. A
// refused request keeps neither.
func (a *Admission) enterTenant(ctx context.Context, tenant string, write bool) (leave func(refund bool), refusal *apierror.Error) {
	if tenant == "" {
		return a.enterUnauthenticated()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.tenants[tenant]
	if !ok {
		t = &tenantState{writes: a.writes.limiter(), reads: a.reads.limiter(), freed: make(chan struct{})}
		a.tenants[tenant] = t
	}
	if t.inflight >= a.tenantInflight && t.waiting >= tenantQueueDepth {
		return nil, tenantFull()
	}
	bucket, reason, kind := t.reads, RejectTenantReadRate, "reads"
	if write {
		bucket, reason, kind = t.writes, RejectTenantRate, "writes"
	}
	now := a.now()
	reservation := bucket.ReserveN(now, 1)
	if delay := reservation.DelayFrom(now); !reservation.OK() || delay > 0 {
		reservation.CancelAt(now)
		return nil, tooManyRequests(reason, retryAfterSeconds(delay),
			"This API key's namespace sends "+kind+" faster than the server admits")
	}
	if !a.waitForPlace(ctx, t) {
		reservation.CancelAt(now)
		return nil, tenantFull()
	}
	t.inflight++
	return func(refund bool) {
		a.mu.Lock()
		defer a.mu.Unlock()
		t.inflight--
		close(t.freed)
		t.freed = make(chan struct{})
		if refund {
			reservation.CancelAt(now)
		}
	}, nil
}

// waitForPlace waits, a.mu held on entry and return, until t has an
// in-flight place free, for at most queueWait; it reports whether one is.
func (a *Admission) waitForPlace(ctx context.Context, t *tenantState) bool {
	if t.inflight < a.tenantInflight {
		return true
	}
	t.waiting++
	defer func() { t.waiting-- }()
	timer := time.NewTimer(a.queueWait)
	defer timer.Stop()
	for t.inflight >= a.tenantInflight {
		freed := t.freed
		a.mu.Unlock()
		select {
		case <-freed:
			a.mu.Lock()
		case <-timer.C:
			a.mu.Lock()
			return t.inflight < a.tenantInflight
		case <-ctx.Done():
			a.mu.Lock()
			return false
		}
	}
	return true
}

func tenantFull() *apierror.Error {
	return tooManyRequests(RejectTenantInflight, inflightRetryAfter,
		"This API key's namespace has too many requests in flight")
}

// Charge draws n more reads or writes from tenant's budget, for an
// admitted request that costs more than the one admission paid for: a bulk
// deletion sends the service a call per batch, a Metric the cache holds
// without its texts is read whole from the API server, and a Metric with
// long texts is written whole (see TextCost). The
// bucket may go into debt: the tenant's next requests of the kind are
// refused until it is paid, so however large its requests, a tenant costs
// the service and the API server no more than its budget. refund gives the
// tokens back, for a request that ended up creating nothing.
func (a *Admission) Charge(tenant string, write bool, n int) (refund func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.tenants[tenant]
	if n <= 0 || t == nil {
		return func() {}
	}
	bucket, b := t.reads, a.reads
	if write {
		bucket, b = t.writes, a.writes
	}
	now := a.now()
	var drawn []*rate.Reservation
	for n > 0 { // a reservation holds at most a burst
		k := min(n, max(1, b.Burst))
		drawn = append(drawn, bucket.ReserveN(now, k))
		n -= k
	}
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, r := range slices.Backward(drawn) {
			r.CancelAt(now)
		}
	}
}

// TextCostUnit is the text one read or one write of a tenant's budget pays
// for. A Metric read whole costs one read per started unit of its texts, and
// a create or update of a Metric one write per started unit: the API server
// and the manager decode, validate and encode the whole object at each of its
// writes and watch events, so the largest Metrics (53 KB of texts in the
// spec, 74 KB with the status) cost 13 to 18 times a small one, and are
// paid in proportion.
const TextCostUnit = 4 << 10

// TextCost is what reading m whole, or writing it, costs a tenant's budget.
func TextCost(m *evaluationv1alpha1.Metric) int {
	return max(1, (m.TextBytes()+TextCostUnit-1)/TextCostUnit)
}

// retryAfterSeconds rounds a bucket's delay up to whole seconds, at least 1.
func retryAfterSeconds(delay time.Duration) int {
	if delay <= 0 || delay == rate.InfDuration {
		return 1
	}
	return max(1, int(math.Ceil(delay.Seconds())))
}

func tooManyRequests(reason string, retryAfter int, message string) *apierror.Error {
	rejectionsTotal.WithLabelValues(reason).Inc()
	e := apierror.New(http.StatusTooManyRequests, evalapi.CodeRateLimited,
		fmt.Sprintf("%s; retry in %d s", message, retryAfter), map[string]any{"reason": reason})
	e.Header = http.Header{"Retry-After": {strconv.Itoa(retryAfter)}}
	return e
}

// Admit wraps an operation's handler with the checks every request passes
// before its handler runs: one Authorization header at most, then
// admission, the tenant being the namespace keys grant the request.
func (a *Admission) Admit(keys *Keyring, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.Header.Values("Authorization")) > 1 {
			apierror.Write(w, r, apierror.Validation(apierror.Field{Field: "Authorization",
				Message: "must be sent once"}).Response())
			return
		}
		leave, refusal := a.Enter(r.Context(), keys.tenant(r), isWrite(r.Method))
		if refusal != nil {
			apierror.Write(w, r, refusal.Response())
			return
		}
		defer leave()
		next.ServeHTTP(w, r)
	})
}

// isWrite reports whether a request of method may write: everything but a
// read is budgeted as a write.
func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead
}

// tenant is the namespace the request's key grants, or "" when the key is
// missing or unknown: the handler answers that 401 itself.
func (k *Keyring) tenant(r *http.Request) string {
	secret, ok, err := k.KeyOf(r)
	if err != nil || !ok {
		return ""
	}
	return secret.Namespace
}

// enterUnauthenticated admits a request without a valid key from the bucket
// all such requests share: a 401 costs no API-server request, but a stream
// of them must not take the CPU. It holds tenantShare tenants' worth of
// tokens, so people with a mistyped key are rarely refused, and takes no
// in-flight place of its own beyond the server's bound.
func (a *Admission) enterUnauthenticated() (leave func(refund bool), refusal *apierror.Error) {
	now := a.now()
	reservation := a.unauthenticated.ReserveN(now, 1)
	if delay := reservation.DelayFrom(now); !reservation.OK() || delay > 0 {
		reservation.CancelAt(now)
		return nil, tooManyRequests(RejectUnauthenticatedRate, retryAfterSeconds(delay),
			"Requests without a valid API key arrive faster than the server admits")
	}
	return func(refund bool) {
		if refund {
			reservation.CancelAt(now)
		}
	}, nil
}
