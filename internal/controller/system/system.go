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

// Package system reconciles Systems and SystemVersions. The service upserts
// both (a System by its name in the project, a version by its config), so
// a create whose answer was lost is sent again: there is no pending-create
// guard to keep, only the id to record. A System is deleted with its object
// as its policies say; a version cannot be deleted in the service.
package system

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=systems;systemversions,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=systems/status;systemversions/status,verbs=get;update;patch

// errStaleCache retries a reconcile that worked from a copy older than the
// stored object.
var errStaleCache = errors.New("the cache is behind the stored System")

// Reconciler keeps each System's remote System as its spec says.
type Reconciler struct {
	kit.Base
}

// systemScope is one reconcile of one System.
type systemScope = kit.Scope[*v1alpha1.System, remote.SystemClient]

// lifecycle is the System's part of kit.Lifecycle: its client, its
// finalizer, its claim and its steps. It records no pending create (an
// upsert sent twice is one System), so it checks its service itself.
func (r *Reconciler) lifecycle() *kit.Lifecycle[*v1alpha1.System, remote.SystemClient] {
	return &kit.Lifecycle[*v1alpha1.System, remote.SystemClient]{Base: r.Base,
		New:            func() *v1alpha1.System { return &v1alpha1.System{} },
		ClientFor:      (*remote.Connection).System,
		NeedsFinalizer: remote.SystemClient.NeedsFinalizer,
		Finalize:       r.finalize,
		Claim:          r.claimed,
		Steps:          r.sync,
	}
}

// sync takes the one step the System's state calls for: refuse it, upsert
// it, or read it and put back what drifted; a Ready System is read again
// every drift interval.
func (r *Reconciler) sync(ctx context.Context, sc *systemScope) (kit.Outcome, ctrl.Result, error) {
	o, err := r.step(ctx, sc)
	res := ctrl.Result{}
	if o.Phase == kit.PhaseReady {
		res.RequeueAfter = sc.Conn.DriftInterval // 0: drift checks are off
	}
	return o, res, err
}

// step is sync's one step.
func (r *Reconciler) step(ctx context.Context, sc *systemScope) (kit.Outcome, error) {
	s, c := sc.Obj, sc.Client
	if err := remote.CheckConfig(s.Spec.Config.Raw); err != nil {
		return kit.Stalled(v1alpha1.ReasonInvalidConfig, err.Error()), nil
	}
	id := s.RecordedID()
	if id == "" {
		if err := r.cacheCurrent(ctx, s); err != nil {
			return kit.Progressing(v1alpha1.ReasonCreating, "reading the System"), err
		}
	}
	changed := s.Generation != s.Status.ObservedGeneration
	switch {
	case id == "" && !s.Spec.Allows(v1alpha1.ManagementCreate):
		return kit.Stalled(v1alpha1.ReasonCreateNotAllowed,
			"no remote System is recorded and managementPolicies do not allow Create"), nil
	case id == "" || changed && s.Spec.Allows(v1alpha1.ManagementUpdate):
		return r.upsert(ctx, sc.Conn, c, s, id)
	}
	return r.observe(ctx, c, s, id)
}

// cacheCurrent fails with errStaleCache when the stored System records an
// id the cached copy s does not show yet: an upsert by name would then
// make a second System if the first was renamed meanwhile.
func (r *Reconciler) cacheCurrent(ctx context.Context, s *v1alpha1.System) error {
	live := &v1alpha1.System{}
	if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(s), live); err != nil {
		return fmt.Errorf("reading the System: %w", err)
	}
	if live.RecordedID() != "" {
		return errStaleCache
	}
	return nil
}

// observe reads remote System id and puts back what drifted, where the
// policies allow it.
func (r *Reconciler) observe(ctx context.Context, c remote.SystemClient, s *v1alpha1.System, id string) (kit.Outcome, error) {
	got, err := c.GetSystem(ctx, id, &s.Spec)
	if remote.FailureOf(err) == remote.NotFound {
		return kit.Stalled(v1alpha1.ReasonRemoteNotFound, "the service has no System "+id), nil
	}
	if err != nil {
		o, _, err := kit.UpstreamFailure(err)
		return o, err
	}
	if !got.Matches(&s.Spec) && s.Spec.Allows(v1alpha1.ManagementUpdate) {
		if got, err = c.UpdateSystem(ctx, id, &s.Spec); err != nil {
			o, _, err := kit.UpstreamFailure(err)
			return o, err
		}
		r.Recorder.Eventf(s, nil, "Normal", v1alpha1.EventDriftCorrected, "Update", "the remote System %s was changed outside the cluster; put back", id)
	}
	got.Record(&s.Status)
	setSynced(&s.Status.Conditions, s.Generation, got.Matches(&s.Spec))
	return settled(s.Status.Conditions, s.Spec.Allows(v1alpha1.ManagementUpdate), "remote System "+id), nil
}

// upsert sends the System by name (renaming the recorded one first, since
// the name is what the service upserts by) and records its id.
func (r *Reconciler) upsert(ctx context.Context, conn *remote.Connection, c remote.SystemClient, s *v1alpha1.System,
	id string) (kit.Outcome, error) {
	if id != "" {
		if _, err := c.UpdateSystem(ctx, id, &s.Spec); err != nil && remote.FailureOf(err) != remote.NotFound {
			o, _, err := kit.UpstreamFailure(err)
			return o, err
		}
	}
	got, err := c.UpsertSystem(ctx, id, &s.Spec)
	if err != nil {
		o, _, err := kit.UpstreamFailure(err)
		return o, err
	}
	if got.ID() != id {
		err := kit.PatchAnnotations(ctx, r.Client, s, map[string]any{
			v1alpha1.SystemIDAnnotation: got.ID(),
			v1alpha1.ServiceAnnotation:  conn.Endpoint,
		})
		if err != nil {
			return kit.Progressing(v1alpha1.ReasonCreating, "recording the remote id"), err
		}
	}
	got.Record(&s.Status)
	setSynced(&s.Status.Conditions, s.Generation, true)
	if id == "" {
		return kit.Ready(v1alpha1.ReasonCreated, "upserted remote System "+got.ID()), nil
	}
	return kit.Ready(v1alpha1.ReasonUpdated, "sent the spec to remote System "+got.ID()), nil
}

// finalize deletes the remote System when the policies say so, then lets
// the object go. The service keeps the System's versions.
func (r *Reconciler) finalize(ctx context.Context, sc *systemScope) (kit.Outcome, ctrl.Result, error) {
	s, c := sc.Obj, sc.Client
	if sc.ConnErr != nil {
		return kit.ConnectFailure(sc.ConnErr)
	}
	if !controllerutil.ContainsFinalizer(s, v1alpha1.MetricFinalizer) {
		return kit.Progressing(v1alpha1.ReasonDeleting, "deleting"), ctrl.Result{}, nil
	}
	if id := s.Status.ID; id != "" && s.Spec.DeletesRemote() {
		ok, err := c.DeleteSystem(ctx, id)
		switch {
		case remote.FailureOf(err) == remote.NotFound:
		case err != nil:
			o, res, err := kit.UpstreamFailure(err)
			o.Reason = v1alpha1.ReasonDeletingRemote
			return o, res, err
		case !ok:
			return kit.Progressing(v1alpha1.ReasonDeletingRemote, "the service answered success=false"),
				ctrl.Result{RequeueAfter: r.Backoff}, nil
		}
	} else if s.Status.ID != "" {
		r.Recorder.Eventf(s, nil, "Normal", v1alpha1.EventOrphaned, "Delete", "left remote System %s in the service", s.Status.ID)
	}
	err := kit.PatchFinalizer(ctx, r.Client, s, controllerutil.RemoveFinalizer)
	return kit.Progressing(v1alpha1.ReasonDeleting, "deleted"), ctrl.Result{}, err
}

// claimed stops s when another System of the cluster is the same remote
// System on the same service (the same name in the same project; on a
// standalone service, in the same namespace): the holder is the one whose
// id was recorded first, then the older.
func (r *Reconciler) claimed(ctx context.Context, sc *systemScope) (kit.Outcome, bool, error) {
	s, endpoint := sc.Obj, sc.Conn.Endpoint
	l := &v1alpha1.SystemList{}
	if err := r.Client.List(ctx, l); err != nil {
		return kit.Progressing(v1alpha1.ReasonPending, "listing Systems"), false, err
	}
	for i := range l.Items {
		o := &l.Items[i]
		if o.UID == s.UID || o.Spec.ProjectID != s.Spec.ProjectID || o.Spec.Name != s.Spec.Name ||
			o.Annotations[v1alpha1.ServiceAnnotation] != endpoint || o.Status.ID == "" || !holdsBefore(o, s) {
			continue
		}
		if endpoint == remote.Standalone && o.Namespace != s.Namespace {
			// Standalone, each namespace is a service of its own: another
			// tenant's System of the same name is another System.
			continue
		}
		where := "another namespace"
		if o.Namespace == s.Namespace {
			where = "System " + o.Name
		}
		return kit.Stalled(v1alpha1.ReasonSystemIDClaimed, "the service's System \""+string(s.Spec.Name)+
			"\" of project "+string(s.Spec.ProjectID)+" is held by "+where+"; rename this one or delete it"), true, nil
	}
	return kit.Outcome{}, false, nil
}

// holdsBefore reports whether a holds the remote System ahead of b: a
// recorded id over none, then the older, then the first by name.
func holdsBefore(a, b *v1alpha1.System) bool {
	if (a.Status.ID != "") != (b.Status.ID != "") {
		return a.Status.ID != ""
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

// setSynced records whether the remote copy is what the spec says.
func setSynced(conds *[]metav1.Condition, generation int64, matches bool) {
	c := metav1.Condition{Type: v1alpha1.ConditionSynced, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonUpToDate,
		Message: "the remote copy is as the spec says", ObservedGeneration: generation}
	if !matches {
		c.Status, c.Reason = metav1.ConditionFalse, v1alpha1.ReasonDrifted
		c.Message = "the remote copy differs from the spec and managementPolicies do not allow Update"
	}
	meta.SetStatusCondition(conds, c)
}

// settled is the outcome of a read that found nothing to do: the Ready
// outcome already recorded, so that a restart writes nothing, else
// UpToDate (Observed when the policies do not allow Update).
func settled(conds []metav1.Condition, mayUpdate bool, what string) kit.Outcome {
	if o, ok := kit.ReadyOutcome(conds); ok {
		return o
	}
	if !mayUpdate {
		return kit.Ready(v1alpha1.ReasonObserved, "read "+what)
	}
	return kit.Ready(v1alpha1.ReasonUpToDate, what+" is as the spec says")
}
