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
	d := &v1alpha1.TestsetDeletion{}
	if live, err := r.getLive(ctx, req, d); !live {
		return ctrl.Result{}, err
	}
	p := r.newStatusPatcher(d)
	if o, held := holdIfPaused(d); held {
		return p.Finish(ctx, o, ctrl.Result{}, nil)
	}
	o, res, err := r.sync(ctx, d, p)
	return p.Finish(ctx, o, res, err)
}

func (r *TestsetDeletionReconciler) sync(ctx context.Context, d *v1alpha1.TestsetDeletion,
	p *statusPatcher) (outcome, ctrl.Result, error) {
	if d.Status.Finished() {
		return r.expire(ctx, d, d.Spec.TTLSecondsAfterFinished, &d.Status)
	}
	if o, held, err := stillRejected(ctx, p, d, v1alpha1.ReasonDeleting); held {
		return o, ctrl.Result{}, err
	}
	key, err := r.creds.apiKey(ctx, d)
	if err != nil {
		return keyFailure(err)
	}
	d.Status.Attempts++
	resp, err := r.service.DeleteTestset(ctx, key, string(d.Spec.TestsetID))
	switch {
	case alreadyGone(err):
		return r.complete(&d.Status, d.Spec.TTLSecondsAfterFinished, ready(v1alpha1.ReasonAlreadyDeleted,
			"testset "+string(d.Spec.TestsetID)+" was already gone (404)"))
	case err != nil:
		return deletionFailure(err)
	case !resp.Success:
		return r.notSucceeded(&d.Status)
	}
	return r.complete(&d.Status, d.Spec.TTLSecondsAfterFinished,
		ready(v1alpha1.ReasonCompleted, "deleted testset "+string(d.Spec.TestsetID)))
}

// TestcaseDeletionReconciler deletes testcases in batches, recording progress
// after each batch so that a restart resumes at the next one.
type TestcaseDeletionReconciler struct {
	base
	batchSize int
}

// Reconcile runs one TestcaseDeletion until every batch is confirmed.
func (r *TestcaseDeletionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := &v1alpha1.TestcaseDeletion{}
	if live, err := r.getLive(ctx, req, d); !live {
		return ctrl.Result{}, err
	}
	p := r.newStatusPatcher(d)
	if o, held := holdIfPaused(d); held {
		return p.Finish(ctx, o, ctrl.Result{}, nil)
	}
	o, res, err := r.sync(ctx, d, p)
	return p.Finish(ctx, o, res, err)
}

// sync sends the remaining batches (in standalone mode, all ids as one).
// Each confirmed batch but the last is checkpointed through p; the last is
// recorded when Reconcile finishes. A
// batch the service answers 404 NOT_FOUND is already gone, and counts as
// deleted.
func (r *TestcaseDeletionReconciler) sync(ctx context.Context, d *v1alpha1.TestcaseDeletion,
	p *statusPatcher) (outcome, ctrl.Result, error) {
	if d.Status.Finished() {
		return r.expire(ctx, d, d.Spec.TTLSecondsAfterFinished, &d.Status.DeletionStatus)
	}
	if o, held, err := stillRejected(ctx, p, d, v1alpha1.ReasonDeleting); held {
		return o, ctrl.Result{}, err
	}
	key, err := r.creds.apiKey(ctx, d)
	if err != nil {
		return keyFailure(err)
	}
	ids := d.Spec.TestcaseIDs
	total := int32(len(ids))    //nolint:gosec // at most 10000, bounded by the CRD.
	batch := int32(r.batchSize) //nolint:gosec // flag-bounded batch size.
	if r.standalone {
		// Nothing to delete anywhere: one call, no progress to checkpoint.
		batch = total
	}
	var gone int32
	for d.Status.Deleted < total {
		if d.Status.Deleted > 0 {
			progress := progressing(v1alpha1.ReasonDeleting, fmt.Sprintf("deleted %d of %d testcases", d.Status.Deleted, total))
			if err := p.Checkpoint(ctx, progress); err != nil {
				return progressing(v1alpha1.ReasonDeleting, "recording progress"), ctrl.Result{}, err
			}
		}
		end := min(d.Status.Deleted+batch, total)
		d.Status.Attempts++
		resp, err := r.service.BulkDeleteTestcases(ctx, key, evalapi.IDStrings(ids[d.Status.Deleted:end]))
		switch {
		case alreadyGone(err):
			gone += end - d.Status.Deleted
		case err != nil:
			return deletionFailure(err)
		case !resp.Success:
			return r.notSucceeded(&d.Status.DeletionStatus)
		}
		d.Status.Deleted = end
	}
	return r.complete(&d.Status.DeletionStatus, d.Spec.TTLSecondsAfterFinished, bulkDone(total, gone))
}

// bulkDone is the outcome of a bulk deletion of total testcases, gone of
// which this reconcile found already gone.
func bulkDone(total, gone int32) outcome {
	switch gone {
	case 0:
		return ready(v1alpha1.ReasonCompleted, fmt.Sprintf("deleted %d testcases", total))
	case total:
		return ready(v1alpha1.ReasonAlreadyDeleted, fmt.Sprintf("the %d testcases were already gone (404)", total))
	}
	return ready(v1alpha1.ReasonCompleted, fmt.Sprintf("deleted %d testcases, %d of them already gone (404)", total, gone))
}

// expire garbage-collects a finished deletion once its TTL has passed. Until
// then it keeps the outcome the deletion finished with.
func (b *base) expire(ctx context.Context, obj client.Object, ttl *int32, st *v1alpha1.DeletionStatus) (outcome, ctrl.Result, error) {
	done, ok := readyOutcome(st.Conditions)
	if !ok {
		done = ready(v1alpha1.ReasonCompleted, "the deletion completed")
	}
	if ttl == nil {
		return done, ctrl.Result{}, nil
	}
	left := st.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(b.clock.Now())
	if left > 0 {
		return done, ctrl.Result{RequeueAfter: left}, nil
	}
	uid := obj.GetUID()
	if err := b.client.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return done, ctrl.Result{}, fmt.Errorf("deleting after ttlSecondsAfterFinished: %w", err)
	}
	return done, ctrl.Result{}, nil
}

// complete marks a deletion finished with outcome done; it is never sent again.
func (b *base) complete(st *v1alpha1.DeletionStatus, ttl *int32, done outcome) (outcome, ctrl.Result, error) {
	success := true
	now := metav1.NewTime(b.clock.Now())
	st.Success = &success
	st.CompletionTime = &now
	var res ctrl.Result
	if ttl != nil {
		res.RequeueAfter = time.Duration(*ttl) * time.Second
	}
	return done, res, nil
}

// notSucceeded handles an answer of {"success": false}: the service did not
// delete, so the call is retried with a backoff that grows with the attempts.
func (b *base) notSucceeded(st *v1alpha1.DeletionStatus) (outcome, ctrl.Result, error) {
	success := false
	st.Success = &success
	delay := min(b.backoff<<min(st.Attempts, 16), backoffMax)
	return progressing(v1alpha1.ReasonDeleting,
			fmt.Sprintf("the service answered success=false (attempt %d); retrying in %s", st.Attempts, delay)),
		ctrl.Result{RequeueAfter: delay}, nil
}
