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
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=testsetdeletions;testcasedeletions,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=testsetdeletions/status;testcasedeletions/status,verbs=get;update;patch

// TestsetDeletionReconciler deletes one testset per TestsetDeletion.
type TestsetDeletionReconciler struct {
	base
}

// Reconcile runs one TestsetDeletion until the service confirms it.
func (r *TestsetDeletionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileObject(ctx, &r.base, req, &v1alpha1.TestsetDeletion{},
		func(d *v1alpha1.TestsetDeletion) *v1alpha1.DeletionStatus { return &d.Status }, r.sync)
}

func (r *TestsetDeletionReconciler) sync(ctx context.Context, d *v1alpha1.TestsetDeletion, _ *v1alpha1.DeletionStatus) (outcome, ctrl.Result, error) {
	if d.Status.Finished() {
		return r.expire(ctx, d, d.Spec.TTLSecondsAfterFinished, &d.Status)
	}
	key, err := r.creds.apiKey(ctx, d)
	if err != nil {
		return keyFailure(err)
	}
	d.Status.Attempts++
	resp, err := r.service.DeleteTestset(ctx, key, string(d.Spec.TestsetID))
	if err != nil {
		return upstreamFailure(err)
	}
	if !resp.Success {
		return notSucceeded(&d.Status)
	}
	return complete(&d.Status, d.Spec.TTLSecondsAfterFinished, "deleted testset "+string(d.Spec.TestsetID))
}

// TestcaseDeletionReconciler deletes testcases in batches, recording progress
// after each batch so that a restart resumes at the next one.
type TestcaseDeletionReconciler struct {
	base
	batchSize int
}

// Reconcile runs one TestcaseDeletion until every batch is confirmed.
func (r *TestcaseDeletionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileObject(ctx, &r.base, req, &v1alpha1.TestcaseDeletion{},
		func(d *v1alpha1.TestcaseDeletion) *v1alpha1.TestcaseDeletionStatus { return &d.Status }, r.sync)
}

// sync sends the remaining batches. Each confirmed batch but the last is
// checkpointed with its own status patch (before moves along with it); the
// last is recorded by Reconcile's patch.
func (r *TestcaseDeletionReconciler) sync(ctx context.Context, d *v1alpha1.TestcaseDeletion,
	before *v1alpha1.TestcaseDeletionStatus) (outcome, ctrl.Result, error) {
	if d.Status.Finished() {
		return r.expire(ctx, d, d.Spec.TTLSecondsAfterFinished, &d.Status.DeletionStatus)
	}
	key, err := r.creds.apiKey(ctx, d)
	if err != nil {
		return keyFailure(err)
	}
	ids := d.Spec.TestcaseIDs
	total := int32(len(ids)) //nolint:gosec // at most 10000, bounded by the CRD.
	for d.Status.Deleted < total {
		if d.Status.Deleted > 0 {
			if err := r.checkpoint(ctx, d, before, total); err != nil {
				return progressing(v1alpha1.ReasonDeleting, "recording progress"), ctrl.Result{}, err
			}
		}
		end := min(d.Status.Deleted+int32(r.batchSize), total) //nolint:gosec // flag-bounded batch size.
		d.Status.Attempts++
		resp, err := r.service.BulkDeleteTestcases(ctx, key, evalapi.IDStrings(ids[d.Status.Deleted:end]))
		if err != nil {
			return upstreamFailure(err)
		}
		if !resp.Success {
			return notSucceeded(&d.Status.DeletionStatus)
		}
		d.Status.Deleted = end
	}
	return complete(&d.Status.DeletionStatus, d.Spec.TTLSecondsAfterFinished,
		fmt.Sprintf("deleted %d testcases", total))
}

// checkpoint patches the progress so far, so a restart resumes after it.
func (r *TestcaseDeletionReconciler) checkpoint(ctx context.Context, d *v1alpha1.TestcaseDeletion,
	before *v1alpha1.TestcaseDeletionStatus, total int32) error {
	ev := r.record(d, progressing(v1alpha1.ReasonDeleting, fmt.Sprintf("deleted %d of %d testcases", d.Status.Deleted, total)))
	base := d.DeepCopy()
	base.Status = *before
	if err := r.commit(ctx, d, base, true, ev); err != nil {
		return err
	}
	d.Status.DeepCopyInto(before)
	return nil
}

// expire garbage-collects a finished deletion once its TTL has passed.
func (b *base) expire(ctx context.Context, obj client.Object, ttl *int32, st *v1alpha1.DeletionStatus) (outcome, ctrl.Result, error) {
	done := ready(v1alpha1.ReasonCompleted, "the deletion completed")
	if ttl == nil {
		return done, ctrl.Result{}, nil
	}
	left := time.Until(st.CompletionTime.Add(time.Duration(*ttl) * time.Second))
	if left > 0 {
		return done, ctrl.Result{RequeueAfter: left}, nil
	}
	uid := obj.GetUID()
	if err := b.client.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return done, ctrl.Result{}, fmt.Errorf("deleting after ttlSecondsAfterFinished: %w", err)
	}
	return done, ctrl.Result{}, nil
}

// complete marks a deletion finished; it is never sent again.
func complete(st *v1alpha1.DeletionStatus, ttl *int32, message string) (outcome, ctrl.Result, error) {
	success := true
	now := metav1.Now()
	st.Success = &success
	st.CompletionTime = &now
	var res ctrl.Result
	if ttl != nil {
		res.RequeueAfter = time.Duration(*ttl) * time.Second
	}
	return ready(v1alpha1.ReasonCompleted, message), res, nil
}

// notSucceeded handles an answer of {"success": false}: the service did not
// delete, so the call is retried with a backoff that grows with the attempts.
func notSucceeded(st *v1alpha1.DeletionStatus) (outcome, ctrl.Result, error) {
	success := false
	st.Success = &success
	delay := min(backoffBase<<min(st.Attempts, 16), backoffMax)
	return progressing(v1alpha1.ReasonDeleting,
			fmt.Sprintf("the service answered success=false (attempt %d); retrying in %s", st.Attempts, delay)),
		ctrl.Result{RequeueAfter: delay}, nil
}
