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

package oneshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=testsetdeletions;testcasedeletions,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=testsetdeletions/status;testcasedeletions/status,verbs=get;update;patch

// object is a kind the deletion reconciler runs: a one-shot
// deletion in the service, finished once, then kept for its TTL.
type object interface {
	v1alpha1.Object
	GetDeletionStatus() *v1alpha1.DeletionStatus
	GetTTLSecondsAfterFinished() *int32
}

// reconciler runs one deletion kind until the service confirms it.
type reconciler[T object] struct {
	kit.Base
	newObject func() T
	// send sends what is left of d's deletion with c. It records each call
	// sent in d's attempts, and may checkpoint progress through p.
	send func(ctx context.Context, conn *remote.Connection, c remote.DeletionCalls, d T, p *kit.StatusPatcher) (
		kit.Outcome, ctrl.Result, error)
}

// Reconcile runs one deletion until the service confirms it.
func (r *reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := r.newObject()
	if live, err := r.GetLive(ctx, req, d); !live {
		return ctrl.Result{}, err
	}
	p := r.NewStatusPatcher(d)
	if o, held := kit.HoldIfPaused(d); held {
		return p.Finish(ctx, o, ctrl.Result{}, nil)
	}
	o, res, err := r.sync(ctx, d, p)
	return p.Finish(ctx, o, res, err)
}

func (r *reconciler[T]) sync(ctx context.Context, d T, p *kit.StatusPatcher) (kit.Outcome, ctrl.Result, error) {
	if st := d.GetDeletionStatus(); st.Finished() {
		return r.expire(ctx, d, d.GetTTLSecondsAfterFinished(), st)
	}
	if o, held, err := kit.StillRejected(ctx, p, d, v1alpha1.ReasonDeleting); held {
		return o, ctrl.Result{}, err
	}
	conn, err := r.Connector.Connect(ctx, d)
	p.Resolved(conn.Service)
	if err != nil {
		return kit.ConnectFailure(err)
	}
	return r.send(ctx, conn, conn.Deletion(), d, p)
}

// done completes d's deletion with outcome o; it is never sent again.
func (r *reconciler[T]) done(d T, o kit.Outcome) (kit.Outcome, ctrl.Result, error) {
	return r.complete(d.GetDeletionStatus(), d.GetTTLSecondsAfterFinished(), o)
}

// newTestsetDeletionReconciler deletes one testset per TestsetDeletion.
func newTestsetDeletionReconciler(b kit.Base) *reconciler[*v1alpha1.TestsetDeletion] {
	r := &reconciler[*v1alpha1.TestsetDeletion]{Base: b,
		newObject: func() *v1alpha1.TestsetDeletion { return &v1alpha1.TestsetDeletion{} }}
	r.send = func(ctx context.Context, _ *remote.Connection, c remote.DeletionCalls, d *v1alpha1.TestsetDeletion,
		_ *kit.StatusPatcher) (kit.Outcome, ctrl.Result, error) {
		done, err := c.DeleteTestset(ctx, d.Spec.TestsetID)
		countAttempt(&d.Status, err)
		switch {
		case alreadyGone(err):
			return r.done(d, kit.Ready(v1alpha1.ReasonAlreadyDeleted, "testset "+string(d.Spec.TestsetID)+" was already gone (404)"))
		case err != nil:
			return deletionFailure(err)
		case done == remote.NotDeleted:
			return r.notSucceeded(&d.Status)
		case done == remote.NothingHeld:
			return r.done(d, nothingHeld("testset "+string(d.Spec.TestsetID)))
		}
		ctrl.LoggerFrom(ctx).Info("Deleted testset", "id", d.Spec.TestsetID)
		return r.done(d, kit.Ready(v1alpha1.ReasonCompleted, "deleted testset "+string(d.Spec.TestsetID)))
	}
	return r
}

// bulkCheckpointEvery is how often a running bulk deletion records its
// progress. Every status write stores the whole object in etcd again, up to
// 1.3 MiB for 10,000 ids, and etcd keeps each copy until the API server
// compacts its history (every five minutes): written after every batch, a
// few deletions at the service's pace would fill etcd's quota within
// minutes. What a crash loses is at most this much progress; those batches
// are sent again, which deletes nothing twice (a 404 counts as deleted).
const bulkCheckpointEvery = 10 * time.Second

// newTestcaseDeletionReconciler deletes testcases in batches of the
// service's size, recording progress every bulkCheckpointEvery and whenever
// it stops (an error, its turn at the service's limits, a shutdown) so that
// a restart resumes at the next batch. A batch the service answers 404
// NOT_FOUND is already gone, and counts as deleted.
func newTestcaseDeletionReconciler(b kit.Base) *reconciler[*v1alpha1.TestcaseDeletion] {
	r := &reconciler[*v1alpha1.TestcaseDeletion]{Base: b,
		newObject: func() *v1alpha1.TestcaseDeletion { return &v1alpha1.TestcaseDeletion{} }}
	r.send = func(ctx context.Context, conn *remote.Connection, c remote.DeletionCalls, d *v1alpha1.TestcaseDeletion,
		p *kit.StatusPatcher) (kit.Outcome, ctrl.Result, error) {
		ids := d.Spec.TestcaseIDs
		total := int32(len(ids)) //nolint:gosec // at most 10000, bounded by the CRD.
		batch := total
		if n := conn.BulkDeleteBatch; n > 0 && n < len(ids) {
			batch = int32(n) //nolint:gosec // below len(ids)
		}
		progress := func() kit.Outcome {
			return kit.Progressing(v1alpha1.ReasonDeleting, fmt.Sprintf("deleted %d of %d testcases", d.Status.Deleted, total))
		}
		var gone int32
		held := true
		recorded, at := d.Status.Deleted, r.Clock.Now()
		for d.Status.Deleted < total {
			if d.Status.Deleted > recorded && r.Clock.Since(at) >= bulkCheckpointEvery {
				if err := p.Checkpoint(ctx, progress()); err != nil {
					return kit.Progressing(v1alpha1.ReasonDeleting, "recording progress"), ctrl.Result{}, err
				}
				recorded, at = d.Status.Deleted, r.Clock.Now()
			}
			end := min(d.Status.Deleted+batch, total)
			done, err := c.DeleteTestcases(ctx, ids[d.Status.Deleted:end])
			countAttempt(&d.Status.DeletionStatus, err)
			switch {
			case alreadyGone(err):
				gone += end - d.Status.Deleted
			case err != nil:
				if d.Status.Deleted > recorded {
					keepProgress(ctx, p, progress(), err)
				}
				return deletionFailure(err)
			case done == remote.NotDeleted:
				return r.notSucceeded(&d.Status.DeletionStatus)
			case done == remote.NothingHeld:
				held = false
			}
			d.Status.Deleted = end
		}
		if !held {
			return r.done(d, nothingHeld(fmt.Sprintf("the %d testcases", total)))
		}
		ctrl.LoggerFrom(ctx).Info("Deleted testcases", "count", total, "alreadyGone", gone)
		return r.done(d, bulkDone(total, gone))
	}
	return r
}

// keepProgress records progress o when a reconcile stops on err before
// Finish can: a turn at the service's limits writes nothing, and a shutdown
// has cancelled ctx. Any other error is written by Finish with the progress.
func keepProgress(ctx context.Context, p *kit.StatusPatcher, o kit.Outcome, err error) {
	if _, throttled := remote.ThrottledFor(err); !throttled && ctx.Err() == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), progressWriteTimeout)
	defer cancel()
	if werr := p.Checkpoint(ctx, o); werr != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Progress not recorded; the batches since are sent again", "error", werr.Error())
	}
}

// progressWriteTimeout bounds the write of a deletion's progress during a
// shutdown, well within the manager's graceful shutdown.
const progressWriteTimeout = 5 * time.Second

// countAttempt counts a call that was sent, whatever its answer; a call
// refused for want of a usable key, or held back for its turn at the
// service's limits, sent nothing.
func countAttempt(st *v1alpha1.DeletionStatus, err error) {
	_, keyless := errors.AsType[*remote.KeyError](err)
	_, throttled := remote.ThrottledFor(err)
	if !keyless && !throttled {
		st.Attempts++
	}
}

// nothingHeld completes a deletion of what on a standalone service,
// where the cluster is the system of record and nothing is held remotely.
func nothingHeld(what string) kit.Outcome {
	return kit.Ready(v1alpha1.ReasonCompleted, "standalone: no service holds "+what+", so there was nothing to delete")
}

// bulkDone is the outcome of a bulk deletion of total testcases, gone of
// which this reconcile found already gone.
func bulkDone(total, gone int32) kit.Outcome {
	switch gone {
	case 0:
		return kit.Ready(v1alpha1.ReasonCompleted, fmt.Sprintf("deleted %d testcases", total))
	case total:
		return kit.Ready(v1alpha1.ReasonAlreadyDeleted, fmt.Sprintf("the %d testcases were already gone (404)", total))
	}
	return kit.Ready(v1alpha1.ReasonCompleted, fmt.Sprintf("deleted %d testcases, %d of them already gone (404)", total, gone))
}

// expire garbage-collects a finished deletion once its TTL has passed. Until
// then it keeps the outcome the deletion finished with.
func (b *reconciler[T]) expire(ctx context.Context, obj client.Object, ttl *int32, st *v1alpha1.DeletionStatus) (kit.Outcome, ctrl.Result, error) {
	done, ok := kit.ReadyOutcome(st.Conditions)
	if !ok {
		done = kit.Ready(v1alpha1.ReasonCompleted, "the deletion completed")
	}
	if ttl == nil {
		return done, ctrl.Result{}, nil
	}
	left := st.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(b.Clock.Now())
	if left > 0 {
		return done, ctrl.Result{RequeueAfter: left}, nil
	}
	uid := obj.GetUID()
	if err := b.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return done, ctrl.Result{}, fmt.Errorf("deleting after ttlSecondsAfterFinished: %w", err)
	}
	return done, ctrl.Result{}, nil
}

// complete marks a deletion finished with outcome done; it is never sent again.
func (b *reconciler[T]) complete(st *v1alpha1.DeletionStatus, ttl *int32, done kit.Outcome) (kit.Outcome, ctrl.Result, error) {
	success := true
	now := metav1.NewTime(b.Clock.Now())
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
func (b *reconciler[T]) notSucceeded(st *v1alpha1.DeletionStatus) (kit.Outcome, ctrl.Result, error) {
	success := false
	st.Success = &success
	delay := min(b.Backoff<<min(st.Attempts, 16), kit.BackoffMax)
	return kit.Progressing(v1alpha1.ReasonDeleting,
			fmt.Sprintf("the service answered success=false (attempt %d); retrying in %s", st.Attempts, delay)),
		ctrl.Result{RequeueAfter: delay}, nil
}
