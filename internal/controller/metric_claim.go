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

package controller

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/quote"
)

// A recorded remote id is checked before anything is done under it: it must
// be a valid id, and no other Metric of the namespace may hold it. Either
// fault is a person's to fix (a mistyped or copied annotation), so the
// Metric stalls without a retry; a change of the annotation re-triggers it.

// claimOutcome returns the Stalled outcome of a Metric whose recorded id id
// is invalid or held by another Metric of its namespace, and false when the
// claim is sound.
func (r *MetricReconciler) claimOutcome(ctx context.Context, m *v1alpha1.Metric, id string) (outcome, bool, error) {
	if !v1alpha1.ValidResourceID(id) {
		return invalidID(id), true, nil
	}
	var list v1alpha1.MetricList
	if err := r.client.List(ctx, &list, client.InNamespace(m.Namespace), client.MatchingFields{remoteIDIndex: id}); err != nil {
		return progressing(v1alpha1.ReasonCreating, "checking that no other Metric holds id "+id),
			false, fmt.Errorf("listing the Metrics that hold id %s: %w", id, err)
	}
	if holder := holderOf(id, m, list.Items); holder != nil {
		return claimed(id, holder.Name), true, nil
	}
	return outcome{}, false, nil
}

// holderOf returns the Metric among others that holds id ahead of m, or nil
// when m holds it. A Metric holds id ahead of another when it has recorded
// it in status (the operator acted on it) and the other has not; between
// two alike, the older, then the first by name: so a copied annotation
// never takes an id from the Metric that already serves it.
func holderOf(id string, m *v1alpha1.Metric, others []v1alpha1.Metric) *v1alpha1.Metric {
	var holder *v1alpha1.Metric
	for i := range others {
		o := &others[i]
		if o.UID == m.UID || !claims(o, id) {
			continue
		}
		if Ahead(o, m) && (holder == nil || Ahead(o, holder)) {
			holder = o
		}
	}
	return holder
}

// claims reports whether o is a live claim on id: recorded, valid, and not
// itself stalled as a duplicate.
func claims(o *v1alpha1.Metric, id string) bool {
	return (o.Annotations[v1alpha1.MetricIDAnnotation] == id || o.Status.ID == id) && !Unclaimed(o)
}

// Ahead reports whether a holds its recorded id ahead of b when both claim
// the same one (see holderOf). The REST server picks the same Metric.
func Ahead(a, b *v1alpha1.Metric) bool {
	aHeld, bHeld := a.Status.ID != "", b.Status.ID != ""
	if aHeld != bHeld {
		return aHeld
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// Unclaimed reports whether m's recorded id is refused (invalid, or held
// by another Metric): the REST server never serves m under it.
func Unclaimed(m *v1alpha1.Metric) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionStalled)
	if c != nil && slices.Contains([]string{v1alpha1.ReasonInvalidMetricID, v1alpha1.ReasonMetricIDClaimed}, c.Reason) {
		return true
	}
	return !v1alpha1.ValidResourceID(recordedID(m))
}

// RecordedID is the Metric's remote id as the reconciler reads it.
func RecordedID(m *v1alpha1.Metric) string { return recordedID(m) }

func invalidID(id string) outcome {
	return stalled(v1alpha1.ReasonInvalidMetricID, fmt.Sprintf(
		"annotation %s holds %s, which is not a valid id (1 to %d letters, digits, '.', '_', ':' or '-', starting "+
			"with a letter or digit); correct or remove the annotation",
		v1alpha1.MetricIDAnnotation, quote.Prefix(id), v1alpha1.ResourceIDMaxLength))
}

func claimed(id, holder string) outcome {
	return stalled(v1alpha1.ReasonMetricIDClaimed, fmt.Sprintf(
		"Metric %s of this namespace already holds remote id %s; two objects cannot manage one remote Metric: "+
			"correct or remove annotation %s", holder, id, v1alpha1.MetricIDAnnotation))
}
