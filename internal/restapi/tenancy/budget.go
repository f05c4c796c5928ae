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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/internal/kinds"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
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

// Budget is how many objects of each kind (by kind name, as kinds.All
// names it) the server creates in one namespace at most (kubectl's objects
// count too).
type Budget map[string]int

// DefaultBudget is the budget of every namespace unless set otherwise:
// each kind's kinds.Info.TenantMax.
func DefaultBudget() Budget {
	b := Budget{}
	for _, k := range kinds.Budgeted() {
		b[k.Kind] = k.TenantMax
	}
	return b
}

// withDefaults is b with DefaultBudget's limit for each kind it does not set.
func (b Budget) withDefaults() Budget {
	out := DefaultBudget()
	for kind, n := range b {
		if n > 0 {
			out[kind] = n
		}
	}
	return out
}

// Quotas holds each namespace to its budget of objects of each kind.
type Quotas struct {
	budget Budget
	// cache is where the objects are counted: the manager's.
	cache cache.Cache
	now   func() time.Time
	// ledgers serialise each namespace's creates of a kind.
	ledgers ledgers
}

// NewQuotas holds namespaces to budget (a kind it does not set takes
// DefaultBudget's limit),
// counting what c holds, on the clock now.
func NewQuotas(budget Budget, c cache.Cache, now func() time.Time) *Quotas {
	return &Quotas{budget: budget.withDefaults(), cache: c, now: now}
}

// Reserve admits the create of obj, of kind, when the namespace's budget of
// the kind has room, or when the create is a replay of an earlier one (same
// Idempotency-Key), which creates nothing. It reads the cache only: no
// API-server request. An admitted create holds a reservation until it
// calls settle, once, with whether it created the object; the
// namespace's other creates count it meanwhile, and run alongside it.
func (q *Quotas) Reserve(ctx context.Context, kind string, obj client.Object, replay bool) (settle func(created bool), err error) {
	limit, ok := q.budget[kind]
	if !ok {
		return nil, fmt.Errorf("no budget for kind %s", kind)
	}
	name := obj.GetName()
	ledger := q.ledgers.acquire(obj.GetNamespace(), kind)
	settle = func(created bool) {
		ledger.settle(name, created, q.now())
		q.ledgers.release(ledger)
	}
	room, err := q.reserve(ctx, ledger, limit, kind, obj, replay)
	if err != nil || !room {
		q.ledgers.release(ledger)
	}
	if err != nil {
		return nil, fmt.Errorf("counting %s objects: %w", kind, err)
	}
	if !room {
		return nil, apierror.QuotaExceeded(fmt.Sprintf("This namespace holds %d %s objects, its budget; delete some before creating more", limit, kind),
			map[string]any{"kind": kind, "limit": limit})
	}
	return settle, nil
}

// reserve counts the objects of the kind under the ledger's lock and, when
// there is room (or obj's create is a replay), reserves one for obj.
func (q *Quotas) reserve(ctx context.Context, l *ledger, limit int, kind string, obj client.Object, replay bool) (bool, error) {
	info, ok := kinds.Of(kind)
	if !ok || info.New == nil {
		return false, fmt.Errorf("no objects of kind %s to count", kind)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cached, err := q.held(ctx, info, obj.GetNamespace(), l.pending)
	if err != nil {
		return false, err
	}
	room := l.count(cached, q.now()) < limit
	if !room && replay {
		room = q.cache.Get(ctx, client.ObjectKeyFromObject(obj), info.New()) == nil
	}
	if room {
		l.reserved[obj.GetName()]++
	}
	return room, nil
}

// held is what the cache holds of kind in namespace: how many objects, and
// which of the names asked about. Where the informer shows its index (a
// cache of all namespaces), the objects are read from the namespace index
// as stored (no copy; its keys would come sorted) and no set of the
// namespace's names is built, since this runs under the ledger's lock for
// each create in a namespace that may hold thousands. Otherwise (a cache
// limited by --watch-namespaces) it lists.
func (q *Quotas) held(ctx context.Context, kind kinds.Info, namespace string, asked func(name string) bool) (*heldNames, error) {
	informer, err := q.cache.GetInformer(ctx, kind.New())
	if err != nil {
		return nil, err
	}
	h := &heldNames{}
	add := func(o any) error {
		m, err := meta.Accessor(o)
		if err == nil {
			h.add(m.GetName(), asked)
		}
		return err
	}
	if ix, ok := informer.(interface{ GetIndexer() toolscache.Indexer }); ok {
		objs, err := ix.GetIndexer().ByIndex(toolscache.NamespaceIndex, namespace)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if err := add(o); err != nil {
				return nil, err
			}
		}
		return h, nil
	}
	list := kind.NewList()
	if err := q.cache.List(ctx, list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return h, meta.EachListItem(list, func(o runtime.Object) error { return add(o) })
}

// heldNames is what the cache held of one kind in one namespace at one
// moment: how many objects, and which of the names asked about.
type heldNames struct {
	n    int
	held map[string]bool
}

// add counts an object the cache holds, name, and notes it if asked about it.
func (h *heldNames) add(name string, asked func(name string) bool) {
	h.n++
	if asked(name) {
		if h.held == nil {
			h.held = map[string]bool{}
		}
		h.held[name] = true
	}
}

func (h *heldNames) len() int { return h.n }

// has reports whether the cache held name, one of the names asked about.
func (h *heldNames) has(name string) bool { return h.held[name] }

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

// pending reports whether a create of name is in flight or unseen here:
// the names count asks the cache about. The caller holds l.mu.
func (l *ledger) pending(name string) bool {
	_, unseen := l.unseen[name]
	return l.reserved[name] > 0 || unseen
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
