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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// sync gives t a remote Testset and makes its testcases those of set. A
// Testset Ready at its generation whose source is unchanged (same digest)
// costs no call until its drift check is due.
func (r *Reconciler) sync(ctx context.Context, s *scope, set testcases.Set) (kit.Outcome, ctrl.Result, error) {
	t := s.Obj
	id := t.RecordedID()
	first := t.Status.ID != id || id == ""
	switch {
	case id == "":
		var o kit.Outcome
		var res ctrl.Result
		var err error
		if id, o, res, err = r.ensure(ctx, s); id == "" {
			return o, res, err
		}
	case first && !s.Conn.MayAdopt:
		return kit.Stalled(v1alpha1.ReasonAdoptionNotAllowed, fmt.Sprintf(
			"adopting remote Testset %s from annotation %s is refused: %s; give this object its own "+
				"spec.apiKeySecretRef, or remove the annotation to create a new remote Testset",
			id, v1alpha1.TestsetIDAnnotation, kit.SharedKey(s.Conn))), ctrl.Result{}, nil
	}
	t.Status.ID = id
	if kept, ok := s.Client.KeptInCluster(len(set.Cases), set.Digest); ok {
		return r.validated(t, set, kept), ctrl.Result{}, nil
	}
	drift := r.drift.Every(s.Conn.DriftInterval)
	if o, ok := upToDate(t, set); ok && !first {
		r.synced.forget(t.UID)
		if due, wait := drift.Due(t.UID); !due {
			return o, ctrl.Result{RequeueAfter: wait}, nil
		}
	} else if r.synced.synced(t.UID, t.Generation, set.Digest) {
		// This manager synced this very set; the cache does not show the
		// status that records it yet. The status patch from this stale copy
		// conflicts and is retried.
		return synced(t, set), ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return r.syncTestcases(ctx, s, drift, set, first)
}

// upToDate returns the Ready outcome of a Testset synced at this generation
// from a source with set's digest.
func upToDate(t *v1alpha1.Testset, set testcases.Set) (kit.Outcome, bool) {
	c := meta.FindStatusCondition(t.Status.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.ObservedGeneration != t.Generation || t.Status.Digest != set.Digest {
		return kit.Outcome{}, false
	}
	return kit.ReadyOutcome(t.Status.Conditions)
}

// syncTestcases reads remote Testset t.Status.ID and sweeps its testcases,
// then sends what makes both what the spec and set ask for: the Testset's
// own fields in one PATCH, removed testcases in bulk deletions, changed ones
// one update each, new ones in creates of at most 100. Without the Update
// policy it sends nothing and reports the difference in Synced.
func (r *Reconciler) syncTestcases(ctx context.Context, s *scope, drift *kit.DriftSchedule, set testcases.Set,
	first bool) (kit.Outcome, ctrl.Result, error) {
	t := s.Obj
	id := t.Status.ID
	held, err := s.Client.GetTestset(ctx, id)
	if err != nil {
		return remoteFailure(err, id)
	}
	have := testcases.NewRemote(string(t.Spec.KeyField))
	if err := s.Client.Testcases(ctx, id, func(tc remote.Testcase) error { have.Add(tc.ID, tc.Data); return nil }); err != nil {
		return remoteFailure(err, id)
	}
	plan := set.Diff(have)
	fields := !held.Matches(&t.Spec)
	next := drift.Checked(t.UID)
	if !t.Spec.Allows(v1alpha1.ManagementUpdate) {
		setSynced(&t.Status.Conditions, t.Generation, plan, fields)
		return kit.Ready(v1alpha1.ReasonObserved, fmt.Sprintf("observing remote Testset %s with %d testcases",
			id, have.Len())), next, nil
	}
	if err := apply(ctx, s, plan, fields); err != nil {
		return remoteFailure(err, id)
	}
	if !plan.Empty() || fields {
		ctrl.LoggerFrom(ctx).Info("Synced remote Testset", "id", id, "testcases", len(set.Cases),
			"created", len(plan.Create), "updated", len(plan.Update), "deleted", len(plan.Delete), "fields", fields)
	}
	r.synced.record(t.UID, t.Generation, set.Digest)
	o := synced(t, set)
	if first {
		o.Reason = v1alpha1.ReasonCreated
	}
	o.Message += "; this sync: " + plan.Done()
	if !plan.Empty() {
		r.announce(t, o)
	}
	return o, next, nil
}

// validated says that a standalone service's Testset holds set, kept in
// the cluster (kept says so): nothing is sent. It says what changed since
// the set this manager validated before, when it knows it.
func (r *Reconciler) validated(t *v1alpha1.Testset, set testcases.Set, kept string) kit.Outcome {
	change, changed := r.last.swap(client.ObjectKeyFromObject(t), t.UID, set)
	if change != "" {
		change = " (" + change + ")"
	}
	o := kit.Ready(v1alpha1.ReasonSynced, fmt.Sprintf("%d testcases validated%s; %s", len(set.Cases), change, kept))
	if changed {
		r.announce(t, o)
	}
	return o
}

// announce emits o's event for a sync that changed testcases while Ready
// keeps its reason: the status patch emits one only when Ready changes, and
// a reviewer looks for what each sync did in the events.
func (r *Reconciler) announce(t *v1alpha1.Testset, o kit.Outcome) {
	c := meta.FindStatusCondition(t.Status.Conditions, v1alpha1.ConditionReady)
	if c != nil && c.Status == metav1.ConditionTrue && c.Reason == o.Reason {
		r.Recorder.Eventf(t, nil, corev1.EventTypeNormal, o.Reason, "Sync", "%s", o.Message)
	}
}

// synced records in t's status that the remote Testset holds set, and
// returns the outcome that says so.
func synced(t *v1alpha1.Testset, set testcases.Set) kit.Outcome {
	t.Status.Testcases, t.Status.Digest = int32(len(set.Cases)), set.Digest //nolint:gosec // at most testcases.MaxTestcases
	setSynced(&t.Status.Conditions, t.Generation, testcases.Plan{}, false)
	return kit.Ready(v1alpha1.ReasonSynced, fmt.Sprintf("remote Testset %s holds the %d testcases of the source",
		t.Status.ID, len(set.Cases)))
}

// apply sends plan: the own fields first, then deletions (in the
// service's bulk-delete batches), updates and creates.
func apply(ctx context.Context, s *scope, plan testcases.Plan, fields bool) error {
	t := s.Obj
	id := t.Status.ID
	if fields {
		if _, err := s.Client.UpdateTestset(ctx, id, &t.Spec); err != nil {
			return err
		}
	}
	batch := s.Conn.BulkDeleteBatch
	if batch <= 0 {
		batch = len(plan.Delete)
	}
	for start := 0; start < len(plan.Delete); start += batch {
		ids := plan.Delete[start:min(start+batch, len(plan.Delete))]
		done, err := s.Client.DeleteTestcases(ctx, resourceIDs(ids))
		if err != nil {
			return err
		}
		if done == remote.NotDeleted {
			return fmt.Errorf("the service answered success=false to deleting %d testcases", len(ids))
		}
	}
	for _, u := range plan.Update {
		err := s.Client.UpdateTestcase(ctx, u.ID, u.Data)
		if remote.FailureOf(err) == remote.NotFound {
			// Deleted outside the cluster since the sweep: the testcase is
			// gone, not the Testset. The next attempt sweeps again.
			return fmt.Errorf("testcase %s was deleted outside the cluster during the sync; sweeping again", u.ID)
		}
		if err != nil {
			return err
		}
	}
	if len(plan.Create) > 0 {
		return s.Client.CreateTestcases(ctx, id, plan.Create)
	}
	return nil
}

func resourceIDs(ids []string) []v1alpha1.ResourceID {
	out := make([]v1alpha1.ResourceID, len(ids))
	for i, id := range ids {
		out[i] = v1alpha1.ResourceID(id)
	}
	return out
}

// setSynced writes Synced: True when the remote Testset is what the spec
// and source ask for, else False, reason Drifted, with what differs.
func setSynced(conds *[]metav1.Condition, generation int64, plan testcases.Plan, fields bool) {
	c := metav1.Condition{Type: v1alpha1.ConditionSynced, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonUpToDate, Message: "the remote Testset holds the source's testcases",
		ObservedGeneration: generation}
	if !plan.Empty() || fields {
		c.Status, c.Reason = metav1.ConditionFalse, v1alpha1.ReasonDrifted
		c.Message = "the remote Testset differs from the source: " + plan.String()
		if fields {
			c.Message += ", and its name, description, field mapping or schema differ"
		}
		c.Message += "; spec.managementPolicies do not allow Update, so nothing is sent"
	}
	meta.SetStatusCondition(conds, c)
}

// remoteFailure maps a failed call on remote Testset id: a 404 means it is
// gone, which a person settles (it is never created again by itself).
func remoteFailure(err error, id string) (kit.Outcome, ctrl.Result, error) {
	if remote.FailureOf(err) != remote.NotFound {
		return kit.UpstreamFailure(err)
	}
	return kit.Stalled(v1alpha1.ReasonRemoteNotFound, fmt.Sprintf(
		"the service has no Testset %s (404); the operator does not create it again by itself: delete this "+
			"Testset and apply it again to create a new one, or set annotation %s to the id of the Testset to use",
		id, v1alpha1.TestsetIDAnnotation)), ctrl.Result{}, nil
}
