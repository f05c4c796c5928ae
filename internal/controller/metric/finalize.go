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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// The Metric CRD is read when finalizing, to tell a CRD removal (which
// deletes every Metric) from the deletion of one Metric.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=metrics.evaluation.eval-operator.dev

// metricCRDName is the name of the Metric CRD.
const metricCRDName = "metrics.evaluation.eval-operator.dev"

var crdKind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// forceHint ends the message of a deletion that waits on the service.
const forceHint = "; to delete the object and keep the remote Metric, set spec.deletionPolicy to Orphan"

// finalize runs while a Metric carrying the finalizer is being deleted: it
// settles the remote Metric, by policy, then lets the object go. Until it
// can, the conditions say why and how to force it.
func (r *Reconciler) finalize(ctx context.Context, s *scope) (kit.Outcome, ctrl.Result, error) {
	m := s.Obj
	if m.Spec.DeletionPolicy != v1alpha1.DeletionPolicyOrphan && kit.MayHaveRemote(m) {
		// Whatever the policy, nothing is deleted through a service that
		// cannot be used or does not hold the remote Metric.
		if o, stop, err := s.CheckService(ctx); stop {
			o.Message += forceHint
			return o, ctrl.Result{}, err
		}
	}
	if !s.Client.NeedsFinalizer() {
		return r.release(ctx, s, corev1.EventTypeNormal, v1alpha1.EventOrphaned,
			"deletionPolicy is Orphan, managementPolicies do not allow Delete, or the operator runs standalone: "+kept(m))
	}
	if id := m.RecordedID(); id != "" {
		// A refused claim must not delete the remote Metric another object holds.
		if o, refused, _ := r.claimOutcome(ctx, s.Conn.Endpoint, m, id); refused {
			return r.release(ctx, s, corev1.EventTypeWarning, v1alpha1.EventOrphaned,
				"deleted nothing in the service: "+o.Message)
		}
		if m.Status.ID != id {
			if own, o, res, err := r.readBeforeDelete(ctx, s, id); !own {
				return r.releaseUnread(ctx, s, o, res, err)
			}
		}
	}
	removing, err := r.crdRemoved(ctx)
	if err != nil {
		return kit.Progressing(v1alpha1.ReasonDeletingRemote, err.Error()+forceHint), ctrl.Result{}, err
	}
	if removing {
		// A CRD removal deletes every Metric by cascade; a cleanup of the
		// cluster must not empty the service.
		return r.release(ctx, s, corev1.EventTypeWarning, v1alpha1.EventOrphaned,
			"the Metric CRD is being removed: "+kept(m))
	}
	o, res, err := r.deleteRemote(ctx, s)
	if o.Phase == kit.PhaseReady {
		return r.release(ctx, s, corev1.EventTypeNormal, o.Reason, o.Message)
	}
	return o, res, err
}

// readBeforeDelete reads an id never read under m (an adoption whose read
// failed or was refused, or an id a person recorded during the deletion):
// only an id m may adopt and the service has is m's to delete. own is true
// when it is; otherwise a Ready o releases m without another call, and any
// other o is a passing failure to retry.
func (r *Reconciler) readBeforeDelete(ctx context.Context, s *scope, id string) (
	own bool, o kit.Outcome, res ctrl.Result, err error,
) {
	m := s.Obj
	if o, refused := adoptionOutcome(s, id); refused {
		return false, kit.Ready(v1alpha1.EventOrphaned, o.Message), ctrl.Result{}, nil
	}
	seen, err := s.Client.Observe(ctx, id, &m.Spec)
	switch {
	case err == nil:
		seen.Metric.Record(&m.Status)
		return true, kit.Outcome{}, ctrl.Result{}, nil
	case remote.FailureOf(err) == remote.NotFound:
		return false, kit.Ready(v1alpha1.EventOrphaned, "the service has no Metric "+id+" this object could read"), ctrl.Result{}, nil
	}
	o, res, err = withForceHint(kit.UpstreamFailure(err))
	return false, o, res, err
}

// releaseUnread ends the deletion of m whose id readBeforeDelete did not
// find m's: released without deleting anything when o is Ready, else o.
func (r *Reconciler) releaseUnread(ctx context.Context, s *scope, o kit.Outcome, res ctrl.Result, err error) (
	kit.Outcome, ctrl.Result, error) {
	if o.Phase != kit.PhaseReady {
		return o, res, err
	}
	return r.release(ctx, s, corev1.EventTypeWarning, v1alpha1.EventOrphaned, "deleted nothing in the service: "+o.Message)
}

func kept(m *v1alpha1.Metric) string {
	if id := m.RecordedID(); id != "" {
		return "kept remote Metric " + id + " in the service"
	}
	return "deleted nothing in the service"
}

// deleteRemote deletes m's remote Metric. A ready outcome means there is no
// remote Metric left to wait for.
func (r *Reconciler) deleteRemote(ctx context.Context, s *scope) (
	kit.Outcome, ctrl.Result, error,
) {
	m := s.Obj
	c := s.Client
	id := m.RecordedID()
	if id == "" && m.CreatePending() {
		// An earlier create may have made a remote Metric: the service's list
		// settles it as for a live Metric, and a recovered one is deleted.
		o, res, err := r.settlePending(ctx, s, func() (kit.Outcome, ctrl.Result, error) {
			return kit.Ready(v1alpha1.ReasonCompleted, "the earlier create never reached the service: nothing to delete"),
				ctrl.Result{}, nil
		})
		switch {
		case err == nil && o.Reason == v1alpha1.ReasonRecovered:
		case o.Phase == kit.PhaseReady:
			return o, res, err
		default:
			return withForceHint(o, res, err)
		}
		id = m.RecordedID()
	}
	if id == "" {
		return kit.Ready(v1alpha1.ReasonCompleted, "no remote Metric was created: nothing to delete"), ctrl.Result{}, nil
	}
	deleted, err := c.Delete(ctx, id)
	switch {
	case deleted:
		ctrl.LoggerFrom(ctx).Info("Deleted remote Metric", "id", id)
		return kit.Ready(v1alpha1.ReasonCompleted, "deleted remote Metric "+id), ctrl.Result{}, nil
	case err == nil:
		return kit.Progressing(v1alpha1.ReasonDeletingRemote, "the service answered success=false; retrying"+forceHint),
			ctrl.Result{}, errors.New("deleting remote Metric " + id + ": the service answered success=false")
	case remote.FailureOf(err) == remote.NotFound:
		return notFoundOnDelete(err, id)
	}
	return withForceHint(kit.UpstreamFailure(err))
}

// notFoundOnDelete completes a deletion on the service's own 404 NOT_FOUND.
// A bare 404 or a 405 may come from a wrong --api-url or a service without
// the operation: the Metric may still exist, so the deletion is retried.
func notFoundOnDelete(err error, id string) (kit.Outcome, ctrl.Result, error) {
	if remote.Gone(err) {
		return kit.Ready(v1alpha1.ReasonAlreadyDeleted, "remote Metric "+id+" was already deleted"), ctrl.Result{}, nil
	}
	return kit.Progressing(v1alpha1.ReasonDeletingRemote,
			"the service does not serve DELETE /metrics/{id} (404 or 405 without NOT_FOUND): check --api-url; retrying"+forceHint),
		ctrl.Result{}, err
}

// withForceHint says how to force a deletion that waits on the service, and
// names a retried failure DeletingRemote.
func withForceHint(o kit.Outcome, res ctrl.Result, err error) (kit.Outcome, ctrl.Result, error) {
	if o.Phase == kit.PhaseProgressing {
		o.Reason = v1alpha1.ReasonDeletingRemote
	}
	o.Message += forceHint
	return o, res, err
}

// crdRemoved reports whether the Metric CRD is being deleted. It is read
// uncached and by metadata only: one GET per finalized Metric.
func (r *Reconciler) crdRemoved(ctx context.Context) (bool, error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(crdKind)
	err := r.Reader.Get(ctx, client.ObjectKey{Name: metricCRDName}, crd)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading CustomResourceDefinition %s to rule out its removal: %w", metricCRDName, err)
	}
	return !crd.DeletionTimestamp.IsZero(), nil
}

// release removes the finalizer, letting the object go, and says why in an
// event. The object is gone or about to be: no status is written.
func (r *Reconciler) release(ctx context.Context, s *scope, eventType, reason, message string) (
	kit.Outcome, ctrl.Result, error) {
	s.Unsaid()
	m := s.Obj
	if err := kit.PatchFinalizer(ctx, r.Client, m, controllerutil.RemoveFinalizer); err != nil {
		return kit.Outcome{}, ctrl.Result{}, err
	}
	r.sent.forget(m.UID)
	r.Recorder.Eventf(m, nil, eventType, reason, "Delete", "%s", message)
	ctrl.LoggerFrom(ctx).V(1).Info("Released", "reason", reason)
	return kit.Outcome{}, ctrl.Result{}, nil
}
