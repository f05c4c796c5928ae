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
	"bytes"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// load reads and validates t's testcases from its source. A source that
// cannot be read yet, or holds bad data, comes back as an outcome: nothing
// is sent to the service until the whole set is valid.
func (r *Reconciler) load(ctx context.Context, t *v1alpha1.Testset) (testcases.Set, *kit.Outcome, error) {
	key := string(t.Spec.KeyField)
	switch {
	case t.Spec.ConfigMapRef != nil:
		return r.fromConfigMap(ctx, t.Namespace, *t.Spec.ConfigMapRef, key)
	case t.Spec.SourceRef != nil:
		return r.fromFluxSource(ctx, t.Namespace, *t.Spec.SourceRef, key)
	}
	items := make([][]byte, len(t.Spec.Inline))
	for i, it := range t.Spec.Inline {
		items[i] = it.Raw
	}
	set, err := testcases.FromItems(items, key)
	return set, badData(err), nil
}

// fromConfigMap reads ref's JSON Lines, uncached: ConfigMaps are watched by
// their metadata only, and their data is read when a Testset uses it.
func (r *Reconciler) fromConfigMap(ctx context.Context, namespace string, ref v1alpha1.ConfigMapTestcases, field string) (
	testcases.Set, *kit.Outcome, error) {
	dataKey := ref.Key
	if dataKey == "" {
		dataKey = "testcases.jsonl"
	}
	cm := &corev1.ConfigMap{}
	err := r.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, cm)
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
	set, err := testcases.FromLines(bytes.NewReader([]byte(data)), field)
	if o := badData(err); o != nil {
		o.Message = fmt.Sprintf("ConfigMap %s key %s: %s", ref.Name, dataKey, o.Message)
		return testcases.Set{}, o, nil
	}
	return set, nil, err
}
