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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// The life of a Metric once its remote id is recorded: the id is final, a
// new spec is sent as one update, an adopted or restored Metric is read
// from the service, and a Ready one is read again every drift interval.

// recreateAllowed reports whether a person allowed one new create of the
// Metric: its remote Metric id is gone (Stalled on RemoteNotFound) and the
// recreate annotation names that very id.
func recreateAllowed(m *v1alpha1.Metric, id string) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionStalled)
	return m.Annotations[v1alpha1.RecreateAnnotation] == id && c != nil && c.Reason == v1alpha1.ReasonRemoteNotFound
}

// forgetID drops the recorded id id so that the Metric is created again
// through the guarded create. The annotation goes first and status.id
// second: until both are gone, the Metric stays RemoteNotFound with the
// recreate annotation in place, so a crash in between repeats this step,
// and create-pending is never set while status.id still holds the old id.
// The recreate annotation itself goes with the create's guard
// (kit.MarkPending), in the same write as create-pending.
func (r *Reconciler) forgetID(ctx context.Context, p *kit.StatusPatcher, m *v1alpha1.Metric, id string) error {
	err := r.patchAnnotationsIfCurrent(ctx, m, map[string]any{
		v1alpha1.MetricIDAnnotation: nil,
		v1alpha1.ServiceAnnotation:  nil,
	})
	if err != nil {
		return err
	}
	m.Status = v1alpha1.MetricStatus{ObservedGeneration: m.Status.ObservedGeneration, Conditions: m.Status.Conditions}
	return p.Checkpoint(ctx, kit.Progressing(v1alpha1.ReasonCreating,
		"remote Metric "+id+" is gone; creating it again as annotation "+v1alpha1.RecreateAnnotation+" allows"))
}

// syncRemote keeps the remote Metric id in step with the spec. It costs no
// call and no write while the Metric is Ready at its generation and no
// drift check is due.
func (r *Reconciler) syncRemote(ctx context.Context, s *scope, id string) (
	kit.Outcome, ctrl.Result, error,
) {
	m := s.Obj
	if m.Annotations[v1alpha1.MetricIDAnnotation] != id || m.CreatePending() {
		err := r.patchAnnotationsIfCurrent(ctx, m, map[string]any{
			v1alpha1.MetricIDAnnotation:      id,
			v1alpha1.CreatePendingAnnotation: nil,
		})
		if err != nil {
			return kit.Progressing(v1alpha1.ReasonCreating, "recording the remote id: "+err.Error()), ctrl.Result{}, err
		}
	}
	drift := r.drift.Every(s.Conn.DriftInterval)
	if o, ok := syncedOutcome(m, id); ok {
		r.sent.forget(m.UID)
		return r.checkDrift(ctx, s, drift, id, o)
	}
	if m.Status.ID != id || isStalledOn(m, v1alpha1.ReasonRemoteNotFound) || !m.Spec.Allows(v1alpha1.ManagementUpdate) {
		// Without Update, a new spec is compared, never sent.
		return r.adopt(ctx, s, drift, id)
	}
	if c := kit.StalledOn(m.Status.Conditions, v1alpha1.ReasonRejected, m.Generation); c != nil {
		// The service refused this very spec; it would refuse it again.
		return kit.Stalled(c.Reason, c.Message), ctrl.Result{}, nil
	}
	if isStalledOn(m, v1alpha1.ReasonAmbiguousName) {
		if held, o, res, err := r.holdIfAmbiguous(ctx, s); held {
			return o, res, err
		}
		return r.adopt(ctx, s, drift, id)
	}
	if r.sent.sent(m.UID, m.Generation) {
		// This manager sent this very spec, and the service took it; the
		// cache does not show the status that records it yet. Its status
		// patch, from this stale copy, conflicts and is retried.
		return updated(m, id), ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return r.update(ctx, s, drift, id)
}

// syncedOutcome returns the Ready outcome of a Metric whose remote copy
// matches this generation: Ready at this generation, with the id in status.
func syncedOutcome(m *v1alpha1.Metric, id string) (kit.Outcome, bool) {
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.ObservedGeneration != m.Generation || m.Status.ID != id {
		return kit.Outcome{}, false
	}
	return kit.ReadyOutcome(m.Status.Conditions)
}

func isStalledOn(m *v1alpha1.Metric, reason string) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionStalled)
	return c != nil && c.Reason == reason
}

func adopted(id string) kit.Outcome {
	return kit.Ready(v1alpha1.ReasonAdopted, "adopted remote Metric "+id+" from annotation "+v1alpha1.MetricIDAnnotation)
}

func updated(m *v1alpha1.Metric, id string) kit.Outcome {
	return kit.Ready(v1alpha1.ReasonUpdated, fmt.Sprintf("updated remote Metric %s to generation %d", id, m.Generation))
}

// adopt reads the remote Metric id, whose values status did not hold yet
// (an adoption, or status lost in a backup and restore), records what the
// service returned, and sends the spec as one update if the two differ. A
// Metric the REST server created came with the id it assigned (the cluster
// is the system of record): its first status says Created, as for one the
// reconciler created.
func (r *Reconciler) adopt(ctx context.Context, s *scope, drift *kit.DriftSchedule, id string) (
	kit.Outcome, ctrl.Result, error,
) {
	m := s.Obj
	first := m.Status.ID != id
	seen, err := s.Client.Observe(ctx, id, &m.Spec)
	if err != nil {
		return remoteFailure(err, m, id)
	}
	seen.Metric.Record(&m.Status)
	got, corrected, err := r.settleDrift(ctx, s, id, seen)
	if err != nil {
		return remoteFailure(err, m, id)
	}
	got.Record(&m.Status)
	if corrected {
		ctrl.LoggerFrom(ctx).Info("Updated adopted remote Metric to the spec", "id", id)
		metricUpdates.Inc()
	}
	next := drift.Checked(m.UID)
	switch {
	case !m.Spec.Allows(v1alpha1.ManagementUpdate):
		return observed(id, m), next, nil
	case first && m.Labels[v1alpha1.CreatedByLabel] == v1alpha1.CreatedByRESTAPI:
		return createdLocally(id), next, nil
	}
	return adopted(id), next, nil
}

// update sends the whole desired variant of this generation as one update.
// An update whose outcome is unknown is simply sent again: it is idempotent.
func (r *Reconciler) update(ctx context.Context, s *scope, drift *kit.DriftSchedule, id string) (
	kit.Outcome, ctrl.Result, error,
) {
	m := s.Obj
	resp, err := s.Client.Update(ctx, id, &m.Spec)
	if err != nil {
		return remoteFailure(err, m, id)
	}
	ctrl.LoggerFrom(ctx).Info("Updated remote Metric", "id", id, "generation", m.Generation)
	r.sent.record(m.UID, m.Generation)
	resp.Record(&m.Status)
	r.recordSynced(m, nil)
	metricUpdates.Inc()
	return updated(m, id), drift.Checked(m.UID), nil
}

// checkDrift reads the remote Metric of a Ready Metric once its check is
// due and restores the spec with one update if someone changed it outside
// the cluster. Ready keeps its reason: the Metric was never not Ready.
func (r *Reconciler) checkDrift(ctx context.Context, s *scope, drift *kit.DriftSchedule, id string,
	current kit.Outcome) (kit.Outcome, ctrl.Result, error) {
	m := s.Obj
	due, wait := drift.Due(m.UID)
	if !due {
		return current, ctrl.Result{RequeueAfter: wait}, nil
	}
	seen, err := s.Client.Observe(ctx, id, &m.Spec)
	if err != nil {
		return driftFailure(err, m, id, current)
	}
	got, corrected, err := r.settleDrift(ctx, s, id, seen)
	if err != nil {
		return driftFailure(err, m, id, current)
	}
	if corrected {
		ctrl.LoggerFrom(ctx).Info("Restored remote Metric changed outside the cluster", "id", id)
		driftCorrections.Inc()
		r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, v1alpha1.EventDriftCorrected, "Update",
			"remote Metric %s was changed outside the cluster; restored the spec", id)
	}
	got.Record(&m.Status)
	return current, drift.Checked(m.UID), nil
}

// driftFailure is the outcome of a failed drift check: a passing failure of
// the service (5xx, 429, no answer) leaves the Metric Ready and retries
// the check with backoff; anything else is reported as for any call.
func driftFailure(err error, m *v1alpha1.Metric, id string, current kit.Outcome) (kit.Outcome, ctrl.Result, error) {
	switch remote.FailureOf(err) {
	case remote.Unavailable, remote.OutcomeUnknown, remote.RateLimited, remote.NotSent:
		return current, ctrl.Result{}, fmt.Errorf("checking remote Metric %s for drift: %w", id, err)
	}
	return remoteFailure(err, m, id)
}

// remoteFailure maps a failed read or update of m's remote Metric id. A
// 404 means the service has no such Metric (or does not serve the
// operation): the Metric stalls, and is never created again by itself.
func remoteFailure(err error, m *v1alpha1.Metric, id string) (kit.Outcome, ctrl.Result, error) {
	if remote.FailureOf(err) != remote.NotFound {
		return kit.UpstreamFailure(err)
	}
	return remoteNotFound(m, id), ctrl.Result{}, nil
}

// remoteNotFound is m's outcome when its remote Metric id is gone. It
// offers a new create only where m's policies allow one.
func remoteNotFound(m *v1alpha1.Metric, id string) kit.Outcome {
	gone := fmt.Sprintf("the service has no Metric %s (404), or does not serve reading and updating Metrics", id)
	if !m.Spec.Allows(v1alpha1.ManagementCreate) {
		return kit.Stalled(v1alpha1.ReasonRemoteNotFound, fmt.Sprintf(
			"%s; spec.managementPolicies %s do not allow Create: set annotation %s to the id of the Metric to use",
			gone, m.Spec.PoliciesString(), v1alpha1.MetricIDAnnotation))
	}
	return kit.Stalled(v1alpha1.ReasonRemoteNotFound, fmt.Sprintf(
		"%s; the operator does not create it again by itself: set annotation %s to %q to allow one new create, "+
			"or %s to the id of the Metric to use",
		gone, v1alpha1.RecreateAnnotation, id, v1alpha1.MetricIDAnnotation))
}
