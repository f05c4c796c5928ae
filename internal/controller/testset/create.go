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
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// Recovery reads at most recoveryPages pages of the project's Testsets.
const (
	recoveryPageSize = 100
	recoveryPages    = 10
)

// ensure returns the id of t's remote Testset, creating it once, or the
// outcome that keeps it from having one yet ("" and the outcome).
func (r *Reconciler) ensure(ctx context.Context, s *scope) (string, kit.Outcome, ctrl.Result, error) {
	t := s.Obj
	if t.CreatePending() {
		return r.settle(ctx, s)
	}
	if !t.Spec.Allows(v1alpha1.ManagementCreate) {
		return "", kit.Stalled(v1alpha1.ReasonCreateNotAllowed, fmt.Sprintf(
			"spec.managementPolicies %s do not allow Create: set annotation %s to the id of the Testset to use",
			t.Spec.PoliciesString(), v1alpha1.TestsetIDAnnotation)), ctrl.Result{}, nil
	}
	if o, held, err := kit.StillRejected(ctx, s.Status, t, v1alpha1.ReasonCreating); held {
		// The service refused this very spec; it would refuse it again.
		return "", o, ctrl.Result{}, err
	}
	return r.create(ctx, s)
}

// create sends the one create request, guarded as a Metric's is.
func (r *Reconciler) create(ctx context.Context, s *scope) (
	string, kit.Outcome, ctrl.Result, error,
) {
	t := s.Obj
	guarded := false
	guard := func(ctx context.Context) error {
		guarded = true
		return kit.MarkPending(ctx, r.Client, r.Clock, t, s.Conn.Endpoint, t.Spec.DeletesRemote())
	}
	// See a create marked pending through to its answer even while the
	// manager stops; the request's own timeout bounds it.
	got, err := s.Client.CreateTestset(context.WithoutCancel(ctx), &t.Spec, guard)
	switch {
	case err != nil && !guarded:
		o, res, err := kit.UpstreamFailure(err)
		return "", o, res, err
	case !guarded:
		// Standalone: the id was assigned here; one conditional write records it.
		err := kit.PatchAnnotationsIfCurrent(ctx, r.Client, t, map[string]any{
			v1alpha1.TestsetIDAnnotation: got.ID, v1alpha1.ServiceAnnotation: s.Conn.Endpoint})
		if err != nil {
			return "", kit.Progressing(v1alpha1.ReasonCreating, "recording the id"), ctrl.Result{}, err
		}
		return got.ID, kit.Outcome{}, ctrl.Result{}, nil
	case !t.CreatePending():
		return "", kit.Progressing(v1alpha1.ReasonCreating, "recording the pending create"), ctrl.Result{}, err
	case remote.FailureOf(err) == remote.OutcomeUnknown:
		// Leave the pending mark: settle decides from the list once the request is surely over.
		return "", kit.Progressing(v1alpha1.ReasonCreateOutcomeUnknown,
				"the create was sent but no answer came back, so the Testset may exist in the service: "+err.Error()),
			ctrl.Result{RequeueAfter: r.inFlight}, nil
	case err != nil:
		if cerr := kit.PatchAnnotations(ctx, r.Client, t, map[string]any{
			v1alpha1.CreatePendingAnnotation: nil, v1alpha1.ServiceAnnotation: nil}); cerr != nil {
			return "", kit.Progressing(v1alpha1.ReasonCreating, "clearing the pending create"), ctrl.Result{}, cerr
		}
		o, res, err := kit.UpstreamFailure(err)
		return "", o, res, err
	}
	ctrl.LoggerFrom(ctx).Info("Created remote Testset", "id", got.ID, "service", s.Conn.Service)
	if err := r.recordID(ctx, t, got.ID); err != nil {
		return "", kit.Progressing(v1alpha1.ReasonCreating, "recording the remote id"), ctrl.Result{}, err
	}
	return got.ID, kit.Outcome{}, ctrl.Result{}, nil
}

// recordID writes id to the testset-id annotation and drops create-pending,
// in one patch retried on transient failures: until it lands, the id exists
// only in this process. status.id follows in the reconcile's status patch.
func (r *Reconciler) recordID(ctx context.Context, t *v1alpha1.Testset, id string) error {
	t.Status.ID = id
	return kit.PatchAnnotations(ctx, r.Client, t, map[string]any{
		v1alpha1.TestsetIDAnnotation: id, v1alpha1.CreatePendingAnnotation: nil})
}

// settle decides a create whose answer was lost, from the project's list
// of Testsets by name, once the request is surely over: one found is the
// one created and is recorded; none means nothing was created, and the
// create is sent again; several need a person.
func (r *Reconciler) settle(ctx context.Context, s *scope) (
	string, kit.Outcome, ctrl.Result, error,
) {
	t := s.Obj
	if wait := r.untilSettled(t); wait > 0 {
		return "", kit.Progressing(v1alpha1.ReasonCreateOutcomeUnknown,
				"an earlier create may still be under way; the service's list is read once it is surely over"),
			ctrl.Result{RequeueAfter: wait}, nil
	}
	found, err := r.named(ctx, s)
	if err != nil {
		o, res, err := kit.UpstreamFailure(err)
		return "", o, res, err
	}
	switch {
	case len(found) == 0:
		if err := kit.PatchAnnotations(ctx, r.Client, t, map[string]any{
			v1alpha1.CreatePendingAnnotation: nil, v1alpha1.ServiceAnnotation: nil}); err != nil {
			return "", kit.Progressing(v1alpha1.ReasonCreating, "clearing the pending create"), ctrl.Result{}, err
		}
		return r.create(ctx, s)
	case len(found) > 1:
		return "", kit.Stalled(v1alpha1.ReasonAmbiguousName, fmt.Sprintf(
			"an earlier create may have reached the service but its id was not recorded, and project %s holds "+
				"%d Testsets named %q: set annotation %s to the id of the one this object created",
			t.Spec.ProjectID, len(found), t.Spec.Name, v1alpha1.TestsetIDAnnotation)), ctrl.Result{}, nil
	case !s.Conn.MayAdopt:
		return "", kit.Stalled(v1alpha1.ReasonAdoptionNotAllowed, fmt.Sprintf(
			"an earlier create may have reached the service but its id was not recorded; taking remote Testset %s "+
				"by its name is refused: %s's key is shared by every namespace it allows; give this object its own "+
				"spec.apiKeySecretRef, or set annotation %s to the id it created",
			found[0].ID, s.Conn.Service, v1alpha1.TestsetIDAnnotation)), ctrl.Result{}, nil
	}
	if err := r.recordID(ctx, t, found[0].ID); err != nil {
		return "", kit.Progressing(v1alpha1.ReasonCreating, "recording the remote id"), ctrl.Result{}, err
	}
	r.Recorder.Eventf(t, nil, corev1.EventTypeNormal, v1alpha1.ReasonRecovered, "Create",
		"the create whose answer was lost did create remote Testset %s; recorded its id", found[0].ID)
	return found[0].ID, kit.Outcome{}, ctrl.Result{}, nil
}

// untilSettled is how long t's pending create may still be under way.
func (r *Reconciler) untilSettled(t *v1alpha1.Testset) time.Duration {
	at, err := time.Parse(time.RFC3339, t.Annotations[v1alpha1.CreatePendingAnnotation])
	if err != nil {
		return 0
	}
	return at.Add(r.inFlight).Sub(r.Clock.Now())
}

// named lists the project's Testsets named as t's spec asks.
func (r *Reconciler) named(ctx context.Context, s *scope) ([]remote.Testset, error) {
	t := s.Obj
	var found []remote.Testset
	cursor := ""
	for range recoveryPages {
		page, err := s.Client.ListTestsets(ctx, t.Spec.ProjectID, cursor, recoveryPageSize)
		if err != nil {
			return nil, fmt.Errorf("listing project %s's Testsets: %w", t.Spec.ProjectID, err)
		}
		for _, ts := range page.Testsets {
			if ts.Name == string(t.Spec.Name) {
				found = append(found, ts)
			}
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	return found, nil
}
