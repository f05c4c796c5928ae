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

// Package scoring judges the records of standalone runs with their
// service's judge: a record kept for the judge (remote.JudgeRecord) is
// scored once per AI Metric of its run, on workers of its connection and
// namespace, each score counted in the run's status, and the record
// deleted once every AI Metric has its score. The work survives a restart
// (the records are objects) and is never counted twice (the run's
// scored-records bits, written with optimistic concurrency).
package scoring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/judge"
	"github.com/eval-operator/eval-operator/internal/quote"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=evaluationruns/status,verbs=get;update

// revisit is how often a record with judge work queued or in flight is
// looked at again: a safety net, should a task end without deleting it.
const revisit = time.Minute

// maxModels is how many models status.judge.models names at most.
const maxModels = 4

// queueDepth bounds the tasks queued per connection and namespace.
const queueDepth = 1024

// Reconciler judges the records kept for a judge.
type Reconciler struct {
	// Client writes runs' status and deletes judged records; Reader reads
	// what the cache holds trimmed or not at all (a record's data, a
	// Metric's prompt, a run's latest counts).
	Client    client.Client
	Reader    client.Reader
	Connector *remote.Connector

	queues *judge.Queues
	// ctx ends when the manager stops: the work outlives a reconcile.
	ctx    context.Context
	cancel context.CancelFunc
	// inFlight holds "<record uid>/<metric id>" of the tasks queued or running.
	inFlight sync.Map
	// budgets holds each run's requests spent, by run uid.
	budgets sync.Map
	// writers holds each run's status writer while it writes, by run uid.
	writers sync.Map
}

// Setup registers the scoring controller with mgr.
func Setup(mgr ctrl.Manager, c client.Client, reader client.Reader, connector *remote.Connector, workers int) error {
	r := &Reconciler{Client: c, Reader: reader, Connector: connector, queues: judge.NewQueues(queueDepth)}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if err := mgr.Add(r); err != nil {
		return err
	}
	records, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: remote.JudgeRecordLabel, Operator: metav1.LabelSelectorOpExists}}})
	if err != nil {
		return err
	}
	// Metadata only, as the Testsets' ConfigMap watch: a record's data is
	// read when it is judged, never cached.
	return ctrl.NewControllerManagedBy(mgr).Named("judge").
		WatchesMetadata(&corev1.ConfigMap{}, &handler.EnqueueRequestForObject{},
			builder.WithPredicates(records, predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Start ends the judge's work when the manager stops.
func (r *Reconciler) Start(ctx context.Context) error {
	<-ctx.Done()
	r.cancel()
	return nil
}

// Reconcile queues the judge work a record still needs, or deletes it once
// it needs none.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Reader.Get(ctx, req.NamespacedName, cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	runName, index, rec, ok := remote.RecordOf(cm)
	if !ok {
		return ctrl.Result{}, nil
	}
	run := &v1alpha1.EvaluationRun{}
	err := r.Reader.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: runName}, run)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && !ownedBy(cm, run)):
		return ctrl.Result{}, r.done(ctx, cm)
	case err != nil:
		return ctrl.Result{}, err
	case run.Status.Verdict != "" || (run.Status.Judge != nil && run.Status.Judge.BudgetSpent):
		// Judged, or nothing more may be spent on it: what is left
		// stays unscored and the verdict says so.
		r.budgets.Delete(run.UID)
		return ctrl.Result{}, r.done(ctx, cm)
	}
	conn, err := r.Connector.Connect(ctx, run)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("resolving the run's service: %w", err)
	}
	metrics, err := r.aiMetrics(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	pending := slices.DeleteFunc(metrics, func(m *v1alpha1.Metric) bool { return remote.Scored(run, m.RecordedID(), index) })
	if len(pending) == 0 {
		return ctrl.Result{}, r.done(ctx, cm)
	}
	for _, m := range pending {
		if !r.queue(conn.Judge, cm, run, index, rec, m) {
			return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
		}
	}
	return ctrl.Result{RequeueAfter: revisit}, nil
}

// ownedBy reports whether cm is a record of this run, not of an earlier
// one of the same name.
func ownedBy(cm *corev1.ConfigMap, run *v1alpha1.EvaluationRun) bool {
	return slices.ContainsFunc(cm.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == run.UID })
}

// aiMetrics are run's AI Metrics, read whole (the cache trims prompts).
func (r *Reconciler) aiMetrics(ctx context.Context, run *v1alpha1.EvaluationRun) ([]*v1alpha1.Metric, error) {
	var out []*v1alpha1.Metric
	for _, ref := range run.Spec.MetricRefs {
		m := &v1alpha1.Metric{}
		err := r.Reader.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: ref.Name}, m)
		switch {
		case apierrors.IsNotFound(err):
			continue // the run's verdict names a lost Metric
		case err != nil:
			return nil, fmt.Errorf("reading Metric %s: %w", ref.Name, err)
		}
		if m.Spec.EvalType == v1alpha1.EvalTypeAI && m.RecordedID() != "" {
			out = append(out, m)
		}
	}
	return out, nil
}

// queue queues the judging of record index of run for m, unless it is
// queued already; false when the queue is full.
func (r *Reconciler) queue(j *remote.Judge, cm *corev1.ConfigMap, run *v1alpha1.EvaluationRun, index int,
	rec judge.Record, m *v1alpha1.Metric) bool {
	key := string(cm.UID) + "/" + m.RecordedID()
	if _, busy := r.inFlight.LoadOrStore(key, true); busy {
		return true
	}
	task := func() {
		defer r.inFlight.Delete(key)
		r.score(r.ctx, j, cm, run, index, rec, m)
	}
	if j == nil {
		// The service names no judge (any more): the record is done
		// without a score, so the run does not wait for its timeout.
		go task()
		return true
	}
	if !r.queues.Submit(j.Service+"/"+run.Namespace, j.MaxInFlight(), task) {
		r.inFlight.Delete(key)
		return false
	}
	return true
}

// score judges record index for m and counts the outcome in the run's
// status; the record is deleted once its last AI Metric is counted.
func (r *Reconciler) score(ctx context.Context, j *remote.Judge, cm *corev1.ConfigMap, run *v1alpha1.EvaluationRun,
	index int, rec judge.Record, m *v1alpha1.Metric) {
	log := ctrl.LoggerFrom(ctx).WithValues("run", types.NamespacedName{Namespace: run.Namespace, Name: run.Name},
		"record", index, "metric", m.Name)
	out, pair, err := r.judged(ctx, j, run, rec, m)
	if err != nil && !errors.Is(err, judge.ErrBudget) {
		// Not the judge's answer (its key unreadable, the manager
		// stopping): the record waits, and is revisited.
		log.Error(err, "Judging a record")
	}
	fresh, uerr := r.count(ctx, run, counting(j, m, index, out, pair, err))
	if uerr != nil {
		log.Error(uerr, "Counting a judge's score")
		return
	}
	switch {
	case errors.Is(err, judge.ErrBudget):
		// Nothing more is spent on the run: the record stays unscored.
		if err := r.done(ctx, cm); err != nil {
			log.Error(err, "Deleting a record out of budget")
		}
	case fresh != nil && err == nil:
		r.deleteIfDone(ctx, cm, fresh, index)
	}
}

// judged is the outcome of judging rec for m, and the model that judged as
// evalModelName=model; without a judge, or a model for m, it is no score
// with the reason.
func (r *Reconciler) judged(ctx context.Context, j *remote.Judge, run *v1alpha1.EvaluationRun, rec judge.Record,
	m *v1alpha1.Metric) (judge.Outcome, string, error) {
	if j == nil {
		return judge.Outcome{Unscored: "the run's service names no judge"}, "", nil
	}
	name, model := j.Model(m)
	if model == "" {
		return judge.Outcome{Unscored: fmt.Sprintf("the judge has no model for evalModelName %s: add it to the "+
			"service's judge.models or set judge.defaultModel", quote.Prefix(name))}, "", nil
	}
	out, err := j.Judge(ctx, j.Request(m, model, rec), r.take(j, run))
	return out, name + "=" + model, err
}

// counting is the status change that counts out, the outcome of judging
// record index for m (err when there is none): what it spent, a spent
// budget, why it has no score, the model that scored, and the score once.
func counting(j *remote.Judge, m *v1alpha1.Metric, index int, out judge.Outcome, pair string, err error) func(
	*v1alpha1.EvaluationRun) error {
	var pass *bool
	if err == nil && out.Score != nil {
		raw, _ := json.Marshal(out.Score)
		p, _ := verdict.Passes(remote.JudgingOf(m), raw)
		pass = &p
	}
	why := out.Unscored
	if err != nil && !errors.Is(err, judge.ErrBudget) {
		why = err.Error()
	}
	return func(e *v1alpha1.EvaluationRun) error {
		js := judgeStatus(e, j)
		js.Requests += int32(out.Requests) //nolint:gosec // a run's requests are bounded by its budget
		js.Tokens += int64(out.Tokens)
		js.BudgetSpent = js.BudgetSpent || errors.Is(err, judge.ErrBudget)
		if why != "" {
			js.LastError = quote.Cut(why, 512)
		}
		if err != nil {
			return nil
		}
		if pass != nil && !slices.Contains(js.Models, pair) && len(js.Models) < maxModels {
			js.Models = append(js.Models, pair)
		}
		if err := remote.CountScore(e, m.RecordedID(), m.Name, index, pass); err != nil && !errors.Is(err, remote.ErrScored) {
			return err
		}
		return nil
	}
}

// take is the budget check before each judge request of run: the requests
// its status counts plus those spent since, at most the judge's budget.
func (r *Reconciler) take(j *remote.Judge, run *v1alpha1.EvaluationRun) func() error {
	spent := int64(0)
	if run.Status.Judge != nil {
		spent = int64(run.Status.Judge.Requests)
	}
	v, _ := r.budgets.LoadOrStore(run.UID, &budget{spent: spent})
	b := v.(*budget)
	return func() error {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.spent >= int64(j.MaxRequestsPerRun) {
			return judge.ErrBudget
		}
		b.spent++
		return nil
	}
}

// budget is a run's requests spent, as this manager knows them.
type budget struct {
	mu    sync.Mutex
	spent int64
}

// judgeStatus is e's judge status, made when missing, naming j.
func judgeStatus(e *v1alpha1.EvaluationRun, j *remote.Judge) *v1alpha1.JudgeStatus {
	if e.Status.Judge == nil {
		e.Status.Judge = &v1alpha1.JudgeStatus{}
	}
	if j != nil {
		e.Status.Judge.Service, e.Status.Judge.Endpoint = j.Service, j.Endpoint
	}
	return e.Status.Judge
}

// count applies change to run's status, in one write with the changes
// other workers bring meanwhile: the run's scores are counted in a few
// writes rather than one each, which would conflict with each other.
func (r *Reconciler) count(ctx context.Context, run *v1alpha1.EvaluationRun,
	change func(*v1alpha1.EvaluationRun) error) (*v1alpha1.EvaluationRun, error) {
	v, _ := r.writers.LoadOrStore(run.UID, &writer{})
	w := v.(*writer)
	done := make(chan written, 1)
	w.mu.Lock()
	w.pending = append(w.pending, pendingChange{change: change, done: done})
	if !w.writing {
		w.writing = true
		for len(w.pending) > 0 {
			batch := w.pending
			w.pending = nil
			w.mu.Unlock()
			fresh, err := r.update(ctx, run, func(e *v1alpha1.EvaluationRun) error {
				for _, p := range batch {
					if err := p.change(e); err != nil {
						return err
					}
				}
				return nil
			})
			for _, p := range batch {
				p.done <- written{fresh, err}
			}
			w.mu.Lock()
		}
		w.writing = false
		r.writers.Delete(run.UID)
	}
	w.mu.Unlock()
	res := <-done
	return res.fresh, res.err
}

// writer gathers the status changes of one run while one is written.
type writer struct {
	mu      sync.Mutex
	writing bool
	pending []pendingChange
}

type pendingChange struct {
	change func(*v1alpha1.EvaluationRun) error
	done   chan written
}

type written struct {
	fresh *v1alpha1.EvaluationRun
	err   error
}

// update applies change to run's latest status and writes it, retrying
// conflicts (the REST server counts records in the same status); nil
// fresh when the run is gone or judged meanwhile.
func (r *Reconciler) update(ctx context.Context, run *v1alpha1.EvaluationRun,
	change func(*v1alpha1.EvaluationRun) error) (*v1alpha1.EvaluationRun, error) {
	var fresh *v1alpha1.EvaluationRun
	backoff := wait.Backoff{Steps: 30, Duration: 5 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: time.Second}
	err := retry.RetryOnConflict(backoff, func() error {
		fresh = &v1alpha1.EvaluationRun{}
		if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(run), fresh); err != nil {
			return err
		}
		if fresh.UID != run.UID || fresh.Status.Verdict != "" {
			fresh = nil
			return nil
		}
		if err := change(fresh); err != nil {
			return err
		}
		return r.Client.Status().Update(ctx, fresh)
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return fresh, err
}

// deleteIfDone deletes record index once run counts every AI Metric's score of it.
func (r *Reconciler) deleteIfDone(ctx context.Context, cm *corev1.ConfigMap, run *v1alpha1.EvaluationRun, index int) {
	metrics, err := r.aiMetrics(ctx, run)
	if err != nil || slices.ContainsFunc(metrics, func(m *v1alpha1.Metric) bool { return !remote.Scored(run, m.RecordedID(), index) }) {
		return
	}
	if err := r.done(ctx, cm); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Deleting a judged record", "record", client.ObjectKeyFromObject(cm))
	}
}

// done deletes a record that needs no more judging.
func (r *Reconciler) done(ctx context.Context, cm *corev1.ConfigMap) error {
	uid := cm.UID
	err := r.Client.Delete(ctx, cm, client.Preconditions{UID: &uid})
	if err = client.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("deleting judged record %s: %w", cm.Name, err)
	}
	return nil
}
