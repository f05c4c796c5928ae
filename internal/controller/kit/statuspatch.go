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

package kit

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// StatusPatcher writes one object's status during a reconcile, in the spirit
// of cluster-api's patch helper: it snapshots the object when the reconcile
// starts, and each write sends the status change since the last snapshot,
// or nothing when there is none. A reconcile that changes nothing writes
// nothing.
type StatusPatcher struct {
	client   client.Client
	recorder recorder.EventRecorder
	obj      v1alpha1.Object
	// snapshot is obj as of the start of the reconcile or the last checkpoint.
	snapshot runtime.Object
	// service is the service obj resolved to, recorded with every write:
	// the reconcile's own writes to obj answer with the stored status.
	service string
	// resolved is set once Resolved was called: only then is service written.
	resolved bool
}

// Resolved records that the object resolved to service (status.service);
// "" clears it.
func (p *StatusPatcher) Resolved(service string) { p.service, p.resolved = service, true }

// NewStatusPatcher snapshots obj, whose status the reconcile is about to change.
func (b *Base) NewStatusPatcher(obj v1alpha1.Object) *StatusPatcher {
	return &StatusPatcher{client: b.Client, recorder: b.Recorder, obj: obj, snapshot: obj.DeepCopyObject()}
}

// Checkpoint writes o (see write) in the middle of a reconcile, so that a
// restart resumes after the progress made so far; the next write sends only
// what changes after it.
func (p *StatusPatcher) Checkpoint(ctx context.Context, o Outcome) error {
	if err := p.write(ctx, o); err != nil {
		return err
	}
	p.snapshot = p.obj.DeepCopyObject()
	return nil
}

// Finish ends a reconcile: it writes its outcome o (see write) and logs the
// decision, o with res and err, at V(1). It returns what Reconcile returns:
// res and err, or the error of writing the status.
//
// A reconcile whose call was held back by its service's own limits, or
// whose first create waits for the cache to show its service, changed
// nothing remote: it writes nothing and comes back when its turn is due.
func (p *StatusPatcher) Finish(ctx context.Context, o Outcome, res ctrl.Result, err error) (ctrl.Result, error) {
	if after, ok := remote.ThrottledFor(err); ok {
		ctrl.LoggerFrom(ctx).V(1).Info("Throttled", "requeueAfter", after)
		return ctrl.Result{RequeueAfter: after}, nil
	}
	if after, ok := remote.CacheLagFor(err); ok {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for the cache", "reason", err.Error(), "requeueAfter", after)
		return ctrl.Result{RequeueAfter: after}, nil
	}
	if werr := p.write(ctx, o); werr != nil {
		return ctrl.Result{}, werr
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Reconciled", "phase", o.Phase, "reason", o.Reason,
		"requeueAfter", res.RequeueAfter, "backoff", err != nil)
	return res, err
}

// write records o in the conditions and observedGeneration, patches the
// status if it changed, and emits an event if Ready changed.
func (p *StatusPatcher) write(ctx context.Context, o Outcome) error {
	readyChanged := changesState(*p.obj.GetConditions(), o)
	SetConditions(p.obj.GetConditions(), p.obj.GetGeneration(), o)
	p.obj.SetObservedGeneration(p.obj.GetGeneration())
	if p.resolved {
		p.obj.SetResolvedService(p.service)
	}
	if err := p.patch(ctx); err != nil {
		return err
	}
	if readyChanged {
		p.recorder.Eventf(p.obj, nil, EventType(o), o.Reason, "Reconcile", "%s", o.Message)
	}
	return nil
}

// patch sends the status change since the snapshot, if any. The patch is
// optimistic: a reconcile that worked from a stale copy fails with a
// conflict and runs again, rather than overwrite a newer status. An object
// deleted meanwhile needs no status.
func (p *StatusPatcher) patch(ctx context.Context) error {
	from, changed, err := statusBase(p.obj, p.snapshot)
	if err != nil || !changed {
		return err
	}
	err = p.client.Status().Patch(ctx, p.obj, client.MergeFromWithOptions(from, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("patching status: %w", err)
	}
	return nil
}

// statusBase returns obj as it is now but with the status of snapshot: the
// base to compute a status patch from. It keeps obj's metadata, whose
// resourceVersion the optimistic lock needs; the reconcile may have written
// the object since the snapshot. changed reports whether the two statuses
// differ as the API server would see them.
func statusBase(obj client.Object, snapshot runtime.Object) (from client.Object, changed bool, err error) {
	current, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, false, fmt.Errorf("converting %T: %w", obj, err)
	}
	earlier, err := runtime.DefaultUnstructuredConverter.ToUnstructured(snapshot)
	if err != nil {
		return nil, false, fmt.Errorf("converting %T: %w", snapshot, err)
	}
	if equality.Semantic.DeepEqual(current["status"], earlier["status"]) {
		return nil, false, nil
	}
	current["status"] = earlier["status"]
	return &unstructured.Unstructured{Object: current}, true, nil
}
