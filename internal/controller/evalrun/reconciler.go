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

// Package evalrun reconciles EvaluationRuns: each one's run created once on
// its service (guarded against duplicates), followed until it completes,
// only human scores are missing (humanScoring Ignore) or it times out, and
// then judged from its records' scores, read page by page: the verdict,
// per-Metric counts and pass rates go to status, records and scores never.
// Every run ends by its timeout: one that still waits then (for its Testset
// and Metrics, its service, a person) ends Inconclusive, saying what for.
package evalrun

import (
	"cmp"
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=evaluationruns,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=evaluationruns/status,verbs=get;update;patch

// Reconciler follows each EvaluationRun to its verdict.
type Reconciler struct {
	kit.Base
}

// Polling of a run in progress: every quarter of the time it has run, from
// minPoll to maxPoll, so a short run is judged soon after it completes and
// a long one costs few calls.
const (
	minPoll = 2 * time.Second
	maxPoll = 30 * time.Second
)

// defaultTimeout is spec.timeout's default, for an object the API server
// did not default (a client that skipped the CRD's defaulting).
const defaultTimeout = 30 * time.Minute

// scope is one reconcile of one EvaluationRun.
type scope = kit.Scope[*v1alpha1.EvaluationRun, remote.RunClient]

// lifecycle is the EvaluationRun's part of kit.Lifecycle: its client and
// its steps. A run keeps no finalizer (nothing of it is deleted in the
// service), and its service's failures are among what its deadline waits
// for, so its steps read them (Scope.ConnErr).
func (r *Reconciler) lifecycle() *kit.Lifecycle[*v1alpha1.EvaluationRun, remote.RunClient] {
	return &kit.Lifecycle[*v1alpha1.EvaluationRun, remote.RunClient]{Base: r.Base,
		New:       func() *v1alpha1.EvaluationRun { return &v1alpha1.EvaluationRun{} },
		ClientFor: (*remote.Connection).Run,
		Steps:     r.steps,
	}
}

// steps takes the run a step towards its verdict, or, once judged,
// promotes its version if it asks to (in the reconcile that judged it, so
// the verdict and the promotion are written together) and holds it until
// its ttlSecondsAfterFinished.
func (r *Reconciler) steps(ctx context.Context, s *scope) (kit.Outcome, ctrl.Result, error) {
	e := s.Obj
	judgedNow := e.Status.Verdict == ""
	if judgedNow {
		o, res, err := r.step(ctx, s)
		if e.Status.Verdict == "" || err != nil {
			return o, res, err
		}
	}
	if after, err := r.promote(ctx, e); after > 0 || err != nil {
		return finished(e), ctrl.Result{RequeueAfter: after}, err
	}
	// A verdict is written before its TTL can delete the run.
	if !judgedNow {
		if gone, err := r.expired(ctx, e); gone || err != nil {
			s.Unsaid()
			return kit.Outcome{}, ctrl.Result{}, err
		}
	}
	return finished(e), ttlRequeue(e, r.Clock.Now()), nil
}

// step takes the run a step (advance) and holds it to its deadline: a run
// that waits (for its references, its service, its executor, a person) is
// read again at its deadline at the latest, a failed step near it is
// retried at the next poll rather than after a longer backoff, and a run
// that still waits at its deadline ends Inconclusive, with what it waited
// for as the reason.
func (r *Reconciler) step(ctx context.Context, s *scope) (kit.Outcome, ctrl.Result, error) {
	e := s.Obj
	o, res, err := r.advance(ctx, s)
	if e.Status.Verdict != "" {
		return o, res, err
	}
	now := r.Clock.Now()
	if left := deadlineOf(e).Sub(now); left > 0 {
		if after, ok := retryWithin(err, left, now.Sub(startOf(e))); ok {
			ctrl.LoggerFrom(ctx).Error(err, "Retrying before the run's deadline", "requeueAfter", after)
			o.Message = waitedFor(o, err)
			return o, ctrl.Result{RequeueAfter: after}, nil
		}
		if err == nil && (res.RequeueAfter == 0 || res.RequeueAfter > left) {
			res.RequeueAfter = left
		}
		return o, res, err
	}
	result := ended(e, waitedFor(o, err))
	record(e, result, metav1.NewTime(now))
	r.Recorder.Eventf(e, nil, corev1.EventTypeWarning, result.Verdict, "Judge", "%s", result.Reason)
	return finished(e), ttlRequeue(e, now), nil
}

// advance creates the run, starts its executor, follows it, or judges it,
// whichever is due. A run whose executor failed is judged at once: no more
// records will come.
func (r *Reconciler) advance(ctx context.Context, s *scope) (kit.Outcome, ctrl.Result, error) {
	e := s.Obj
	if s.ConnErr != nil {
		return kit.ConnectFailure(s.ConnErr)
	}
	id := e.RecordedID()
	if id == "" {
		return r.create(ctx, s)
	}
	if o, adopted := adoption(s, id); adopted {
		return o, ctrl.Result{}, nil
	}
	// Once the run exists its references never hold it up: a lost one is
	// only named, so resolve gives no outcome to wait with.
	refs, _, err := r.resolve(ctx, e, true)
	if err != nil {
		return outcomeOrReadingRefs(nil), ctrl.Result{}, err
	}
	run, o, err := r.read(ctx, s, id, refs)
	if o != nil || err != nil {
		return outcomeOrReadingRefs(o), ctrl.Result{}, err
	}
	observe(e, run)
	unfinished := ""
	if e.Spec.Executor != nil {
		failed, o, err := r.startExecutor(ctx, s, run)
		if o != nil || err != nil {
			return outcomeOrReadingRefs(o), ctrl.Result{}, err
		}
		unfinished = failed
	}
	elapsed := r.Clock.Since(startOf(e))
	if elapsed >= timeoutOf(e) {
		unfinished = "the run did not finish in time"
	}
	unfinished = cmp.Or(unfinished, judgeBudgetSpent(e))
	humanOnlyDone := run.HumanOnly() && e.Spec.HumanScoring != v1alpha1.HumanScoringWait
	switch {
	case run.Completed():
		unfinished = ""
	case !humanOnlyDone && unfinished == "":
		return kit.Progressing(v1alpha1.ReasonRunning, progress(run, refs.missing)),
			ctrl.Result{RequeueAfter: min(timeoutOf(e)-elapsed, pollAfter(elapsed))}, nil
	}
	return r.judge(ctx, s, run, refs, unfinished)
}

// read reads run id: from the service, or, where the cluster keeps the
// run, from e's status, where the REST server counts what is written to it
// for the Metrics of refs.
func (r *Reconciler) read(ctx context.Context, s *scope, id string,
	refs refs) (remote.Run, *kit.Outcome, error) {
	run, err := s.Client.Get(ctx, refs.testcases, refs.metrics)
	if err != nil {
		o, _, err := kit.UpstreamFailure(err)
		o.Message = "reading run " + id + ": " + o.Message
		return remote.Run{}, &o, err
	}
	return run, nil, nil
}

// create sends the run's one create, once its Testset and Metrics are Ready,
// guarded as a Metric's is: the create-pending annotation first, the run-id
// annotation right after. A create whose answer was lost is never sent
// again: the run may exist, and a run has no name to find it by.
func (r *Reconciler) create(ctx context.Context, s *scope) (
	kit.Outcome, ctrl.Result, error) {
	e := s.Obj
	if e.CreatePending() {
		return kit.Stalled(v1alpha1.ReasonCreateOutcomeUnknown, fmt.Sprintf(
			"a create was sent and its answer lost, so the run may exist in the service; a run is never created "+
				"twice: set annotation %s to its id, or remove annotation %s to create a new run",
			v1alpha1.RunIDAnnotation, v1alpha1.CreatePendingAnnotation)), ctrl.Result{}, nil
	}
	refs, o, err := r.prepare(ctx, s)
	if o != nil || err != nil {
		return outcomeOrReadingRefs(o), ctrl.Result{}, err
	}
	if !r.Clock.Now().Before(deadlineOf(e)) {
		// Too late for a run to be judged in time: step ends the run.
		return kit.Progressing(v1alpha1.ReasonReferencesNotReady,
			"its Testset and Metrics were Ready only after the timeout"), ctrl.Result{}, nil
	}
	guarded := false
	guard := func(ctx context.Context) error {
		guarded = true
		return kit.MarkPending(ctx, r.Client, r.Clock, e, s.Conn.Endpoint, false)
	}
	run, err := s.Client.Create(context.WithoutCancel(ctx), refs.request(e), guard)
	switch {
	case err != nil && !guarded:
		return kit.UpstreamFailure(err)
	case guarded && !e.CreatePending():
		// The guard's write failed: nothing was sent. (A create that cannot
		// leave a duplicate needs no guard.)
		return kit.Progressing(v1alpha1.ReasonCreating, "recording the pending create"), ctrl.Result{}, err
	case err != nil && remote.FailureOf(err) == remote.OutcomeUnknown:
		return kit.Stalled(v1alpha1.ReasonCreateOutcomeUnknown, "the create was sent but no answer came back, so the "+
			"run may exist in the service: "+err.Error()), ctrl.Result{}, nil
	case err != nil:
		if cerr := kit.PatchAnnotations(ctx, r.Client, e, map[string]any{
			v1alpha1.CreatePendingAnnotation: nil, v1alpha1.ServiceAnnotation: nil}); cerr != nil {
			return kit.Progressing(v1alpha1.ReasonCreating, "clearing the pending create"), ctrl.Result{}, cerr
		}
		return kit.UpstreamFailure(err)
	}
	return r.created(ctx, s, run, refs)
}

// created records the id of the run just created and starts its executor.
func (r *Reconciler) created(ctx context.Context, s *scope, run remote.Run, refs refs) (
	kit.Outcome, ctrl.Result, error) {
	e := s.Obj
	ctrl.LoggerFrom(ctx).Info("Created remote run", "id", run.ID, "service", s.Conn.Service)
	now := metav1.NewTime(r.Clock.Now())
	e.Status.RunID, e.Status.StartTime = run.ID, &now
	if err := kit.PatchAnnotations(ctx, r.Client, e, map[string]any{
		v1alpha1.RunIDAnnotation: run.ID, v1alpha1.CreatePendingAnnotation: nil}); err != nil {
		return kit.Progressing(v1alpha1.ReasonCreating, "recording the run's id"), ctrl.Result{}, err
	}
	r.Recorder.Eventf(e, nil, corev1.EventTypeNormal, v1alpha1.ReasonCreating, "Create", "created run %s", run.ID)
	observe(e, run)
	e.Status.SystemVersionID, e.Status.SystemID = refs.systemVersionID, refs.systemID
	if e.Spec.Executor != nil {
		if _, o, err := r.startExecutor(ctx, s, run); o != nil || err != nil {
			return outcomeOrReadingRefs(o), ctrl.Result{}, err
		}
	}
	return kit.Progressing(v1alpha1.ReasonRunning, progress(run, nil)), ctrl.Result{RequeueAfter: minPoll}, nil
}

// prepare resolves the run's references, checks its executor and that its
// namespace holds the remote ids it names (owned): what must hold before the
// run is created.
func (r *Reconciler) prepare(ctx context.Context, s *scope) (
	refs, *kit.Outcome, error) {
	e := s.Obj
	if why := s.Client.Unsupported(); why != "" {
		o := kit.Stalled(v1alpha1.ReasonStandaloneUnsupported, why)
		return refs{}, &o, nil
	}
	refs, o, err := r.resolve(ctx, e, false)
	if o != nil || err != nil {
		return refs, o, err
	}
	if why := s.Client.RefusedVersion(refs.systemVersionID); why != "" {
		o := kit.Stalled(v1alpha1.ReasonInvalidSystemVersionID, why)
		return refs, &o, nil
	}
	if e.Spec.Executor != nil {
		if o, err := r.checkExecutor(ctx, s, refs.testsetID); o != nil || err != nil {
			return refs, o, err
		}
	}
	o, err = r.owned(ctx, s, refs.projects)
	return refs, o, err
}

// judge reads the run's scores page by page and records the verdict. A
// Testset or Metric the run lost since it was created makes the verdict at
// best Inconclusive, naming it; a lost Metric's scores are not judged.
func (r *Reconciler) judge(ctx context.Context, s *scope, run remote.Run,
	refs refs, unfinished string) (kit.Outcome, ctrl.Result, error) {
	e := s.Obj
	// A run whose id a person recorded was never checked at its create.
	if o, err := r.owned(ctx, s, refs.projects); o != nil || err != nil {
		return outcomeOrReadingRefs(o), ctrl.Result{}, err
	}
	metrics, err := refs.judged(ctx, s.Client, e, run)
	if err != nil {
		o, res, err := kit.UpstreamFailure(err)
		o.Message = "reading the run's Metrics: " + o.Message
		return o, res, err
	}
	c, why := criteriaOf(e), ""
	if e.Spec.PassCriteria.Baseline != nil {
		// First, so that a run waiting for its baseline reads no scores.
		var o *kit.Outcome
		c.Baseline, why, o, err = r.baseline(ctx, s, run, metrics)
		switch {
		case err != nil:
			return kit.Progressing(v1alpha1.ReasonRunning, "reading the baseline run"), ctrl.Result{}, err
		case o != nil:
			return *o, ctrl.Result{RequeueAfter: pollAfter(r.Clock.Since(startOf(e)))}, nil
		}
	}
	tally, err := s.Client.Tally(ctx, run, metrics)
	if err != nil {
		o, res, err := kit.UpstreamFailure(err)
		o.Message = "reading the scores of run " + run.ID + ": " + o.Message
		return o, res, err
	}
	expected := run.Records
	if run.Expected != nil {
		expected = *run.Expected
	}
	result := tally.Result(expected, unfinishedBy(refs.missing, unfinished), c)
	if why != "" {
		result.Verdict, result.Reason = verdict.Inconclusive, why
	}
	result.Reason += scoredBy(e)
	record(e, result, metav1.NewTime(r.Clock.Now()))
	eventType := corev1.EventTypeNormal
	if result.Verdict != verdict.Passed {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(e, nil, eventType, result.Verdict, "Judge", "run %s: %s, %s", run.ID, result.Verdict, result.Reason)
	return finished(e), ttlRequeue(e, r.Clock.Now()), nil
}

// finished is the Ready outcome of a judged run, whatever its verdict.
func finished(e *v1alpha1.EvaluationRun) kit.Outcome {
	msg := string(e.Status.Verdict)
	if c := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionPassed); c != nil {
		msg += ": " + c.Message
	}
	return kit.Ready(v1alpha1.ReasonCompleted, msg)
}

// outcomeOrReadingRefs is *o, or, where the step decided none (it failed
// before), Progressing while the run's Testset and Metrics are read.
func outcomeOrReadingRefs(o *kit.Outcome) kit.Outcome {
	if o == nil {
		return kit.Progressing(v1alpha1.ReasonReferencesNotReady, "reading the run's Testset and Metrics")
	}
	return *o
}

// ttlRequeue comes back when a judged run's ttlSecondsAfterFinished is due.
func ttlRequeue(e *v1alpha1.EvaluationRun, now time.Time) ctrl.Result {
	ttl := e.Spec.TTLSecondsAfterFinished
	if ttl == nil || e.Status.CompletionTime == nil {
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: max(time.Second, e.Status.CompletionTime.Add(time.Duration(*ttl)*time.Second).Sub(now))}
}

// expired deletes a judged run whose TTL has passed; it reports whether it did.
func (r *Reconciler) expired(ctx context.Context, e *v1alpha1.EvaluationRun) (bool, error) {
	ttl := e.Spec.TTLSecondsAfterFinished
	if ttl == nil || e.Status.CompletionTime == nil ||
		r.Clock.Now().Before(e.Status.CompletionTime.Add(time.Duration(*ttl)*time.Second)) {
		return false, nil
	}
	uid := e.UID
	if err := r.Client.Delete(ctx, e, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("deleting after ttlSecondsAfterFinished: %w", err)
	}
	return true, nil
}
