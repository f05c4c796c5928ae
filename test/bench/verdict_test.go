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
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var flagVerdictN = flag.Int("verdict-n", 10000, "records of the EvaluationRun verdict run, each scored by 5 Metrics; 0 skips it")

// verdictMetrics is how many Metrics score each record of the verdict run.
const verdictMetrics = 5

// verdictRun measures the verdict of one completed run of n records, each
// scored by 5 Metrics, on the test server: the manager binary's time from
// the EvaluationRun's create (adopting the run by its id) to its verdict,
// against the floor of reading the same pages of records straight from the
// test server, one after another; and the manager's peak RSS above idle.
func (b *bench) verdictRun(ctx context.Context, tab *table, n int) error {
	runID, ids, err := b.completedRun(ctx, n)
	if err != nil {
		return err
	}
	c, err := evalapi.NewClient(evalapi.Options{BaseURL: b.server.URL(), Timeout: time.Minute})
	if err != nil {
		return err
	}
	floor, err := readRecords(ctx, c, runID)
	if err != nil {
		return err
	}

	bin, err := framework.BuildManager(ctx, b.dir)
	if err != nil {
		return err
	}
	mgr, err := framework.StartMetered(framework.MeteredOptions{Binary: bin, Kubeconfig: b.cp.Kubeconfig, Log: os.Stderr,
		Args: []string{"--api-url=" + b.server.URL(), "--api-qps=1000000", "--api-burst=1000000", "--zap-log-level=error"}})
	if err != nil {
		return err
	}
	defer func() { _ = mgr.Terminate() }()
	idle, err := idleMemory(ctx, mgr)
	if err != nil {
		return err
	}
	ns, err := b.newNamespace(ctx, "bench-verdict")
	if err != nil {
		return err
	}
	e := adoptingRun(ns, "verdict", runID, ids)
	start := time.Now()
	if err := b.k8s.Create(ctx, e); err != nil {
		return err
	}
	if err := b.waitVerdict(ctx, e); err != nil {
		return err
	}
	took := time.Since(start)
	mem, err := mgr.Memory()
	if err != nil {
		return err
	}
	label := fmt.Sprintf("EvaluationRun verdict of %d records x %d Metrics: ", n, verdictMetrics)
	tab.add(label+"created to judged (goal: within 1.2x the floor)", took.Round(time.Millisecond).String(),
		fmt.Sprintf("%s: its %d pages of records read straight from the test server, one after another",
			floor.Round(time.Millisecond), (n+99)/100), ratio(took, floor))
	tab.add(label+"manager's peak RSS (VmHWM) above idle (goal: at most 20 MiB)", mib(mem.Peak-idle.Peak),
		fmt.Sprintf("idle peak %s, peak while judging %s; verdict %s", mib(idle.Peak), mib(mem.Peak), e.Status.Verdict), "")
	return nil
}

// writeRecords writes n records to run, 32 at a time, as an executor does.
func writeRecords(ctx context.Context, c *evalapi.Client, run string, n int) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				_, err := c.CreateRecord(ctx, evalapi.APIKey(evalapitest.DefaultKey), run, evalapi.RecordRequest{
					Inputs:   json.RawMessage(fmt.Sprintf(`{"question":"q%d"}`, i)),
					Expected: json.RawMessage(`{"answer":"a"}`), Outputs: json.RawMessage(`{"answer":"a"}`)})
				if err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// readRecords reads every page of run's records, one after another, as the
// verdict does, and returns how long that took.
func readRecords(ctx context.Context, c *evalapi.Client, run string) (time.Duration, error) {
	start := time.Now()
	cursor := ""
	for {
		page, err := c.ListRecords(ctx, evalapi.APIKey(evalapitest.DefaultKey), run, evalapi.ListOptions{Limit: 100, Cursor: cursor})
		if err != nil {
			return 0, err
		}
		if page.NextCursor == nil || *page.NextCursor == "" || len(page.Data) == 0 {
			return time.Since(start), nil
		}
		cursor = *page.NextCursor
	}
}

// waitVerdict waits for e's verdict.
func (b *bench) waitVerdict(ctx context.Context, e *v1alpha1.EvaluationRun) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if err := b.k8s.Get(ctx, client.ObjectKeyFromObject(e), e); err != nil {
			return err
		}
		if e.Status.Verdict != "" {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("the EvaluationRun had no verdict within 10 minutes")
}

var flagVerdictHung = flag.Int("verdict-hung", 50, "EvaluationRuns on the hung service of the verdict isolation run; 0 skips it")

// verdictIsolationRun measures what runs in flight on a hung service cost
// the verdict of a run on another: one run of 2,000 records x 5 Metrics on
// the test server is judged 3 times with service A idle, and 3 times while
// hung runs are followed on A, which answers nothing until its timeout. One
// in-process manager with c workers; the goal is at most 1.2x.
func (b *bench) verdictIsolationRun(ctx context.Context, tab *table, hung, c int) (err error) {
	const records = 2000
	runID, metricIDs, err := b.completedRun(ctx, records)
	if err != nil {
		return err
	}
	silent, mgr, err := b.hungSetUp(ctx, c)
	if err != nil {
		return err
	}
	defer silent.stop()
	defer func() { err = errors.Join(err, mgr.stop()) }()

	judge := func(prefix string) (time.Duration, error) {
		ns, err := b.serviceNamespace(ctx, prefix, b.server.URL())
		if err != nil {
			return 0, err
		}
		times := make([]time.Duration, 3)
		for i := range times {
			e := adoptingRun(ns, fmt.Sprintf("b-%d", i), runID, metricIDs)
			start := time.Now()
			if err := b.k8s.Create(ctx, e); err != nil {
				return 0, err
			}
			if err := b.waitVerdict(ctx, e); err != nil {
				return 0, err
			}
			times[i] = time.Since(start)
		}
		slices.Sort(times)
		return times[1], nil
	}
	alone, err := judge("verdict-alone-")
	if err != nil {
		return err
	}
	nsA, err := b.serviceNamespace(ctx, "verdict-hung-", silent.URL+"/api/v2")
	if err != nil {
		return err
	}
	for i := range hung {
		if err := b.k8s.Create(ctx, adoptingRun(nsA, fmt.Sprintf("a-%d", i), fmt.Sprintf("run_hung_%d", i), metricIDs)); err != nil {
			return err
		}
	}
	time.Sleep(hungTimeout) // every worker A can hold is holding
	beside, err := judge("verdict-beside-")
	if err != nil {
		return err
	}
	if err := b.k8s.DeleteAllOf(ctx, &v1alpha1.EvaluationRun{}, client.InNamespace(nsA)); err != nil {
		return err
	}
	label := fmt.Sprintf("EvaluationRun isolation, %d workers: verdict of %d records x %d Metrics on service B, median of 3", c,
		records, verdictMetrics)
	tab.add(label+", service A idle", alone.Round(time.Millisecond).String(), "", "")
	tab.add(label+fmt.Sprintf(", while %d runs are followed on service A, which answers nothing for %s", hung, hungTimeout),
		beside.Round(time.Millisecond).String(), "B with A idle", fmt.Sprintf("%.2fx (goal <= 1.2x)", beside.Seconds()/alone.Seconds()))
	return nil
}

// completedRun is a run on the test server of n records, each scored by
// the verdict's Metrics, and those Metrics' ids.
func (b *bench) completedRun(ctx context.Context, n int) (string, []v1alpha1.ResourceID, error) {
	c, err := evalapi.NewClient(evalapi.Options{BaseURL: b.server.URL(), Timeout: time.Minute})
	if err != nil {
		return "", nil, err
	}
	key := evalapi.APIKey(evalapitest.DefaultKey)
	ids := make([]v1alpha1.ResourceID, 0, verdictMetrics)
	wire := make([]string, 0, verdictMetrics)
	for i := range verdictMetrics {
		m, err := c.CreateMetric(ctx, key, "proj-verdict", evalapi.MetricRequest{Name: fmt.Sprintf("m%d", i),
			EvalType: evalapi.EvalTypeHeuristic, OutputType: evalapi.OutputTypeBoolean})
		if err != nil {
			return "", nil, err
		}
		ids, wire = append(ids, v1alpha1.ResourceID(m.ID)), append(wire, m.ID)
	}
	run, err := c.CreateRun(ctx, key, "proj-verdict", evalapi.RunRequest{MetricIDs: wire})
	if err != nil {
		return "", nil, err
	}
	return run.ID, ids, writeRecords(ctx, c, run.ID, n)
}

// adoptingRun is an EvaluationRun of ns that follows remote run id.
func adoptingRun(ns, name, id string, metricIDs []v1alpha1.ResourceID) *v1alpha1.EvaluationRun {
	return &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Annotations: map[string]string{v1alpha1.RunIDAnnotation: id}},
		Spec: v1alpha1.EvaluationRunSpec{ProjectID: "proj-verdict", MetricIDs: metricIDs,
			APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: framework.KeySecretName}}}
}
