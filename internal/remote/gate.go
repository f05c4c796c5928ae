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

package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
)

// busyRetry is when an object whose service has every place for requests in
// flight taken tries again.
const busyRetry = time.Second

// maxTickets bounds the turns a gate keeps for objects that have not come
// back for them; past it, turns long overdue are dropped.
const maxTickets = 4096

// Limits bound the requests sent to one service.
type Limits struct {
	// QPS is the rate of requests; zero or less means no limit.
	QPS float64
	// Burst is how many requests may be sent at once above QPS.
	Burst int
	// MaxInFlight bounds the requests in flight at once; zero or less means no bound.
	MaxInFlight int
	// Timeout bounds each request; zero means DefaultTimeout.
	Timeout time.Duration
}

// Throttled is the error of a call held back by its service's own limits:
// nothing was sent. The object tries again After from now; meanwhile its
// worker serves other objects, so a slow or saturated service never holds
// the workers that other services' objects wait for.
type Throttled struct {
	After time.Duration
	// Service names the service, for the log.
	Service string
}

func (e *Throttled) Error() string {
	return fmt.Sprintf("waiting %s for a turn at the client-side limits of %s", e.After, e.Service)
}

// ThrottledFor returns how long a call that failed with err waits for its
// turn, and whether err is a *Throttled at all.
func ThrottledFor(err error) (time.Duration, bool) {
	var t *Throttled
	if !errors.As(err, &t) {
		return 0, false
	}
	return t.After, true
}

// gate admits the requests of one service: a rate limiter and a cap on
// the requests in flight. The first call of a reconcile never waits: when
// the rate is used up the object gets a turn (a reserved token) and is told
// to come back for it; when every place in flight is taken, it is told to
// come back in a second. Later calls of the same reconcile wait, briefly,
// so that a reconcile that got its turn finishes its work.
//
// Namespaces share the rate fairly: each has a line (see flow), so one
// namespace's long runs of calls (a bulk deletion's batches) take turns
// with the other namespaces' calls rather than go ahead of them all.
type gate struct {
	name    string
	limiter *rate.Limiter
	// slots holds a token per request in flight; nil without a cap.
	slots   chan struct{}
	timeout time.Duration

	mu      sync.Mutex
	tickets map[types.UID]time.Time
	flows   map[string]*flow
}

// flow is one namespace's line for the rate at a gate.
type flow struct {
	// turn is held by the flow's one later call waiting for the rate.
	turn chan struct{}
	// users counts the calls holding or waiting for turn, so that an idle
	// flow is forgotten.
	users int
}

func newGate(name string, l Limits) *gate {
	g := &gate{name: name, limiter: rate.NewLimiter(rate.Inf, 0), timeout: l.Timeout,
		tickets: map[types.UID]time.Time{}, flows: map[string]*flow{}}
	if l.QPS > 0 {
		g.limiter = rate.NewLimiter(rate.Limit(l.QPS), max(l.Burst, 1))
	}
	if l.MaxInFlight > 0 {
		g.slots = make(chan struct{}, l.MaxInFlight)
	}
	return g
}

// join returns flow name's line, counting one more user; leave undoes it.
func (g *gate) join(name string) *flow {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.flows[name]
	if f == nil {
		f = &flow{turn: make(chan struct{}, 1)}
		g.flows[name] = f
	}
	f.users++
	return f
}

func (g *gate) leave(name string, f *flow) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f.users--; f.users == 0 {
		delete(g.flows, name)
	}
}

// admit lets holder's first call of a reconcile through, or returns a
// *Throttled saying when to come back. release gives back its place in flight.
func (g *gate) admit(holder types.UID) (release func(), err error) {
	release = func() {}
	if g.slots != nil {
		select {
		case g.slots <- struct{}{}:
			release = func() { <-g.slots }
		default:
			return nil, &Throttled{After: busyRetry, Service: g.name}
		}
	}
	if after := g.turn(holder, time.Now()); after > 0 {
		release()
		return nil, &Throttled{After: after, Service: g.name}
	}
	return release, nil
}

// turn is how long holder waits for its turn at the rate limiter, 0 when
// it may send now. A holder told to wait keeps the token reserved for it,
// so it is served in order when it comes back.
func (g *gate) turn(holder types.UID, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if at, held := g.tickets[holder]; held {
		if at.After(now) {
			return at.Sub(now)
		}
		delete(g.tickets, holder)
		return 0
	}
	delay := g.limiter.ReserveN(now, 1).DelayFrom(now)
	if delay <= 0 {
		return 0
	}
	if len(g.tickets) >= maxTickets {
		g.dropOverdue(now)
	}
	g.tickets[holder] = now.Add(delay)
	return delay
}

// dropOverdue forgets turns a minute past due: their objects went elsewhere.
func (g *gate) dropOverdue(now time.Time) {
	for h, at := range g.tickets {
		if now.Sub(at) > time.Minute {
			delete(g.tickets, h)
		}
	}
}

// wait lets a later call of a reconcile, in flow name, through once the
// limits allow, waiting at most the request timeout for a place in flight.
// The flow's later calls wait for the rate one at a time, so the limiter
// holds at most one of them: another flow's call waits behind that one,
// not behind all of them.
func (g *gate) wait(ctx context.Context, name string) (release func(), err error) {
	if err := g.takeTurn(ctx, name); err != nil {
		return nil, fmt.Errorf("waiting for the client-side rate limit of %s: %w", g.name, err)
	}
	if g.slots == nil {
		return func() {}, nil
	}
	timeout := g.timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	wait, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
	case <-wait.Done():
		return nil, &Throttled{After: busyRetry, Service: g.name}
	}
}

// takeTurn waits for flow name's turn, then for the rate limiter. It first
// sleeps until the limiter would hold a token and one more, the spare: a
// first call of another reconcile (see turn) that comes meanwhile takes the
// spare at once, so a namespace's long run of later calls, such as a bulk
// deletion's batches, does not make another namespace's call wait for a
// token. The run loses no rate: the spare is a token of the burst. It
// sleeps once only, then waits in line: first calls coming faster than the
// rate never leave a spare, and must not starve the reconciles they started.
func (g *gate) takeTurn(ctx context.Context, name string) error {
	f := g.join(name)
	defer g.leave(name, f)
	select {
	case f.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-f.turn }()
	if d := g.untilSpare(time.Now()); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.limiter.Wait(ctx)
}

// untilSpare is how long from now until the limiter holds a token and the
// spare, reserving none. A burst of one has no room for a spare.
func (g *gate) untilSpare(now time.Time) time.Duration {
	limit := g.limiter.Limit()
	missing := float64(min(2, g.limiter.Burst())) - g.limiter.TokensAt(now)
	if limit == rate.Inf || limit <= 0 || missing <= 0 {
		return 0
	}
	return time.Duration(missing / float64(limit) * float64(time.Second))
}
