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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// load reads and validates t's testcases from its source, and holds the
// set's memory of the budget until the caller releases it. A source that
// cannot be read yet, or holds bad data, comes back as an outcome: nothing
// is sent to the service until the whole set is valid. A Testset that
// waits for a place to fetch its artifact, or for memory, comes back with
// the time to wait.
func (r *Reconciler) load(ctx context.Context, t *v1alpha1.Testset) (
	testcases.Set, *hold, *kit.Outcome, ctrl.Result, error) {
	key := string(t.Spec.KeyField)
	switch {
	case t.Spec.ConfigMapRef != nil:
		return r.fromConfigMap(ctx, t.Namespace, *t.Spec.ConfigMapRef, key)
	case t.Spec.SourceRef != nil:
		return r.fromFluxSource(ctx, t.Namespace, *t.Spec.SourceRef, key)
	}
	items := make([][]byte, len(t.Spec.Inline))
	var n int64
	for i, it := range t.Spec.Inline {
		items[i] = it.Raw
		n += int64(len(it.Raw))
	}
	h, why := r.memory.take(t.Namespace, mostHeld(r.limits, n, len(items)))
	if h == nil {
		o, res := waitForMemory(why)
		return testcases.Set{}, nil, o, res, nil
	}
	set, err := r.limits.FromItems(items, key)
	h.keep(setSize(set))
	return set, h, badData(err), ctrl.Result{}, nil
}

// waitForMemory is the outcome of a Testset that found no room in the
// memory budget, and when it tries again.
func waitForMemory(why string) (*kit.Outcome, ctrl.Result) {
	o := kit.Progressing(v1alpha1.ReasonPending, why)
	return &o, ctrl.Result{RequeueAfter: fetchRetry}
}

// holdSet holds got's set of the budget for namespace: h, which held a set
// while it was parsed, keeps the set's size; a set from the cache is taken
// anew. Bad data holds nothing.
func (r *Reconciler) holdSet(namespace string, h *hold, got cachedSet) (*hold, *kit.Outcome, ctrl.Result) {
	if got.err != nil {
		h.release()
		return nil, nil, ctrl.Result{}
	}
	if h != nil {
		h.keep(setSize(got.set))
		return h, nil, ctrl.Result{}
	}
	h, why := r.memory.take(namespace, setSize(got.set))
	if h == nil {
		o, res := waitForMemory(why)
		return nil, o, res
	}
	return h, nil, ctrl.Result{}
}

// fromConfigMap reads ref's JSON Lines. ConfigMaps are watched by their
// metadata only, and their data is read, uncached, when a Testset uses it;
// a version of a ConfigMap read before is not read again, and data read
// before (by its hash) not parsed again: a relabelled ConfigMap is read once
// for all its Testsets, and parsed not at all.
func (r *Reconciler) fromConfigMap(ctx context.Context, namespace string, ref v1alpha1.ConfigMapTestcases, field string) (
	testcases.Set, *hold, *kit.Outcome, ctrl.Result, error) {
	dataKey := ref.Key
	if dataKey == "" {
		dataKey = "testcases.jsonl"
	}
	name := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	version := func(resourceVersion string) string {
		return strings.Join([]string{"ConfigMap", namespace, ref.Name, resourceVersion, dataKey, field}, "\n")
	}
	held := &metav1.PartialObjectMetadata{}
	held.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := r.Client.Get(ctx, name, held); err == nil {
		if got, ok := r.sets.get(version(held.ResourceVersion)); ok {
			return r.configMapSet(namespace, ref.Name, dataKey, nil, got)
		}
	}
	cm := &corev1.ConfigMap{}
	err := r.Reader.Get(ctx, name, cm)
	switch {
	case apierrors.IsNotFound(err):
		o := kit.Progressing(v1alpha1.ReasonSourceNotReady, fmt.Sprintf(
			"ConfigMap %s not found; the Testset is synced once it exists", ref.Name))
		return testcases.Set{}, nil, &o, ctrl.Result{}, nil
	case err != nil:
		o := kit.Progressing(v1alpha1.ReasonSourceNotReady, "reading ConfigMap "+ref.Name)
		return testcases.Set{}, nil, &o, ctrl.Result{}, fmt.Errorf("reading ConfigMap %s: %w", ref.Name, err)
	}
	data, ok := cm.Data[dataKey]
	if !ok {
		o := kit.Progressing(v1alpha1.ReasonSourceNotReady, fmt.Sprintf(
			"ConfigMap %s has no key %s; the Testset is synced once it does", ref.Name, dataKey))
		return testcases.Set{}, nil, &o, ctrl.Result{}, nil
	}
	sum := sha256.Sum256([]byte(data))
	content := strings.Join([]string{"ConfigMap data", hex.EncodeToString(sum[:]), field}, "\n")
	got, ok := r.sets.get(content)
	var h *hold
	if !ok {
		var why string
		if h, why = r.memory.take(namespace, mostHeld(r.limits, int64(len(data)), mostLines(int64(len(data))))); h == nil {
			o, res := waitForMemory(why)
			return testcases.Set{}, nil, o, res, nil
		}
		got.set, got.err = r.limits.FromLines(strings.NewReader(data), field)
		r.sets.put(content, got.set, got.err)
	}
	r.sets.alias(version(cm.ResourceVersion), content)
	return r.configMapSet(namespace, ref.Name, dataKey, h, got)
}

// configMapSet is the set read from ConfigMap name's key, held of the
// budget (see holdSet), or the outcome of its bad data.
func (r *Reconciler) configMapSet(namespace, name, key string, h *hold, got cachedSet) (
	testcases.Set, *hold, *kit.Outcome, ctrl.Result, error) {
	h, wait, res := r.holdSet(namespace, h, got)
	if wait != nil {
		return testcases.Set{}, nil, wait, res, nil
	}
	if o := badData(got.err); o != nil {
		o.Message = fmt.Sprintf("ConfigMap %s key %s: %s", name, key, o.Message)
		return testcases.Set{}, nil, o, ctrl.Result{}, nil
	}
	return got.set, h, nil, ctrl.Result{}, got.err
}
