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

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=metrics,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=metrics/status,verbs=get;update;patch

// Reconciler keeps each Metric's remote Metric in step with its spec.
//
// The create is guarded against duplicates: the create-pending annotation is
// written, with an optimistic-concurrency update, before the request is
// sent; the remote id is written to the metric-id annotation right after.
// Pending without an id means an earlier attempt may have created the
// Metric: settlePending finds out from the service's list of Metrics, or
// stops for a person. Once an id is recorded, the
// Metric is never created again: a new spec is an update, and a Ready
// Metric is read again every drift interval (see sync.go).
type Reconciler struct {
	kit.Base
	drift    *kit.DriftSchedules
	recovery *recovery
	sent     *sentSpecs
}

// scope is one reconcile of one Metric.
type scope = kit.Scope[*v1alpha1.Metric, remote.MetricClient]

// lifecycle is the Metric's part of kit.Lifecycle: its client, its read of
// what the cache trims, its finalizer, its claim and its steps.
func (r *Reconciler) lifecycle() *kit.Lifecycle[*v1alpha1.Metric, remote.MetricClient] {
	return &kit.Lifecycle[*v1alpha1.Metric, remote.MetricClient]{Base: r.Base,
		New:       func() *v1alpha1.Metric { return &v1alpha1.Metric{} },
		ClientFor: (*remote.Connection).Metric,
		Read: func(ctx context.Context, s *scope) error {
			return r.readWhole(ctx, s.Obj, r.drift.Every(s.Conn.DriftInterval))
		},
		Remote:         &kit.MetricIDs,
		NeedsFinalizer: remote.MetricClient.NeedsFinalizer,
		Finalize:       r.finalize,
		Claim:          r.claim,
		Steps:          r.sync,
	}
}

// sync works out the Metric's state and takes the one step it calls for.
func (r *Reconciler) sync(ctx context.Context, s *scope) (kit.Outcome, ctrl.Result, error) {
	m := s.Obj
	if id := m.RecordedID(); id != "" {
		if o, refused := adoptionOutcome(s, id); refused {
			return o, ctrl.Result{}, nil
		}
		if !recreateAllowed(m, id) || !m.Spec.Allows(v1alpha1.ManagementCreate) {
			return r.syncRemote(ctx, s, id)
		}
		if err := r.forgetID(ctx, s.Status, m, id); err != nil {
			// Still RemoteNotFound with the recreate annotation: the next attempt repeats this.
			return remoteNotFound(m, id), ctrl.Result{}, err
		}
	}
	if m.CreatePending() {
		// A create that never committed is sent again, through the guarded path.
		return r.settlePending(ctx, s, func() (kit.Outcome, ctrl.Result, error) {
			return r.createOrAdopt(ctx, s)
		})
	}
	if o, held, err := kit.StillRejected(ctx, s.Status, m, v1alpha1.ReasonCreating); held {
		// The service refused this very spec; it would refuse it again.
		return o, ctrl.Result{}, err
	}
	return r.createOrAdopt(ctx, s)
}

// create sends the one create request. Where the service could end up
// holding a duplicate, the client first calls guard, which records the
// create-pending annotation; where it cannot (the cluster is the system of
// record), the id is recorded in one conditional write.
func (r *Reconciler) create(ctx context.Context, s *scope) (
	kit.Outcome, ctrl.Result, error,
) {
	m := s.Obj
	guarded := false
	guard := func(ctx context.Context) error {
		guarded = true
		return kit.MarkPending(ctx, r.Client, r.Clock, m, s.Conn.Endpoint, m.Spec.DeletesRemote())
	}
	// Once the create is marked pending, see it through to its answer even
	// when the manager is stopping (a rolling update): cancelling it mid-flight
	// would leave the Metric at CreateOutcomeUnknown. The request's own timeout
	// still bounds it, within the manager's graceful shutdown.
	resp, err := s.Client.Create(context.WithoutCancel(ctx), &m.Spec, guard)
	switch {
	case err != nil && !guarded:
		return kit.UpstreamFailure(err)
	case !guarded:
		return r.recordLocalID(ctx, m, s.Conn.Endpoint, resp)
	case !m.CreatePending():
		// The guard itself failed: nothing was sent.
		return kit.Progressing(v1alpha1.ReasonCreating, "recording the pending create"), ctrl.Result{}, err
	case remote.FailureOf(err) == remote.OutcomeUnknown:
		// Leave the pending annotation: settlePending decides once the request is over.
		return r.awaitPendingCreate(m,
			"the create was sent but no answer came back, so the Metric may exist in the service: "+err.Error())
	case err != nil:
		// The service answered and created nothing, or never saw the request: a retry is safe.
		if cerr := r.clearPending(ctx, m); cerr != nil {
			return kit.Progressing(v1alpha1.ReasonCreating, "clearing the pending create"), ctrl.Result{}, cerr
		}
		return kit.UpstreamFailure(err)
	}
	ctrl.LoggerFrom(ctx).Info("Created remote Metric", "id", resp.ID, "service", s.Conn.Service)
	err = r.annotateID(ctx, m, resp.ID)
	// After the patch, which answers with the stored status.
	resp.Record(&m.Status)
	r.recordSynced(m, nil)
	if err != nil {
		// status.id is patched all the same; the next reconcile finishes the annotation from it.
		return kit.Progressing(v1alpha1.ReasonCreating, "recording the remote id"), ctrl.Result{}, err
	}
	return kit.Ready(v1alpha1.ReasonCreated, "created remote Metric "+resp.ID), r.drift.Every(s.Conn.DriftInterval).Requeue(m.UID), nil
}

// recordLocalID records the id of a create that cannot have left a
// duplicate (the cluster is the system of record): the id was assigned
// locally and is recorded in one write, without the create-pending guard.
// The write is conditional on the resourceVersion, so a reconcile working
// from a stale copy cannot replace an id recorded meanwhile.
func (r *Reconciler) recordLocalID(ctx context.Context, m *v1alpha1.Metric, endpoint string, resp remote.Metric) (
	kit.Outcome, ctrl.Result, error,
) {
	err := r.patchAnnotationsIfCurrent(ctx, m, map[string]any{
		v1alpha1.MetricIDAnnotation: resp.ID,
		v1alpha1.ServiceAnnotation:  endpoint,
	})
	if err != nil {
		return kit.Progressing(v1alpha1.ReasonCreating, "recording the id"), ctrl.Result{}, err
	}
	resp.Record(&m.Status)
	r.recordSynced(m, nil)
	return createdLocally(resp.ID), ctrl.Result{}, nil
}

func createdLocally(id string) kit.Outcome {
	return kit.Ready(v1alpha1.ReasonCreated, "created Metric "+id)
}

// annotateID records id in the metric-id annotation and drops create-pending,
// in one merge patch. It retries transient failures: until it lands, the id
// exists only in this process.
func (r *Reconciler) annotateID(ctx context.Context, m *v1alpha1.Metric, id string) error {
	return r.patchAnnotations(ctx, m, map[string]any{
		v1alpha1.MetricIDAnnotation:      id,
		v1alpha1.CreatePendingAnnotation: nil,
	})
}

// clearPending drops create-pending once the create is known to have made
// nothing, and with it the service the create was sent to.
func (r *Reconciler) clearPending(ctx context.Context, m *v1alpha1.Metric) error {
	return r.patchAnnotations(ctx, m, map[string]any{
		v1alpha1.CreatePendingAnnotation: nil,
		v1alpha1.ServiceAnnotation:       nil,
	})
}

func (r *Reconciler) patchAnnotations(ctx context.Context, m *v1alpha1.Metric, annotations map[string]any) error {
	return kit.PatchAnnotations(ctx, r.Client, m, annotations)
}

// patchAnnotationsIfCurrent patches annotations only if m is the stored
// version: a decision taken on a stale copy fails with a conflict and is
// taken again.
func (r *Reconciler) patchAnnotationsIfCurrent(ctx context.Context, m *v1alpha1.Metric, annotations map[string]any) error {
	return kit.PatchAnnotationsIfCurrent(ctx, r.Client, m, annotations)
}
