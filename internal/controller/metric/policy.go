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
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// What spec.managementPolicies change in a Metric's life: a read finds the
// remote Metric equal to the spec or not (the Synced condition), and only a
// policy with Update corrects a difference; without it the difference is
// reported, once per new difference.

// syncedCondition is the Synced condition of a Metric at generation whose
// remote Metric differs from the spec in drifted (none: equal), policies
// being what keeps the operator from correcting it. It names fields only:
// their values (a prompt) stay out of conditions and events.
func syncedCondition(generation int64, drifted []string, policies string) metav1.Condition {
	c := metav1.Condition{Type: v1alpha1.ConditionSynced, ObservedGeneration: generation}
	if len(drifted) == 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, v1alpha1.ReasonUpToDate, "the remote Metric equals the spec"
		return c
	}
	c.Status, c.Reason = metav1.ConditionFalse, v1alpha1.ReasonDrifted
	c.Message = fmt.Sprintf("the remote Metric differs from the spec in %s; spec.managementPolicies %s do not allow Update, "+
		"so the operator does not correct it", strings.Join(drifted, ", "), policies)
	return c
}

// newDifference reports whether c, a False Synced condition, reports a
// difference conds did not already hold: worth one Warning event.
func newDifference(conds []metav1.Condition, c metav1.Condition) bool {
	old := meta.FindStatusCondition(conds, v1alpha1.ConditionSynced)
	return c.Status == metav1.ConditionFalse && (old == nil || old.Status != c.Status || old.Message != c.Message)
}

// recordSynced sets m's Synced condition from what a read found (drifted:
// the fields that differ), with a Drifted Warning event when the difference
// is new.
func (r *Reconciler) recordSynced(m *v1alpha1.Metric, drifted []string) {
	c := syncedCondition(m.Generation, drifted, m.Spec.PoliciesString())
	if newDifference(m.Status.Conditions, c) {
		r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, v1alpha1.ReasonDrifted, "Observe", "%s", c.Message)
	}
	meta.SetStatusCondition(&m.Status.Conditions, c)
}

// settleDrift acts on what a read of remote Metric id found: equal, it
// records Synced; different, it sends the spec as one update where the
// policy allows Update (corrected), else reports the difference. got is
// the remote Metric as it now is.
func (r *Reconciler) settleDrift(ctx context.Context, s *scope, id string,
	seen remote.Observation) (got remote.Metric, corrected bool, err error) {
	m := s.Obj
	switch {
	case seen.UpToDate:
		r.recordSynced(m, nil)
		return seen.Metric, false, nil
	case !m.Spec.Allows(v1alpha1.ManagementUpdate):
		r.recordSynced(m, seen.Metric.Drifted(&m.Spec))
		return seen.Metric, false, nil
	}
	if got, err = s.Client.Update(ctx, id, &m.Spec); err != nil {
		return remote.Metric{}, false, err
	}
	r.recordSynced(m, nil)
	return got, true, nil
}

func observed(id string, m *v1alpha1.Metric) kit.Outcome {
	return kit.Ready(v1alpha1.ReasonObserved, fmt.Sprintf(
		"read remote Metric %s; spec.managementPolicies %s do not allow Update, so the operator only mirrors it",
		id, m.Spec.PoliciesString()))
}

func createNotAllowed(m *v1alpha1.Metric) kit.Outcome {
	return kit.Stalled(v1alpha1.ReasonCreateNotAllowed, fmt.Sprintf(
		"no remote Metric is recorded and spec.managementPolicies %s do not allow Create: set annotation %s to the id "+
			"of the Metric to observe, or spec.adoptionPolicy to ByName to find it by name",
		m.Spec.PoliciesString(), v1alpha1.MetricIDAnnotation))
}
