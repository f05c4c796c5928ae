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
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/quote"
)

// A tenant's footprint is bounded per namespace and per kind, in objects;
// the CRDs bound each object's size, so objects times that size bounds the
// bytes (docs/rest-api.md, "Bounding what a tenant stores"). The budget is
// checked from the cache before the create: the check and a reservation
// are one step under the namespace's ledger lock, the create runs outside
// it, so a namespace's creates overlap and requests in flight together
// still cannot each see room for one more. A ResourceQuota sized from the
// same numbers (the chart's and config/namespaced's) is the API server's
// hard limit behind it, for creates through other replicas and for kubectl.

// Budget is how many objects of each kind the server creates in one
// namespace at most (kubectl's objects count too).
type Budget struct {
	Metrics, Testsets, EvaluationRuns, TestsetDeletions, TestcaseDeletions int
}

// DefaultBudget is the budget of every namespace unless set otherwise:
// at most 500 x 75 KiB of Metrics, 500 x 2 KiB of TestsetDeletions and
// 20 x 1.3 MiB of TestcaseDeletions, about 64 MiB of objects in all, 68 MiB
// of etcd (docs/reliability.md measures it), 100 Testsets, which keep
// their testcases in a ConfigMap or a Flux source unless they are few, and
// 500 EvaluationRuns of at most about 20 KiB (counts, never records), or
// about 105 KiB for a standalone run whose 50 Metrics each scored 10,000
// records (85 KB of bits: 500,000 score writes, 2.8 hours of the write budget).
var DefaultBudget = Budget{Metrics: 500, Testsets: 100, EvaluationRuns: 500, TestsetDeletions: 500, TestcaseDeletions: 20}

// CodeQuotaExceeded: the namespace holds as many objects of the kind as its
// budget or ResourceQuota allows; retrying does not help until some are deleted.
const CodeQuotaExceeded = "QUOTA_EXCEEDED"

// CodeForbidden: the Kubernetes API server refused the write because the
// namespace is being deleted.
const CodeForbidden = "FORBIDDEN"

// limitOf returns the budget of kind and a list to count it with.
func (b Budget) limitOf(kind string) (int, client.ObjectList) {
	switch kind {
	case "Metric":
		return b.Metrics, &evaluationv1alpha1.MetricList{}
	case "Testset":
		return b.Testsets, &evaluationv1alpha1.TestsetList{}
	case "EvaluationRun":
		return b.EvaluationRuns, &evaluationv1alpha1.EvaluationRunList{}
	case "TestsetDeletion":
		return b.TestsetDeletions, &evaluationv1alpha1.TestsetDeletionList{}
	default:
		return b.TestcaseDeletions, &evaluationv1alpha1.TestcaseDeletionList{}
	}
}

func (b Budget) withDefaults() Budget {
	if b.Metrics <= 0 {
		b.Metrics = DefaultBudget.Metrics
	}
	if b.Testsets <= 0 {
		b.Testsets = DefaultBudget.Testsets
	}
	if b.EvaluationRuns <= 0 {
		b.EvaluationRuns = DefaultBudget.EvaluationRuns
	}
	if b.TestsetDeletions <= 0 {
		b.TestsetDeletions = DefaultBudget.TestsetDeletions
	}
	if b.TestcaseDeletions <= 0 {
		b.TestcaseDeletions = DefaultBudget.TestcaseDeletions
	}
	return b
}

// checkBudget admits the create of req when the namespace's budget of the
// kind has room, or when req replays an earlier create (same
// Idempotency-Key), which creates nothing. It reads the cache only: no
// API-server request. An admitted create holds a reservation until it
// calls settle, once, with whether it created the object; the
// namespace's other creates count it meanwhile, and run alongside it.
func (s *Server) checkBudget(ctx context.Context, ep *endpoint, req parsedRequest) (settle func(created bool), err error) {
	limit, list := s.opts.Budget.limitOf(ep.kind)
	name := req.obj.GetName() // nameResource named it
	ledger := s.ledgers.acquire(req.obj.GetNamespace(), ep.kind)
	settle = func(created bool) {
		ledger.settle(name, created, s.opts.Now())
		s.ledgers.release(ledger)
	}
	room, err := s.reserve(ctx, ledger, list, limit, ep, req)
	if err != nil || !room {
		s.ledgers.release(ledger)
	}
	if err != nil {
		return nil, fmt.Errorf("counting %s objects: %w", ep.kind, err)
	}
	if !room {
		return nil, quotaExceeded(fmt.Sprintf("This namespace holds %d %s objects, its budget; delete some before creating more", limit, ep.kind),
			map[string]any{"kind": ep.kind, "limit": limit})
	}
	return settle, nil
}

// reserve counts the objects of the kind under the ledger's lock and, when
// there is room (or req replays an earlier create), reserves one for req.
func (s *Server) reserve(ctx context.Context, l *ledger, list client.ObjectList, limit int, ep *endpoint, req parsedRequest) (
	bool, error,
) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cached, err := s.held(ctx, ep, list, req.obj.GetNamespace())
	if err != nil {
		return false, err
	}
	room := l.count(cached, s.opts.Now()) < limit
	if !room && req.idemKey != "" {
		room = s.opts.Cache.Get(ctx, client.ObjectKeyFromObject(req.obj), ep.newObject()) == nil
	}
	if room {
		l.reserved[req.obj.GetName()]++
	}
	return room, nil
}

// held reads the names of what the cache holds of ep's kind in namespace.
// Where the informer shows its index (a cache of all namespaces), they are
// read from the namespace index and no object is copied: listing a namespace
// of thousands would copy every object, under the ledger's lock, for each
// create. Otherwise (a cache limited by --watch-namespaces) it lists.
func (s *Server) held(ctx context.Context, ep *endpoint, list client.ObjectList, namespace string) (*heldNames, error) {
	informer, err := s.opts.Cache.GetInformer(ctx, ep.newObject())
	if err != nil {
		return nil, err
	}
	h := &heldNames{}
	add := func(o any) error {
		m, err := meta.Accessor(o)
		if err == nil {
			h.names = append(h.names, m.GetName())
		}
		return err
	}
	if ix, ok := informer.(interface{ GetIndexer() toolscache.Indexer }); ok {
		objs, err := ix.GetIndexer().ByIndex(toolscache.NamespaceIndex, namespace)
		if err != nil {
			return nil, err
		}
		h.names = make([]string, 0, len(objs))
		for _, o := range objs {
			if err := add(o); err != nil {
				return nil, err
			}
		}
		return h, nil
	}
	if err := s.opts.Cache.List(ctx, list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	h.names = make([]string, 0, meta.LenList(list))
	return h, meta.EachListItem(list, func(o runtime.Object) error { return add(o) })
}

// heldNames is what the cache held of one kind in one namespace at one
// moment: the objects' names, and a set of them built the first time it is
// asked for one.
type heldNames struct {
	names []string
	set   map[string]bool
}

func (h *heldNames) len() int { return len(h.names) }

func (h *heldNames) has(name string) bool {
	if h.set == nil {
		h.set = make(map[string]bool, len(h.names))
		for _, n := range h.names {
			h.set[n] = true
		}
	}
	return h.set[name]
}

// unseenFor is how long a create this server made counts against the
// budget while the cache does not show it: the cache normally shows it
// within milliseconds; an object deleted before it ever did is forgotten
// after this.
const unseenFor = 30 * time.Second

// ledgers holds a ledger per namespace and kind that has a create in
// flight or one the cache has not shown yet.
type ledgers struct {
	mu sync.Mutex
	m  map[ledgerKey]*ledger
}

type ledgerKey struct{ namespace, kind string }

// ledger counts one namespace's creates of one kind that the cache does
// not show yet: those in flight (reserved) and those made here (unseen).
// Its lock is held only to check the budget and reserve.
type ledger struct {
	key ledgerKey
	// users is how many requests hold the ledger; guarded by ledgers.mu.
	users int

	mu sync.Mutex
	// reserved counts the creates in flight, by name; guarded by mu.
	reserved map[string]int
	// unseen holds the names created here and not yet in the cache, with
	// when; guarded by mu.
	unseen map[string]time.Time
}

// acquire returns the ledger of namespace and kind, held until release.
func (ls *ledgers) acquire(namespace, kind string) *ledger {
	k := ledgerKey{namespace, kind}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = map[ledgerKey]*ledger{}
	}
	l := ls.m[k]
	if l == nil {
		l = &ledger{key: k, reserved: map[string]int{}, unseen: map[string]time.Time{}}
		ls.m[k] = l
	}
	l.users++
	return l
}

// release lets go of l, and forgets it when nobody holds it and it counts
// nothing the cache does not show.
func (ls *ledgers) release(l *ledger) {
	l.mu.Lock()
	empty := len(l.unseen) == 0 && len(l.reserved) == 0
	l.mu.Unlock()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l.users--
	if l.users == 0 && empty {
		delete(ls.m, l.key)
	}
}

// settle ends the reservation of a create of name, which created the
// object (at now) or not.
func (l *ledger) settle(name string, created bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reserved[name]--; l.reserved[name] <= 0 {
		delete(l.reserved, name)
	}
	if created {
		l.unseen[name] = now
	}
}

// count is how many objects count against the budget: those the cache
// holds, and those in flight or created here that it does not show yet,
// each once. It forgets what the cache shows, and creates unseen for
// longer than unseenFor. The caller holds l.mu.
func (l *ledger) count(cached *heldNames, now time.Time) int {
	n := cached.len()
	for name, at := range l.unseen {
		switch {
		case cached.has(name), now.Sub(at) > unseenFor:
			delete(l.unseen, name)
		case l.reserved[name] == 0:
			n++
		}
	}
	for name, inFlight := range l.reserved {
		if !cached.has(name) {
			n += inFlight
		}
	}
	return n
}

func quotaExceeded(message string, details map[string]any) *apiError {
	e := newAPIError(http.StatusForbidden, CodeQuotaExceeded, message, details)
	e.header = http.Header{ShouldRetryHeader: {"false"}}
	return e
}

// forbiddenWrite maps the API server's Forbidden answer to a create that
// is the tenant's situation, a full ResourceQuota or a namespace being
// deleted, to a 403 that says why, and is nil for any other error: another
// Forbidden (RBAC) is the server's own fault, a 500. failure logs the
// refusal once, at V(1), without a stack trace.
func forbiddenWrite(err error) *apiError {
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) {
		return nil
	}
	st := status.Status()
	message := "The Kubernetes API server refused the write: " + quote.Bounded(st.Message)
	var e *apiError
	switch {
	case strings.Contains(st.Message, "exceeded quota"): // the quota admission plugin's wording
		e = quotaExceeded(message, nil)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		e = newAPIError(http.StatusForbidden, CodeForbidden, message, nil)
		e.header = http.Header{ShouldRetryHeader: {"false"}}
	default:
		return nil
	}
	e.note = err
	return e
}
