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

package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=metrics,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=metrics/status,verbs=get;update;patch

// MetricReconciler keeps each Metric's remote Metric in step with its spec.
//
// The create is guarded against duplicates: the create-pending annotation is
// written, with an optimistic-concurrency update, before the request is
// sent; the remote id is written to the metric-id annotation right after.
// Pending without an id means an earlier attempt may have created the
// Metric: settlePending finds out from the service's list of Metrics, or
// stops for a person. Once an id is recorded, the
// Metric is never created again: a new spec is an update, and a Ready
// Metric is read again every drift interval (see metric_sync.go).
type MetricReconciler struct {
	base
	// standalone is true when the cluster is the system of record: no remote
	// Metric to read or correct.
	standalone bool
	drift      *driftSchedule
	recovery   *recovery
}

// Reconcile brings one Metric to Ready.
func (r *MetricReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &v1alpha1.Metric{}
	if live, err := r.getLive(ctx, req, m); !live {
		return ctrl.Result{}, err
	}
	if err := r.readWhole(ctx, m); err != nil {
		return ctrl.Result{}, err
	}
	p := r.newStatusPatcher(m)
	if o, held := holdIfPaused(m); held {
		return p.Finish(ctx, o, ctrl.Result{}, nil)
	}
	if !m.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, m, p)
	}
	if err := r.syncFinalizer(ctx, m); err != nil {
		return ctrl.Result{}, err
	}
	o, res, err := r.sync(ctx, p, m)
	return p.Finish(ctx, o, res, err)
}

// sync works out the Metric's state and takes the one step it calls for.
func (r *MetricReconciler) sync(ctx context.Context, p *statusPatcher, m *v1alpha1.Metric) (outcome, ctrl.Result, error) {
	if id := recordedID(m); id != "" {
		if o, refused, err := r.claimOutcome(ctx, m, id); refused || err != nil {
			return o, ctrl.Result{}, err
		}
		if !recreateAllowed(m, id) {
			return r.syncRemote(ctx, m, id)
		}
		if err := r.forgetID(ctx, p, m, id); err != nil {
			// Still RemoteNotFound with the recreate annotation: the next attempt repeats this.
			return remoteNotFound(id), ctrl.Result{}, err
		}
	}
	if hasPending(m) {
		// A create that never committed is sent again, through the guarded path.
		return r.settlePending(ctx, m, func(key evalapi.APIKey) (outcome, ctrl.Result, error) {
			return r.create(ctx, m, key)
		})
	}
	if o, held, err := stillRejected(ctx, p, m, v1alpha1.ReasonCreating); held {
		// The service refused this very spec; it would refuse it again.
		return o, ctrl.Result{}, err
	}

	key, err := r.creds.apiKey(ctx, m)
	if err != nil {
		return keyFailure(err)
	}
	return r.create(ctx, m, key)
}

// create sends the one create request, guarded by the create-pending annotation.
func (r *MetricReconciler) create(ctx context.Context, m *v1alpha1.Metric, key evalapi.APIKey) (outcome, ctrl.Result, error) {
	if r.standalone {
		return r.createLocal(ctx, m, key)
	}
	// Once the create is marked pending, see it through to its answer even
	// when the manager is stopping (a rolling update): cancelling it mid-flight
	// would leave the Metric at CreateOutcomeUnknown. The request's own timeout
	// still bounds it, within the manager's graceful shutdown.
	ctx = context.WithoutCancel(ctx)
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[v1alpha1.CreatePendingAnnotation] = r.clock.Now().UTC().Format(time.RFC3339)
	if r.wantsFinalizer(m) {
		controllerutil.AddFinalizer(m, v1alpha1.MetricFinalizer)
	}
	// Update, not Patch: it fails on a stale resourceVersion, so two workers
	// holding different views of this Metric cannot both send the create.
	// The same write adds the finalizer: from here on a remote Metric may exist.
	if err := r.client.Update(ctx, m); err != nil {
		return progressing(v1alpha1.ReasonCreating, "recording the pending create"), ctrl.Result{}, fmt.Errorf("recording the pending create: %w", err)
	}
	resp, err := r.service.CreateMetric(ctx, key, string(m.Spec.ProjectID), evalapi.RequestFor(&m.Spec))
	if err != nil {
		if evalapi.KindOf(err) == evalapi.KindOutcomeUnknown {
			// Leave the pending annotation: settlePending decides once the request is over.
			return r.awaitPendingCreate(m,
				"the create was sent but no answer came back, so the Metric may exist in the service: "+err.Error())
		}
		// The service answered and created nothing, or never saw the request: a retry is safe.
		if cerr := r.clearPending(ctx, m); cerr != nil {
			return progressing(v1alpha1.ReasonCreating, "clearing the pending create"), ctrl.Result{}, cerr
		}
		return upstreamFailure(err)
	}

	err = r.annotateID(ctx, m, resp.ID)
	// After the patch, which answers with the stored status.
	setEffective(&m.Status, resp)
	if err != nil {
		// status.id is patched all the same; the next reconcile finishes the annotation from it.
		return progressing(v1alpha1.ReasonCreating, "recording the remote id"), ctrl.Result{}, err
	}
	return ready(v1alpha1.ReasonCreated, "created remote Metric "+resp.ID), r.drift.requeue(m.UID), nil
}

// createLocal is create in standalone mode, where no service exists that
// could hold a duplicate: the id is assigned here and recorded in one write,
// without the create-pending guard. The write is conditional on the
// resourceVersion, so a reconcile working from a stale copy cannot replace
// an id recorded meanwhile.
func (r *MetricReconciler) createLocal(ctx context.Context, m *v1alpha1.Metric, key evalapi.APIKey) (outcome, ctrl.Result, error) {
	resp, err := r.service.CreateMetric(ctx, key, string(m.Spec.ProjectID), evalapi.RequestFor(&m.Spec))
	if err != nil {
		return upstreamFailure(err)
	}
	if err := r.patchAnnotationsIfCurrent(ctx, m, map[string]any{v1alpha1.MetricIDAnnotation: resp.ID}); err != nil {
		return progressing(v1alpha1.ReasonCreating, "recording the id"), ctrl.Result{}, err
	}
	setEffective(&m.Status, resp)
	return createdLocally(resp.ID), ctrl.Result{}, nil
}

func createdLocally(id string) outcome {
	return ready(v1alpha1.ReasonCreated, "created Metric "+id)
}

// annotateID records id in the metric-id annotation and drops create-pending,
// in one merge patch. It retries transient failures: until it lands, the id
// exists only in this process.
func (r *MetricReconciler) annotateID(ctx context.Context, m *v1alpha1.Metric, id string) error {
	return r.patchAnnotations(ctx, m, map[string]any{
		v1alpha1.MetricIDAnnotation:      id,
		v1alpha1.CreatePendingAnnotation: nil,
	})
}

func (r *MetricReconciler) clearPending(ctx context.Context, m *v1alpha1.Metric) error {
	return r.patchAnnotations(ctx, m, map[string]any{v1alpha1.CreatePendingAnnotation: nil})
}

func (r *MetricReconciler) patchAnnotations(ctx context.Context, m *v1alpha1.Metric, annotations map[string]any) error {
	patch, err := annotationPatch(annotations, "")
	if err != nil {
		return err
	}
	err = retry.OnError(retry.DefaultBackoff, isTransient, func() error {
		return r.client.Patch(ctx, m, patch)
	})
	if err != nil {
		return fmt.Errorf("patching annotations: %w", err)
	}
	return nil
}

// patchAnnotationsIfCurrent patches annotations only if m is the stored
// version: a decision taken on a stale copy fails with a conflict and is
// taken again.
func (r *MetricReconciler) patchAnnotationsIfCurrent(ctx context.Context, m *v1alpha1.Metric, annotations map[string]any) error {
	patch, err := annotationPatch(annotations, m.ResourceVersion)
	if err != nil {
		return err
	}
	if err := r.client.Patch(ctx, m, patch); err != nil {
		return fmt.Errorf("patching annotations: %w", err)
	}
	return nil
}

// annotationPatch is a merge patch of annotations, conditional on
// resourceVersion unless it is empty.
func annotationPatch(annotations map[string]any, resourceVersion string) (client.Patch, error) {
	metadata := map[string]any{"annotations": annotations}
	if resourceVersion != "" {
		metadata["resourceVersion"] = resourceVersion
	}
	data, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return nil, fmt.Errorf("encoding annotations: %w", err)
	}
	return client.RawPatch(types.MergePatchType, data), nil
}

func hasPending(m *v1alpha1.Metric) bool {
	_, ok := m.Annotations[v1alpha1.CreatePendingAnnotation]
	return ok
}

func isTransient(err error) bool {
	return !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err)
}

// setEffective records the response-form values the service returned.
func setEffective(st *v1alpha1.MetricStatus, resp evalapi.Metric) {
	st.ID = resp.ID
	st.Description = resp.Description
	st.Guidelines = &resp.Guidelines
	st.EvalModelName = ""
	if resp.EvalModelName != nil {
		st.EvalModelName = *resp.EvalModelName
	}
	st.Temperature = resp.Temperature
	st.PassingThreshold = resp.PassingThreshold
}
