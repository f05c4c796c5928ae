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

package metricsauth

import (
	"container/list"
	"sync"
	"time"
)

// key is a cache key: a SHA-256, so that neither a token nor an
// unbounded string is ever kept.
type key [32]byte

// ttlCache is a map of at most max entries, each valid until its own expiry.
// A full cache drops its least recently used entry, and expired entries are
// dropped when looked up and by a sweep at most once per sweepEvery, so a
// flood of distinct keys (random tokens) cannot grow it past max.
type ttlCache[V any] struct {
	mu         sync.Mutex
	max        int
	sweepEvery time.Duration
	lastSweep  time.Time
	entries    map[key]*list.Element
	// order holds *ttlEntry, least recently used at the front.
	order *list.List
}

type ttlEntry[V any] struct {
	key     key
	value   V
	expires time.Time
}

func newTTLCache[V any](maxEntries int, sweepEvery time.Duration) *ttlCache[V] {
	return &ttlCache[V]{
		max:        maxEntries,
		sweepEvery: sweepEvery,
		entries:    make(map[key]*list.Element, maxEntries),
		order:      list.New(),
	}
}

// get returns the value cached for k, if it has not expired at now.
func (c *ttlCache[V]) get(k key, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	el, ok := c.entries[k]
	if !ok {
		return zero, false
	}
	e := el.Value.(*ttlEntry[V])
	if !now.Before(e.expires) {
		c.remove(el)
		return zero, false
	}
	c.order.MoveToBack(el)
	return e.value, true
}

// add caches v for k until now+ttl, making room if the cache is full.
func (c *ttlCache[V]) add(k key, v V, ttl time.Duration, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.lastSweep) >= c.sweepEvery {
		c.sweep(now)
	}
	if el, ok := c.entries[k]; ok {
		e := el.Value.(*ttlEntry[V])
		e.value, e.expires = v, now.Add(ttl)
		c.order.MoveToBack(el)
		return
	}
	for len(c.entries) >= c.max && c.order.Len() > 0 {
		c.remove(c.order.Front())
	}
	c.entries[k] = c.order.PushBack(&ttlEntry[V]{key: k, value: v, expires: now.Add(ttl)})
}

// len is the number of entries, expired or not.
func (c *ttlCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// sweep drops every entry expired at now. The caller holds mu.
func (c *ttlCache[V]) sweep(now time.Time) {
	c.lastSweep = now
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if !now.Before(el.Value.(*ttlEntry[V]).expires) {
			c.remove(el)
		}
		el = next
	}
}

// remove drops el. The caller holds mu.
func (c *ttlCache[V]) remove(el *list.Element) {
	c.order.Remove(el)
	delete(c.entries, el.Value.(*ttlEntry[V]).key)
}
