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

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// finalize runs while a Testset carrying the finalizer is being deleted:
// with deletionPolicy Delete it deletes the remote Testset, its testcases
// with it, then lets the object go. A remote Testset already gone (404) is
// deleted. Until it can, the conditions say why.
func (r *Reconciler) finalize(ctx context.Context, s *scope) (kit.Outcome, ctrl.Result, error) {
	t := s.Obj
	id := t.RecordedID()
	if id == "" && t.CreatePending() && s.Client.NeedsFinalizer() && s.ConnErr == nil {
		found, o, res, err := r.pendingOnDelete(ctx, s)
		if found == "" && (o.Reason != "" || err != nil) {
			return o, res, err
		}
		id = found
	}
	if o, res, err := r.letGo(ctx, s, id); o.Reason != "" || err != nil {
		return o, res, err
	}
	r.synced.forget(t.UID)
	s.Unsaid()
	return kit.Outcome{}, ctrl.Result{}, kit.PatchFinalizer(ctx, r.Client, t, controllerutil.RemoveFinalizer)
}

// letGo deletes remote Testset id, or leaves it, as t's policies say; a
// zero outcome once t may go. A refused claim deletes nothing: the remote
// Testset is another object's.
func (r *Reconciler) letGo(ctx context.Context, s *scope, id string) (kit.Outcome, ctrl.Result, error) {
	t := s.Obj
	if id == "" {
		return kit.Outcome{}, ctrl.Result{}, nil
	}
	claim, refused, err := r.claimOutcome(ctx, s.Conn.Endpoint, t)
	switch {
	case err != nil:
		return claim, ctrl.Result{}, err
	case refused:
		r.Recorder.Eventf(t, nil, corev1.EventTypeWarning, v1alpha1.EventOrphaned, "Delete",
			"deleted nothing in the service: %s", claim.Message)
		return kit.Outcome{}, ctrl.Result{}, nil
	case s.Client.NeedsFinalizer():
		if o, stop, err := s.CheckService(ctx); stop {
			return o, ctrl.Result{}, err
		}
		return r.deleteRemote(ctx, s, id)
	}
	r.Recorder.Eventf(t, nil, corev1.EventTypeNormal, v1alpha1.EventOrphaned, "Delete",
		"left remote Testset %s in the service (deletionPolicy %s, or a standalone service)", id, t.Spec.DeletionPolicy)
	return kit.Outcome{}, ctrl.Result{}, nil
}

// deleteRemote deletes remote Testset id; a zero outcome once it is gone.
func (r *Reconciler) deleteRemote(ctx context.Context, s *scope, id string) (
	kit.Outcome, ctrl.Result, error) {
	t := s.Obj
	done, err := s.Client.DeleteTestset(ctx, v1alpha1.ResourceID(id))
	switch {
	case err != nil && remote.FailureOf(err) != remote.NotFound:
		o, res, err := kit.UpstreamFailure(err)
		o.Message = "deleting remote Testset " + id + ": " + o.Message
		return o, res, err
	case err == nil && done == remote.NotDeleted:
		return kit.Progressing(v1alpha1.ReasonDeleting,
				"the service answered success=false to deleting remote Testset "+id+"; retrying"),
			ctrl.Result{RequeueAfter: r.Backoff}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Deleted remote Testset", "id", id)
	r.Recorder.Eventf(t, nil, corev1.EventTypeNormal, v1alpha1.ReasonDeleting, "Delete", "deleted remote Testset %s", id)
	return kit.Outcome{}, ctrl.Result{}, nil
}

// pendingOnDelete settles the create of a Testset deleted while it was
// pending: once the request is surely over, the remote Testset it made, if
// any, is the one of its name in the project's list. It returns its id, ""
// with no outcome when there is none, or the outcome to wait with.
func (r *Reconciler) pendingOnDelete(ctx context.Context, s *scope) (
	string, kit.Outcome, ctrl.Result, error) {
	t := s.Obj
	if wait := r.untilSettled(t); wait > 0 {
		return "", kit.Progressing(v1alpha1.ReasonDeleting,
				"an earlier create may still be under way; the service's list is read once it is surely over"),
			ctrl.Result{RequeueAfter: wait}, nil
	}
	found, err := r.named(ctx, s)
	switch {
	case err != nil:
		o, res, err := kit.UpstreamFailure(err)
		return "", o, res, err
	case len(found) == 1:
		return found[0].ID, kit.Outcome{}, ctrl.Result{}, nil
	case len(found) > 1:
		r.Recorder.Eventf(t, nil, corev1.EventTypeWarning, v1alpha1.EventOrphaned, "Delete",
			"a create was pending and project %s holds %d Testsets named %q; none was deleted",
			t.Spec.ProjectID, len(found), t.Spec.Name)
	}
	return "", kit.Outcome{}, ctrl.Result{}, nil
}
