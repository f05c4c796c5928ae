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

// load reads and validates t's testcases from its source. A source that
// cannot be read yet, or holds bad data, comes back as an outcome: nothing
// is sent to the service until the whole set is valid. A Testset that
// waits for a place to fetch its artifact comes back with the time to wait.
func (r *Reconciler) load(ctx context.Context, t *v1alpha1.Testset) (testcases.Set, *kit.Outcome, ctrl.Result, error) {
	key := string(t.Spec.KeyField)
	switch {
	case t.Spec.ConfigMapRef != nil:
		set, o, err := r.fromConfigMap(ctx, t.Namespace, *t.Spec.ConfigMapRef, key)
		return set, o, ctrl.Result{}, err
	case t.Spec.SourceRef != nil:
		return r.fromFluxSource(ctx, t.Namespace, *t.Spec.SourceRef, key)
	}
	items := make([][]byte, len(t.Spec.Inline))
	for i, it := range t.Spec.Inline {
		items[i] = it.Raw
	}
	set, err := r.limits.FromItems(items, key)
	return set, badData(err), ctrl.Result{}, nil
}

// fromConfigMap reads ref's JSON Lines. ConfigMaps are watched by their
// metadata only, and their data is read, uncached, when a Testset uses it;
// a version of a ConfigMap read before is not read again, and data read
// before (by its hash) not parsed again: a relabelled ConfigMap is read once
// for all its Testsets, and parsed not at all.
func (r *Reconciler) fromConfigMap(ctx context.Context, namespace string, ref v1alpha1.ConfigMapTestcases, field string) (
	testcases.Set, *kit.Outcome, error) {
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
			return configMapSet(ref.Name, dataKey, got)
		}
	}
	cm := &corev1.ConfigMap{}
	err := r.Reader.Get(ctx, name, cm)
	switch {
	case apierrors.IsNotFound(err):
		o := kit.Progressing(v1alpha1.ReasonSourceNotReady, fmt.Sprintf(
			"ConfigMap %s not found; the Testset is synced once it exists", ref.Name))
		return testcases.Set{}, &o, nil
	case err != nil:
		o := kit.Progressing(v1alpha1.ReasonSourceNotReady, "reading ConfigMap "+ref.Name)
		return testcases.Set{}, &o, fmt.Errorf("reading ConfigMap %s: %w", ref.Name, err)
	}
	data, ok := cm.Data[dataKey]
	if !ok {
		o := kit.Progressing(v1alpha1.ReasonSourceNotReady, fmt.Sprintf(
			"ConfigMap %s has no key %s; the Testset is synced once it does", ref.Name, dataKey))
		return testcases.Set{}, &o, nil
	}
	sum := sha256.Sum256([]byte(data))
	content := strings.Join([]string{"ConfigMap data", hex.EncodeToString(sum[:]), field}, "\n")
	got, ok := r.sets.get(content)
	if !ok {
		got.set, got.err = r.limits.FromLines(strings.NewReader(data), field)
		r.sets.put(content, got.set, got.err)
	}
	r.sets.put(version(cm.ResourceVersion), got.set, got.err)
	return configMapSet(ref.Name, dataKey, got)
}

// configMapSet is the set read from ConfigMap name's key, or the outcome of
// its bad data.
func configMapSet(name, key string, got cachedSet) (testcases.Set, *kit.Outcome, error) {
	if o := badData(got.err); o != nil {
		o.Message = fmt.Sprintf("ConfigMap %s key %s: %s", name, key, o.Message)
		return testcases.Set{}, o, nil
	}
	return got.set, nil, got.err
}
