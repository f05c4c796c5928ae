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

package metric

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// A Metric's promptTemplate may be tens of kilobytes, and only its create,
// an update, an adoption and a drift check read it (and its guidelines and
// description). The cache keeps a Metric without those texts once it is
// Ready at its generation under its recorded id, and at once when they are
// larger than cachedTextLimit, so the operator's memory does not grow with
// prompt size, not even over a backlog of new Metrics. A trimmed copy is
// marked with trimcache.TrimmedAnnotation; the reconciler reads the whole Metric from
// the API server before a step that needs the texts, and its client
// (trimcache.Guard) refuses any write that would send a trimmed field.

// cachedTextLimit is the most text, in bytes, the cache keeps of a Metric
// that is not settled. Below it the Metric is cached whole, so a backlog of
// Metrics with short texts costs no extra read; above it, one read per
// reconcile that sends the texts is cheap next to the call that sends them.
const cachedTextLimit = 1024

// CacheTransform is the cache transform of Metrics (cache.ByObject):
// it strips managedFields, as the default transform does for every object,
// and trims a Metric that is settled or whose texts exceed cachedTextLimit.
func CacheTransform() toolscache.TransformFunc {
	return trimcache.TrimTransform(func(m *v1alpha1.Metric) bool {
		if !settled(m) && m.TextBytes() <= cachedTextLimit {
			return false
		}
		m.Spec.PromptTemplate, m.Spec.Guidelines, m.Spec.Description = nil, nil, nil
		m.Status.Guidelines, m.Status.Description = nil, nil
		return true
	})
}

// settled reports whether m needs nothing from its texts until its spec
// changes (a new generation, cached whole again) or a drift check is due.
func settled(m *v1alpha1.Metric) bool {
	id := m.Annotations[v1alpha1.MetricIDAnnotation]
	ready := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady)
	return id != "" && m.Status.ID == id && !m.CreatePending() &&
		ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == m.Generation
}

// readWhole replaces a trimmed m with the whole Metric, read from the API
// server, when this reconcile may need its texts: m is not settled (it is
// to be created, updated or adopted, or its status filled in from the
// spec), or its drift check is due. A settled Metric whose check is not due
// is left as it is: a resync reads nothing.
func (r *Reconciler) readWhole(ctx context.Context, m *v1alpha1.Metric, drift *kit.DriftSchedule) error {
	if !trimcache.Trimmed(m) {
		return nil
	}
	if due, _ := drift.Due(m.UID); settled(m) && !due {
		return nil
	}
	return trimcache.Whole(ctx, r.Reader, m)
}
