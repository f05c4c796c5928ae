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
	"sync"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitKey names one object of one kind, or with an empty name every object
// of the kind in a namespace.
type waitKey struct {
	kind string
	types.NamespacedName
}

// waiters wakes the requests waiting for an object whenever the shared
// informer of its kind sees it change, so a request costs no watch of its own.
type waiters struct {
	mu    sync.Mutex
	byKey map[waitKey]map[chan struct{}]struct{}
}

func newWaiters() *waiters {
	return &waiters{byKey: map[waitKey]map[chan struct{}]struct{}{}}
}

// add registers a waiter for key. The channel receives a signal after each
// change; signals that arrive while one is pending are merged.
func (w *waiters) add(key waitKey) chan struct{} {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byKey[key] == nil {
		w.byKey[key] = map[chan struct{}]struct{}{}
	}
	w.byKey[key][ch] = struct{}{}
	return ch
}

func (w *waiters) remove(key waitKey, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byKey[key], ch)
	if len(w.byKey[key]) == 0 {
		delete(w.byKey, key)
	}
}

func (w *waiters) notify(key waitKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.byKey[key] {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending
		}
	}
}

// handler is an informer event handler that wakes the waiters of kind.
func (w *waiters) handler(kind string) toolscache.ResourceEventHandler {
	wake := func(obj any) {
		if o, ok := obj.(client.Object); ok {
			w.notify(waitKey{kind: kind, NamespacedName: client.ObjectKeyFromObject(o)})
			w.notify(waitKey{kind: kind, NamespacedName: types.NamespacedName{Namespace: o.GetNamespace()}})
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    wake,
		UpdateFunc: func(_, obj any) { wake(obj) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			wake(obj)
		},
	}
}
