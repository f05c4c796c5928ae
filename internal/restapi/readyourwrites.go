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
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unseenCreates gives the clients of one server read-your-writes without making
// a create wait for the cache. In standalone mode a POST is answered as
// soon as its Metric is committed; under load the cache shows it tens of
// milliseconds later, and waiting for that halved the server's throughput.
// Instead the server remembers the Metrics it created that its cache has
// not shown yet, and a read in their namespace (GET, list, PATCH, DELETE)
// waits for those only: right after a create it waits as the create used
// to, any other time not at all.
type unseenCreates struct {
	// expiry bounds how long a create counts: one whose Metric the cache
	// never shows (deleted at once, and a relist skipped both events) must
	// not hold up its namespace's reads for good.
	expiry time.Duration
	now    func() time.Time

	mu sync.Mutex
	// created holds the UIDs of the unseen creates of each namespace, with
	// the time each was recorded.
	created map[string]map[types.UID]time.Time
	// changed is closed and replaced whenever a create is seen.
	changed chan struct{}
}

func newUnseenCreates(expiry time.Duration) *unseenCreates {
	return &unseenCreates{expiry: expiry, now: time.Now, created: map[string]map[types.UID]time.Time{},
		changed: make(chan struct{})}
}

// add records a committed create of obj, unless reader (the cache) shows
// it already: its watch event may have come before the create's answer.
func (u *unseenCreates) add(ctx context.Context, reader client.Reader, obj client.Object) {
	u.mu.Lock()
	ns := u.created[obj.GetNamespace()]
	if ns == nil {
		ns = map[types.UID]time.Time{}
		u.created[obj.GetNamespace()] = ns
	}
	for uid, at := range ns {
		if u.expired(at) {
			delete(ns, uid)
		}
	}
	ns[obj.GetUID()] = u.now()
	u.mu.Unlock()

	cached := obj.DeepCopyObject().(client.Object)
	if err := reader.Get(ctx, client.ObjectKeyFromObject(obj), cached); err == nil && cached.GetUID() == obj.GetUID() {
		u.seen(cached)
	}
}

func (u *unseenCreates) expired(at time.Time) bool { return u.now().Sub(at) >= u.expiry }

// seen forgets the create of obj, if it was unseen.
func (u *unseenCreates) seen(obj client.Object) {
	u.mu.Lock()
	defer u.mu.Unlock()
	ns := u.created[obj.GetNamespace()]
	if _, ok := ns[obj.GetUID()]; !ok {
		return
	}
	delete(ns, obj.GetUID())
	if len(ns) == 0 {
		delete(u.created, obj.GetNamespace())
	}
	close(u.changed)
	u.changed = make(chan struct{})
}

// wait returns once the cache shows every create of namespace recorded
// before the call (creates after it are not this read's to see), when they
// expire, or when ctx ends: the read then answers from the cache as it is.
func (u *unseenCreates) wait(ctx context.Context, namespace string) {
	u.waitFor(ctx, namespace, u.pendingIn(namespace))
}

// pendingIn returns the unseen creates of namespace.
func (u *unseenCreates) pendingIn(namespace string) map[types.UID]time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.created[namespace])
}

// waitFor waits for the creates before of namespace, as wait does.
func (u *unseenCreates) waitFor(ctx context.Context, namespace string, before map[types.UID]time.Time) {
	if len(before) == 0 {
		return
	}
	timer := time.NewTimer(u.expiry) // every one of them expires by then
	defer timer.Stop()
	for {
		left, changed := u.left(namespace, before)
		if !left {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// left reports whether a create of before is still unseen and counts, and
// returns the channel closed at the next change.
func (u *unseenCreates) left(namespace string, before map[types.UID]time.Time) (bool, <-chan struct{}) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for uid, at := range before {
		if _, unseen := u.created[namespace][uid]; unseen && !u.expired(at) {
			return true, u.changed
		}
	}
	return false, nil
}

// handler is an informer event handler that marks creates seen.
func (u *unseenCreates) handler() toolscache.ResourceEventHandler {
	see := func(obj any) {
		if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if o, ok := obj.(client.Object); ok {
			u.seen(o)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
		DeleteFunc: see,
	}
}
