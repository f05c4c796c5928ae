//go:build bench

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

package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/test/framework"
)

// quietPeriod is how long a restarted manager is watched after its resync
// for late work (requeues, events).
const quietPeriod = 2 * time.Second

// syncRun measures n Metrics from create to Ready with concurrency c, the two
// floors with the same concurrency, and a restart over the Ready Metrics.
func (b *bench) syncRun(ctx context.Context, tab *table, n, c int) error {
	upstream, _, err := b.upstreamFloor(ctx, n, c)
	if err != nil {
		return fmt.Errorf("upstream floor: %w", err)
	}
	durableRun, err := b.apiServerFloor(ctx, n, c, durableWrites)
	if err != nil {
		return fmt.Errorf("durable floor: %w", err)
	}
	guardedRun, err := b.apiServerFloor(ctx, n, c, guardedWrites)
	if err != nil {
		return fmt.Errorf("guarded floor: %w", err)
	}
	requiredRun, err := b.apiServerFloor(ctx, n, c, requiredWrites)
	if err != nil {
		return fmt.Errorf("required floor: %w", err)
	}
	durable, guarded, required := durableRun.elapsed, guardedRun.elapsed, requiredRun.elapsed
	durableCPU, guardedCPU, requiredCPU := durableRun.cpu, guardedRun.cpu, requiredRun.cpu

	ns, err := b.newNamespace(ctx, "bench-sync")
	if err != nil {
		return err
	}
	workers := cmp.Or(*flagWorkers, c)
	svc, err := evalapi.NewClient(evalapi.Options{BaseURL: b.server.URL(), MaxInFlight: c})
	if err != nil {
		return err
	}
	run, err := b.runOperator(ctx, ns, svc, n, workers)
	if err != nil {
		return err
	}
	floor := max(guarded, upstream)
	api := run.api
	label := fmt.Sprintf("C=%d: ", c)
	if workers != c {
		label = fmt.Sprintf("C=%d, %d workers: ", c, workers)
	}
	tab.add(label+"operator, create to all Ready", rate(n, run.elapsed), "max(guarded, upstream) "+rate(n, floor), ratio(run.elapsed, floor))
	tab.add(label+"operator against the required floor (guarded + Secret read + event)", rate(n, run.elapsed),
		"max(required, upstream) "+rate(n, max(required, upstream)), ratio(run.elapsed, max(required, upstream)))
	tab.add(label+"operator against the durable floor", rate(n, run.elapsed), "durable "+rate(n, durable), ratio(run.elapsed, durable))
	tab.add(label+"durable floor: create + Ready status write, no manager", rate(n, durable), "", "")
	tab.add(label+"guarded floor: create + create-pending + id + status writes, no upstream", rate(n, guarded), "", "")
	tab.add(label+"upstream floor: direct POSTs", rate(n, upstream), "", "")
	tab.add(label+"CPU time per Metric: operator", run.cpu, "guarded floor: "+guardedCPU, "")
	tab.add(label+"CPU time per Metric: durable floor", durableCPU, "", "")
	tab.add(label+"CPU time per Metric: required floor", requiredCPU, "", "")
	tab.add(label+"required floor: the guarded floor's writes + the key Secret read + an event, no upstream", rate(n, required), "", "")
	tab.add(label+"upstream calls per Metric", perObject(int64(run.calls), n), "1 (exactly)", "")
	tab.add(label+"API writes per Metric (object + status + events)",
		fmt.Sprintf("%s (%s + %s + %s)", perObject(api.writes(), n), perObject(api.objectWrites.Load(), n),
			perObject(api.statusWrites.Load(), n), perObject(api.eventWrites.Load(), n)),
		"4 (the guarded floor: create, create-pending, id, status)", "")
	tab.add(label+"API single-object reads per Metric (uncached Secret)", perObject(api.reads.Load(), n), "", "")
	tab.add(label+"reconciles (errors) per Metric",
		fmt.Sprintf("%.2f (%.2f)", run.reconciles/float64(n), run.errors/float64(n)), "", "")

	if err := b.steadyState(ctx, tab, label, svc, n, c); err != nil {
		return err
	}
	if err := b.driftCheck(ctx, tab, label, ns, svc, n, c); err != nil {
		return err
	}
	return b.deleteMetrics(ctx, ns)
}

// operatorRun is what one run of the operator measured.
type operatorRun struct {
	// elapsed is the time from the first create until all are Ready.
	elapsed time.Duration
	// calls counts the upstream requests.
	calls int
	api   *apiCounter
	// reconciles and errors count the Metric controller's reconciles.
	reconciles, errors float64
	// cpu is the CPU time per Metric from the first create to all Ready.
	cpu string
}

// runOperator starts a manager with concurrency c, creates n Metrics in ns
// and measures them until all are Ready and the manager is idle.
func (b *bench) runOperator(ctx context.Context, ns string, svc evalapi.Service, n, c int) (run operatorRun, err error) {
	mgr, err := b.startManager(ctx, controller.Options{MaxConcurrentReconciles: c,
		Defaults: remote.Defaults{Service: svc}}, nil)
	if err != nil {
		return run, err
	}
	defer func() { err = errors.Join(err, mgr.stop()) }()
	run.api = mgr.api
	callsBefore := b.upstreamCalls()
	before, err := readReconcileStats()
	if err != nil {
		return run, err
	}
	cpuBefore, err := readCPU()
	if err != nil {
		return run, err
	}
	stopProfile, err := startProfile(fmt.Sprintf("operator-c%d", c))
	if err != nil {
		return run, err
	}
	run.elapsed, err = b.createAndWaitReady(ctx, mgr.mgr.GetCache(), ns, n, c)
	if err = errors.Join(err, stopProfile()); err != nil {
		return run, err
	}
	cpuAfter, err := readCPU()
	if err != nil {
		return run, err
	}
	run.cpu = cpuAfter.since(cpuBefore, n)
	after, err := waitIdle(ctx, readReconcileStats, before, n)
	run.calls = b.upstreamCalls() - callsBefore
	run.reconciles, run.errors = after.total-before.total, after.errors-before.errors
	return run, err
}

// upstreamFloor sends n creates straight to the test server with c workers,
// with the operator's own client, and returns their time and latencies.
func (b *bench) upstreamFloor(ctx context.Context, n, c int) (time.Duration, []time.Duration, error) {
	svc, err := evalapi.NewClient(evalapi.Options{BaseURL: b.server.URL()})
	if err != nil {
		return 0, nil, err
	}
	create := upstreamCreate(svc)
	return framework.Parallel(ctx, n, c, func(ctx context.Context, i int) error {
		return create(ctx, newMetric("floor", fmt.Sprintf("floor-%d", i), i))
	})
}

// upstreamCreate is the service's create of m, as the operator sends it.
func upstreamCreate(svc *evalapi.Client) upstreamCall {
	return func(ctx context.Context, m *v1alpha1.Metric) error {
		_, err := svc.CreateMetric(ctx, evalapitest.DefaultKey, string(m.Spec.ProjectID), convert.RequestFor(&m.Spec))
		return err
	}
}

// floorWrites are the writes a floor makes for one Metric, no manager
// running; m is created already.
type floorWrites func(ctx context.Context, c client.Client, m *v1alpha1.Metric, i int) error

// durableWrites writes m's Ready status: with the create, the least that
// makes a Metric `kubectl get` shows Ready (a create cannot carry status).
func durableWrites(ctx context.Context, c client.Client, m *v1alpha1.Metric, i int) error {
	base := m.DeepCopy()
	m.Status.ID = fmt.Sprintf("met_floor_%d", i)
	m.Status.ObservedGeneration = m.Generation
	m.Status.Conditions = []metav1.Condition{{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonCreated,
		Message: "created remote Metric " + m.Status.ID, ObservedGeneration: m.Generation, LastTransitionTime: metav1.Now(),
	}}
	return c.Status().Patch(ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// guardedWrites are the writes of the duplicate guard and the status: the
// create-pending mark (an update, as the operator's), the id annotation in
// its place (a merge patch), then the Ready status. The least any operator
// that never duplicates a remote Metric writes, without the upstream call.
func guardedWrites(ctx context.Context, c client.Client, m *v1alpha1.Metric, i int) error {
	return guardedWritesAround(nil)(ctx, c, m, i)
}

// upstreamCall is the service call a floor makes for m, between the
// create-pending mark and the id; nil makes none.
type upstreamCall func(ctx context.Context, m *v1alpha1.Metric) error

// guardedWritesAround are guardedWrites with call made where the operator
// sends the create: after the create-pending mark, before the id.
func guardedWritesAround(call upstreamCall) floorWrites {
	return func(ctx context.Context, c client.Client, m *v1alpha1.Metric, i int) error {
		m.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: time.Now().UTC().Format(time.RFC3339)}
		if err := c.Update(ctx, m); err != nil {
			return err
		}
		if call != nil {
			if err := call(ctx, m); err != nil {
				return err
			}
		}
		id := client.RawPatch(types.MergePatchType, fmt.Appendf(nil,
			`{"metadata":{"annotations":{%q:%q,%q:null}}}`, v1alpha1.MetricIDAnnotation, fmt.Sprintf("met_floor_%d", i),
			v1alpha1.CreatePendingAnnotation))
		if err := c.Patch(ctx, m, id); err != nil {
			return err
		}
		return durableWrites(ctx, c, m, i)
	}
}

// requiredWrites are the guarded floor's writes with what DESIGN.md adds to
// every create: the key read from its Secret at reconcile time (no cache of
// Secret data) and an event for the state change. The least this operator
// can do, without the upstream call.
func requiredWrites(ctx context.Context, c client.Client, m *v1alpha1.Metric, i int) error {
	return requiredWritesAround(nil)(ctx, c, m, i)
}

// requiredWritesAround are requiredWrites with call made where the operator
// sends the create. With the service's create, they are the least a
// remote-mode POST metric can do after its create.
func requiredWritesAround(call upstreamCall) floorWrites {
	return func(ctx context.Context, c client.Client, m *v1alpha1.Metric, i int) error {
		var secret corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: framework.KeySecretName}, &secret); err != nil {
			return err
		}
		if err := guardedWritesAround(call)(ctx, c, m, i); err != nil {
			return err
		}
		return createdEvent(ctx, c, m)
	}
}

// createdEvent records m's Created event, as the operator's recorder does.
func createdEvent(ctx context.Context, c client.Client, m *v1alpha1.Metric) error {
	return c.Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: fmt.Sprintf("%s.%x", m.Name, time.Now().UnixNano())},
		EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "bench", ReportingInstance: "bench",
		Action: "Reconcile", Reason: v1alpha1.ReasonCreated, Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Metric",
			Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion},
		Note: "created Metric " + m.Status.ID,
	})
}

// floorRun is one floor's run: its time, each Metric's time from its
// create to its last write, and the CPU time per Metric (a table cell).
type floorRun struct {
	elapsed   time.Duration
	latencies []time.Duration
	cpu       string
}

// apiServerFloor creates n Metrics and makes the writes of one floor to
// each, with c workers and no manager running.
func (b *bench) apiServerFloor(ctx context.Context, n, c int, writes floorWrites) (floorRun, error) {
	ns, err := b.newNamespace(ctx, "bench-floor")
	if err != nil {
		return floorRun{}, err
	}
	before, err := readCPU()
	if err != nil {
		return floorRun{}, err
	}
	elapsed, latencies, err := framework.Parallel(ctx, n, c, func(ctx context.Context, i int) error {
		m := newMetric(ns, fmt.Sprintf("m-%05d", i), i)
		if err := b.k8s.Create(ctx, m); err != nil {
			return err
		}
		return writes(ctx, b.k8s, m, i)
	})
	if err != nil {
		return floorRun{}, err
	}
	after, err := readCPU()
	if err != nil {
		return floorRun{}, err
	}
	// No manager may ever see these: they are Ready without a remote id.
	return floorRun{elapsed, latencies, after.since(before, n)}, b.deleteMetrics(ctx, ns)
}

// createAndWaitReady creates n Metrics in ns with c workers and returns the
// time from the first create until the manager's cache shows all Ready. It
// watches through that cache, whose informer the manager runs anyway: a
// watch of the benchmark's own would add to the API server's work what the
// floors do not pay.
func (b *bench) createAndWaitReady(ctx context.Context, cache ctrlcache.Cache, ns string, n, c int) (time.Duration, error) {
	ready, stop, err := readyInCache(ctx, cache, ns, n)
	if err != nil {
		return 0, err
	}
	defer stop()
	start := time.Now()
	if _, _, err := framework.Parallel(ctx, n, c, func(ctx context.Context, i int) error {
		return b.k8s.Create(ctx, newMetric(ns, fmt.Sprintf("m-%05d", i), i))
	}); err != nil {
		return 0, err
	}
	select {
	case err := <-ready:
		return time.Since(start), err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// readyInCache closes the returned channel once cache shows n Metrics of ns
// Ready; stop removes its event handler.
func readyInCache(ctx context.Context, cache ctrlcache.Cache, ns string, n int) (<-chan error, func(), error) {
	informer, err := cache.GetInformer(ctx, &v1alpha1.Metric{})
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	ready := map[string]bool{}
	done := make(chan error)
	note := func(obj any, deleted bool) {
		m, ok := obj.(*v1alpha1.Metric)
		if !ok || m.Namespace != ns {
			return
		}
		status, _ := framework.Ready(m)
		mu.Lock()
		defer mu.Unlock()
		if len(ready) == n {
			return // reported already
		}
		if !deleted && status == metav1.ConditionTrue {
			ready[m.Name] = true
		} else {
			delete(ready, m.Name)
		}
		if len(ready) == n {
			close(done)
		}
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { note(obj, false) },
		UpdateFunc: func(_, obj any) { note(obj, false) },
		DeleteFunc: func(obj any) { note(obj, true) },
	})
	if err != nil {
		return nil, nil, err
	}
	return done, func() { _ = informer.RemoveEventHandler(reg) }, nil
}

// watchReady reports on the returned channel once n Metrics of ns are Ready.
// The API server closes a watch that falls behind (a run with large
// prompts makes big events); it is then listed and watched again.
func (b *bench) watchReady(ctx context.Context, ns string, n int) (<-chan error, error) {
	w, ready, err := b.listAndWatch(ctx, ns)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		for len(ready) < n {
			if err := consumeReady(w, ready, n); err != nil {
				done <- err
				return
			}
			if len(ready) < n {
				if w, ready, err = b.listAndWatch(ctx, ns); err != nil {
					done <- err
					return
				}
			}
		}
		w.Stop()
		done <- nil
	}()
	return done, nil
}

// listAndWatch lists the Metrics of ns, returning the names of the Ready
// ones, and watches them from the list on.
func (b *bench) listAndWatch(ctx context.Context, ns string) (watch.Interface, map[string]bool, error) {
	var list v1alpha1.MetricList
	if err := b.k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, nil, fmt.Errorf("listing Metrics: %w", err)
	}
	ready := map[string]bool{}
	for i := range list.Items {
		if status, _ := framework.Ready(&list.Items[i]); status == metav1.ConditionTrue {
			ready[list.Items[i].Name] = true
		}
	}
	w, err := b.k8s.Watch(ctx, &v1alpha1.MetricList{}, client.InNamespace(ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return nil, nil, fmt.Errorf("watching Metrics: %w", err)
	}
	return w, ready, nil
}

// consumeReady records in ready which Metrics w shows Ready, until n are or
// the watch closes (nil: list and watch again).
func consumeReady(w watch.Interface, ready map[string]bool, n int) error {
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return nil // expired or overloaded: start over from a list
		}
		m, ok := ev.Object.(*v1alpha1.Metric)
		if !ok {
			return fmt.Errorf("watching Metrics: unexpected %T", ev.Object)
		}
		status, _ := framework.Ready(m)
		if ev.Type != watch.Deleted && status == metav1.ConditionTrue {
			ready[m.Name] = true
		} else {
			delete(ready, m.Name)
		}
		if len(ready) == n {
			return nil
		}
	}
	return nil
}

// steadyState restarts the manager over n Ready Metrics and counts the
// upstream calls and API writes of the resync: both must be 0.
func (b *bench) steadyState(ctx context.Context, tab *table, label string, svc evalapi.Service, n, c int) error {
	callsBefore := b.upstreamCalls()
	resync, writes, err := b.restart(ctx, controller.Options{MaxConcurrentReconciles: c,
		Defaults: remote.Defaults{Service: svc}}, readReconcileStats, n)
	if err != nil {
		return err
	}
	tab.add(label+"restart over Ready Metrics: start to all reconciled", rate(n, resync), "", "")
	tab.add(label+"restart: upstream calls, API writes",
		fmt.Sprintf("%d, %d", b.upstreamCalls()-callsBefore, writes), "0, 0", "")
	return nil
}

// restart starts a manager with opts over n objects of the controller whose
// counters read reads, and returns the time from its start until each was
// reconciled and the queue is empty, and the manager's API writes by the end
// of a quiet period after that (late work: requeues, events).
func (b *bench) restart(ctx context.Context, opts controller.Options, read func() (reconcileStats, error), n int) (
	resync time.Duration, writes int64, err error) {
	statsBefore, err := read()
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	mgr, err := b.startManager(ctx, opts, nil)
	if err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, mgr.stop()) }()
	if _, err := waitIdle(ctx, read, statsBefore, n); err != nil {
		return 0, 0, fmt.Errorf("waiting for the resync: %w", err)
	}
	resync = time.Since(start)
	time.Sleep(quietPeriod)
	return resync, mgr.api.writes(), nil
}

// driftInterval is the drift interval of the drift check run; its clock is
// stepped, not waited for.
const driftInterval = 10 * time.Minute

// driftCheck starts a manager with drift checks over the n Ready Metrics of
// ns, moves its clock one interval on and re-triggers every Metric: each
// must cost one GET and no write, since nothing drifted.
func (b *bench) driftCheck(ctx context.Context, tab *table, label, ns string, svc evalapi.Service, n, c int) (err error) {
	clock := clocktesting.NewFakeClock(time.Now())
	statsBefore, err := readReconcileStats()
	if err != nil {
		return err
	}
	mgr, err := b.startManager(ctx, controller.Options{MaxConcurrentReconciles: c, Clock: clock,
		Defaults: remote.Defaults{Service: svc, DriftInterval: driftInterval}}, nil)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, mgr.stop()) }()
	// The start schedules every Metric's first check and reads none.
	if statsBefore, err = waitIdle(ctx, readReconcileStats, statsBefore, n); err != nil {
		return fmt.Errorf("waiting for the resync: %w", err)
	}
	gets, updates := b.server.Calls(evalapitest.OpGetMetric), b.server.Calls(evalapitest.OpUpdateMetric)
	writes := mgr.api.writes()

	clock.Step(driftInterval)
	start := time.Now()
	if err := b.touchKeySecret(ctx, ns); err != nil {
		return err
	}
	if _, err := waitIdle(ctx, readReconcileStats, statsBefore, n); err != nil {
		return fmt.Errorf("waiting for the drift checks: %w", err)
	}
	elapsed := time.Since(start)
	tab.add(label+"drift check over N Ready Metrics: GETs, updates, API writes per Metric per interval",
		fmt.Sprintf("%s, %s, %s", perObject(int64(b.server.Calls(evalapitest.OpGetMetric)-gets), n),
			perObject(int64(b.server.Calls(evalapitest.OpUpdateMetric)-updates), n), perObject(mgr.api.writes()-writes, n)),
		"1, 0, 0", "")
	tab.add(label+"drift check: all Metrics read", rate(n, elapsed), "", "")
	return nil
}

// touchKeySecret changes the labels of ns's key Secret, which re-triggers
// every Metric that uses it.
func (b *bench) touchKeySecret(ctx context.Context, ns string) error {
	var s corev1.Secret
	if err := b.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: framework.KeySecretName}, &s); err != nil {
		return fmt.Errorf("reading the key Secret: %w", err)
	}
	s.Labels["bench-touched"] = strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := b.k8s.Update(ctx, &s); err != nil {
		return fmt.Errorf("touching the key Secret: %w", err)
	}
	return nil
}

// upstreamCalls counts the requests of every operation the test server got.
func (b *bench) upstreamCalls() int {
	return b.calls([]string{evalapitest.OpCreateMetric, evalapitest.OpBulkDeleteTestcases, evalapitest.OpDeleteTestset,
		evalapitest.OpGetMetric, evalapitest.OpUpdateMetric, evalapitest.OpDeleteMetric, evalapitest.OpListMetrics})
}

// deleteMetrics deletes the Metrics of ns and waits until they are gone.
func (b *bench) deleteMetrics(ctx context.Context, ns string) error {
	// The run's manager may be gone: let go of the remote Metrics (cleanup,
	// not measured) rather than wait for a finalizer nobody runs.
	var all v1alpha1.MetricList
	if err := b.k8s.List(ctx, &all, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing Metrics: %w", err)
	}
	unfinalized := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	for i := range all.Items {
		if len(all.Items[i].Finalizers) == 0 {
			continue
		}
		if err := b.k8s.Patch(ctx, &all.Items[i], unfinalized); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing the finalizer of %s: %w", all.Items[i].Name, err)
		}
	}
	if err := b.k8s.DeleteAllOf(ctx, &v1alpha1.Metric{}, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("deleting Metrics: %w", err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list v1alpha1.MetricList
		err := b.k8s.List(ctx, &list, client.InNamespace(ns), client.Limit(1))
		return len(list.Items) == 0, err
	})
}
