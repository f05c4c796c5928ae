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

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=metrics,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=metrics/status,verbs=get;update;patch

// MetricReconciler creates each Metric in the service exactly once.
//
// The service cannot get, update or delete a Metric, so a Metric's whole
// life upstream is one create. The create is guarded against duplicates: the
// create-pending annotation is written, with an optimistic-concurrency
// update, before the request is sent; the remote id is written to the
// metric-id annotation right after. Pending without an id means an earlier
// attempt may have created the Metric: settlePending finds out from the
// service's list of Metrics, or stops for a person.
type MetricReconciler struct {
	base
	recovery *recovery
}

// Reconcile brings one Metric to Ready.
func (r *MetricReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &v1alpha1.Metric{}
	if live, err := r.getLive(ctx, req, m); !live {
		return ctrl.Result{}, err
	}
	p := r.newStatusPatcher(m)
	o, res, err := r.sync(ctx, m)
	return p.Finish(ctx, o, res, err)
}

// sync works out the Metric's state and takes the one step it calls for.
func (r *MetricReconciler) sync(ctx context.Context, m *v1alpha1.Metric) (outcome, ctrl.Result, error) {
	_, pending := m.Annotations[v1alpha1.CreatePendingAnnotation]
	id := m.Annotations[v1alpha1.MetricIDAnnotation]
	if id == "" && pending && m.Status.ID != "" {
		// The create succeeded but writing its annotation failed: status has the id.
		id = m.Status.ID
	}
	switch {
	case id != "":
		return r.recordID(ctx, m, id)
	case pending:
		return r.settlePending(ctx, m)
	}
	if c := stalledOn(m.Status.Conditions, v1alpha1.ReasonRejected, m.Generation); c != nil {
		// The service refused this very spec; it would refuse it again.
		return stalled(c.Reason, c.Message), ctrl.Result{}, nil
	}

	key, err := r.creds.apiKey(ctx, m)
	if err != nil {
		return keyFailure(err)
	}
	return r.create(ctx, m, key)
}

// recordID makes sure id is in both the annotation and status. A Metric
// whose id is already recorded costs nothing: no call, no write.
func (r *MetricReconciler) recordID(ctx context.Context, m *v1alpha1.Metric, id string) (outcome, ctrl.Result, error) {
	if m.Annotations[v1alpha1.MetricIDAnnotation] != id || hasPending(m) {
		if err := r.annotateID(ctx, m, id); err != nil {
			return progressing(v1alpha1.ReasonCreating, "recording the remote id: "+err.Error()), ctrl.Result{}, err
		}
	}
	if m.Status.ID == id {
		if o, ok := readyOutcome(m.Status.Conditions); ok {
			return o, ctrl.Result{}, nil
		}
		return ready(v1alpha1.ReasonCreated, "created remote Metric "+id), ctrl.Result{}, nil
	}
	// Adopted, or status lost (backup and restore): the service cannot be
	// asked for the Metric, so its values are the spec with the service's
	// documented defaults.
	setEffective(&m.Status, evalapi.ResponseFor(id, evalapi.RequestFor(&m.Spec)))
	return ready(v1alpha1.ReasonAdopted, "adopted remote Metric "+id+" from annotation "+v1alpha1.MetricIDAnnotation),
		ctrl.Result{}, nil
}

// create sends the one create request, guarded by the create-pending annotation.
func (r *MetricReconciler) create(ctx context.Context, m *v1alpha1.Metric, key evalapi.APIKey) (outcome, ctrl.Result, error) {
	// Once the create is marked pending, see it through to its answer even
	// when the manager is stopping (a rolling update): cancelling it mid-flight
	// would leave the Metric at CreateOutcomeUnknown. The request's own timeout
	// still bounds it, within the manager's graceful shutdown.
	ctx = context.WithoutCancel(ctx)
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[v1alpha1.CreatePendingAnnotation] = r.clock.Now().UTC().Format(time.RFC3339)
	// Update, not Patch: it fails on a stale resourceVersion, so two workers
	// holding different views of this Metric cannot both send the create.
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
	return ready(v1alpha1.ReasonCreated, "created remote Metric "+resp.ID), ctrl.Result{}, nil
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
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return fmt.Errorf("encoding annotations: %w", err)
	}
	patch := client.RawPatch(types.MergePatchType, data)
	err = retry.OnError(retry.DefaultBackoff, isTransient, func() error {
		return r.client.Patch(ctx, m, patch)
	})
	if err != nil {
		return fmt.Errorf("patching annotations: %w", err)
	}
	return nil
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
