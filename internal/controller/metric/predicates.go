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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
)

// metricChanged lets through the Metric updates that call for a reconcile: a
// new generation, the annotation edits a person makes to resolve or skip
// a create, and the loss of the finalizer (a replace drops it). The operator's
// own writes (status, create-pending, the id after a create) do not re-trigger;
// otherwise every failed create would retry at once.
var metricChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() || lostFinalizer(e.ObjectOld, e.ObjectNew) {
			return true
		}
		newMetric, ok := e.ObjectNew.(*v1alpha1.Metric)
		if !ok {
			return false
		}
		return personEdited(e.ObjectOld.GetAnnotations(), newMetric)
	},
}

// personEdited reports whether the annotations went from old to those of m
// by a person's hand: adopting an id, dropping it (kubectl replace and
// GitOps force syncs drop every annotation; the operator restores it from
// status), allowing a recreate, or removing create-pending to allow a new
// create after CreateOutcomeUnknown.
func personEdited(old map[string]string, m *v1alpha1.Metric) bool {
	oldID, newID := old[v1alpha1.MetricIDAnnotation], m.Annotations[v1alpha1.MetricIDAnnotation]
	_, oldPending := old[v1alpha1.CreatePendingAnnotation]
	_, newPending := m.Annotations[v1alpha1.CreatePendingAnnotation]
	if recreate := m.Annotations[v1alpha1.RecreateAnnotation]; recreate != "" && recreate != old[v1alpha1.RecreateAnnotation] {
		return true
	}
	if newID != oldID {
		// The operator sets the id and drops create-pending in one write.
		return newID == "" || !oldPending || newPending
	}
	if oldPending && !newPending && newID == "" {
		// The operator also drops create-pending after a failed create, but
		// only a person does so on a Metric stalled on CreateOutcomeUnknown.
		return kit.StalledOn(m.Status.Conditions, v1alpha1.ReasonCreateOutcomeUnknown, m.Generation) != nil
	}
	return false
}

func lostFinalizer(old, updated client.Object) bool {
	return controllerutil.ContainsFinalizer(old, v1alpha1.MetricFinalizer) &&
		!controllerutil.ContainsFinalizer(updated, v1alpha1.MetricFinalizer)
}
