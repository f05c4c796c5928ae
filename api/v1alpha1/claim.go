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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Two objects may name the same remote id (a copied annotation); only one
// holds it. The reconcilers stall the others and the REST server serves the
// holder, so both decide with these rules.

// IDClaim is an object that records a remote id: a Metric or a Testset.
// +kubebuilder:object:generate=false
type IDClaim interface {
	metav1.Object
	// RecordedID is the id it records: its id annotation, else status.id.
	RecordedID() string
	// RecordsID reports whether id is in its id annotation or status.id.
	RecordsID(id string) bool
	// IDRefused reports whether its recorded id is refused: invalid, or
	// held by another object (the reconciler stalled it on that). It is
	// never served under it.
	IDRefused() bool
	// statusID is the id recorded in status: the operator acted on it.
	statusID() string
}

// refused reports whether an object with conditions and recorded id is
// refused its id: stalled for one of reasons, or the id is invalid.
func refused(conditions []metav1.Condition, id string, reasons ...string) bool {
	c := meta.FindStatusCondition(conditions, ConditionStalled)
	if c != nil && slices.Contains(reasons, c.Reason) {
		return true
	}
	return !ValidResourceID(id)
}

// HoldsIDBefore reports whether a holds its recorded id ahead of b when both
// claim the same one: the one that recorded it in status (the operator acted
// on it) over one that has not; between two alike, the older, then the
// first by name. So a copied annotation never takes an id from the object
// that already serves it.
func HoldsIDBefore(a, b IDClaim) bool {
	aHeld, bHeld := a.statusID() != "", b.statusID() != ""
	if aHeld != bHeld {
		return aHeld
	}
	at, bt := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !at.Equal(&bt) {
		return at.Before(&bt)
	}
	return a.GetName() < b.GetName()
}

// IDRefused reports whether m's recorded id is refused (IDClaim).
func (m *Metric) IDRefused() bool {
	return refused(m.Status.Conditions, m.RecordedID(), ReasonInvalidMetricID, ReasonMetricIDClaimed)
}

// RecordsID reports whether m records id (IDClaim).
func (m *Metric) RecordsID(id string) bool {
	return m.Annotations[MetricIDAnnotation] == id || m.Status.ID == id
}

func (m *Metric) statusID() string { return m.Status.ID }

// IDRefused reports whether t's recorded id is refused (IDClaim).
func (t *Testset) IDRefused() bool {
	return refused(t.Status.Conditions, t.RecordedID(), ReasonInvalidTestsetID, ReasonTestsetIDClaimed)
}

// RecordsID reports whether t records id (IDClaim).
func (t *Testset) RecordsID(id string) bool {
	return t.Annotations[TestsetIDAnnotation] == id || t.Status.ID == id
}

func (t *Testset) statusID() string { return t.Status.ID }
