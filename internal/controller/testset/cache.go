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

package testset

import (
	"container/list"
	"sync"
	"time"

	"github.com/eval-operator/eval-operator/internal/testcases"
)

// setCache holds the sets sources gave, by what identifies their content
// (an artifact's URL and digest, a ConfigMap's data's hash) and how they
// were read (file, key field): the Testsets that read one source share one
// set, read once per revision. Bad data is held too: a revision is judged
// once. The least recently used sets go first once the sets held are over
// capacity bytes; a set larger than that is not held.
type setCache struct {
	mu       sync.Mutex
	capacity int64
	used     int64
	order    *list.List // of *cachedSet, most recently used first
	by       map[string]*list.Element
}

// cachedSet is a source's set, or the bad data it holds, or, with alias
// set, another name of the set held under alias.
type cachedSet struct {
	key   string
	alias string
	set   testcases.Set
	err   error
	size  int64
}

// caseOverhead is a testcase's memory beside its data and key: its Case,
// its place in the builder's map.
const caseOverhead = 96

func newSetCache(capacity int64) *setCache {
	return &setCache{capacity: capacity, order: list.New(), by: map[string]*list.Element{}}
}

// get returns key's set, or the bad data it holds, if held.
func (c *setCache) get(key string) (cachedSet, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.by[key]
	if !ok {
		return cachedSet{}, false
	}
	c.order.MoveToFront(e)
	if to := e.Value.(*cachedSet).alias; to != "" {
		if e, ok = c.by[to]; !ok {
			return cachedSet{}, false
		}
		c.order.MoveToFront(e)
	}
	return *e.Value.(*cachedSet), true
}

// alias makes key another name of the set held under to, for the cost of
// the two names: a ConfigMap's version names the set of its data's hash.
func (c *setCache) alias(key, to string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.push(&cachedSet{key: key, alias: to, size: int64(len(key) + len(to))})
}

// put holds key's set, or the bad data err it holds; any other error is
// not the content's, and is not held.
func (c *setCache) put(key string, set testcases.Set, err error) {
	if err != nil && !judged(err) {
		return
	}
	size := int64(len(key)) + setSize(set)
	if err != nil {
		size += int64(len(err.Error()))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.push(&cachedSet{key: key, set: set, err: err, size: size})
}

// push holds s in place of any entry of its key, then drops the least
// recently used entries while over capacity.
func (c *setCache) push(s *cachedSet) {
	if e, ok := c.by[s.key]; ok {
		c.remove(e)
	}
	if s.size > c.capacity {
		return
	}
	c.by[s.key] = c.order.PushFront(s)
	for c.used += s.size; c.used > c.capacity; {
		c.remove(c.order.Back())
	}
}

func (c *setCache) remove(e *list.Element) {
	s := c.order.Remove(e).(*cachedSet)
	delete(c.by, s.key)
	c.used -= s.size
}

// fetchLine bounds the artifact fetches under way: at most one per artifact
// (the Testsets that read it wait for its set), perNamespace per namespace
// and total in all, so that a namespace whose sources are slow or stalled
// holds no more of the workers than its share, and Testsets that fetch
// nothing (inline, ConfigMaps) always find one. A Testset that finds no
// place is requeued after fetchRetry; it does not wait in a worker.
type fetchLine struct {
	mu                  sync.Mutex
	perNamespace, total int
	byNamespace         map[string]int
	artifacts           map[string]bool
	running             int
}

// fetchRetry is how soon a Testset that found no place to fetch tries again.
const fetchRetry = 2 * time.Second

// newFetchLine gives each namespace a quarter of workers, and all of them
// together half: the other half is always free for the Testsets and kinds
// that fetch nothing.
func newFetchLine(workers int) *fetchLine {
	return &fetchLine{perNamespace: max(1, workers/4), total: max(1, workers/2),
		byNamespace: map[string]int{}, artifacts: map[string]bool{}}
}

// enter takes a place to fetch artifact for namespace; leave gives it back.
// Without a place, why says what is being waited for.
func (l *fetchLine) enter(namespace, artifact string) (leave func(), why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.artifacts[artifact]:
		return nil, "the artifact is being fetched for another Testset; this one reads it once it is"
	case l.byNamespace[namespace] >= l.perNamespace:
		return nil, "this namespace's artifacts are being fetched, as many at once as a namespace may"
	case l.running >= l.total:
		return nil, "the manager is fetching as many artifacts at once as it may"
	}
	l.artifacts[artifact] = true
	l.byNamespace[namespace]++
	l.running++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.artifacts, artifact)
		if l.byNamespace[namespace]--; l.byNamespace[namespace] == 0 {
			delete(l.byNamespace, namespace)
		}
		l.running--
	}, ""
}
