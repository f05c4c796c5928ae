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

package v1alpha1

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
)

// Two Metrics of a namespace may name the same remote id (a copied
// annotation); only one holds it. The reconciler stalls the other and the
// REST server serves the holder, so both decide with these two rules.

// IDRefused reports whether m's recorded id is refused: invalid, or held by
// another Metric (the reconciler stalled m on it). m is never served under it.
func (m *Metric) IDRefused() bool {
	c := meta.FindStatusCondition(m.Status.Conditions, ConditionStalled)
	if c != nil && slices.Contains([]string{ReasonInvalidMetricID, ReasonMetricIDClaimed}, c.Reason) {
		return true
	}
	return !ValidResourceID(m.RecordedID())
}

// HoldsIDBefore reports whether m holds its recorded id ahead of o when both
// claim the same one: the one that recorded it in status (the operator acted
// on it) over one that has not; between two alike, the older, then the
// first by name. So a copied annotation never takes an id from the Metric
// that already serves it.
func (m *Metric) HoldsIDBefore(o *Metric) bool {
	mHeld, oHeld := m.Status.ID != "", o.Status.ID != ""
	if mHeld != oHeld {
		return mHeld
	}
	if !m.CreationTimestamp.Equal(&o.CreationTimestamp) {
		return m.CreationTimestamp.Before(&o.CreationTimestamp)
	}
	return m.Name < o.Name
}
