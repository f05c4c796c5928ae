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
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/execute"
)

var (
	flagExecN        = flag.Int("exec-n", 2000, "records of the executor's throughput run against a plain client; 0 skips it")
	flagExecSpreadN  = flag.Int("exec-spread-n", 10000, "testcases of the executor's spread run, 4 shares against 1; 0 skips it")
	flagExecSystem   = flag.Duration("exec-system-latency", 50*time.Millisecond, "the spread run's system under test's answer time")
	flagExecInFlight = flag.Int("exec-c", 8, "calls in flight per executor (and per plain client); the spread run's system takes as many at once per caller")
)

// TestExecutorBench runs only the executor's measurements (no control
// plane): go test -tags=bench -run '^TestExecutorBench$' ./test/bench.
func TestExecutorBench(t *testing.T) {
	tab := &table{}
	if err := executorRuns(t.Context(), tab); err != nil {
		t.Fatal(err)
	}
	fmt.Println(tab.markdown())
}

// executorRuns measures kubectl eval exec's core: its records per second
// against a plain client writing the same records, and a large run spread
// over 4 shares against 1.
func executorRuns(ctx context.Context, tab *table) error {
	if *flagExecN > 0 {
		if err := executorThroughput(ctx, tab, *flagExecN, *flagExecInFlight); err != nil {
			return fmt.Errorf("executor throughput: %w", err)
		}
	}
	if *flagExecSpreadN > 0 {
		if err := executorSpread(ctx, tab, *flagExecSpreadN, *flagExecInFlight); err != nil {
			return fmt.Errorf("executor spread: %w", err)
		}
	}
	return nil
}

// execFixture is a fake service holding a Testset of n testcases and a
// heuristic Metric, and the means to make runs of them.
type execFixture struct {
	srv     *evalapitest.Server
	api     *evalapi.Client
	testset string
	metric  string
	cases   []evalapi.Testcase
}

const execKey = evalapi.APIKey(evalapitest.DefaultKey)

func newExecFixture(ctx context.Context, n, inFlight int, latency time.Duration) (*execFixture, error) {
	srv := evalapitest.New()
	srv.SetScorer(nil)
	api, err := evalapi.NewClient(evalapi.Options{BaseURL: srv.URL(), MaxInFlight: 4 * inFlight})
	if err != nil {
		return nil, err
	}
	f := &execFixture{srv: srv, api: api}
	ts, err := api.CreateTestset(ctx, execKey, "p1", evalapi.TestsetRequest{Name: "bench", JSONSchema: json.RawMessage(`{}`),
		FieldMapping: evalapi.FieldMapping{Inputs: []string{"question"}, Expected: []string{"answer"}, Metadata: []string{}}})
	if err != nil {
		return nil, err
	}
	f.testset = ts.ID
	for start := 0; start < n; start += 100 {
		var data []json.RawMessage
		for i := start; i < min(n, start+100); i++ {
			data = append(data, json.RawMessage(fmt.Sprintf(`{"question":"q%d","answer":"Q%d"}`, i, i)))
		}
		created, err := api.CreateTestcases(ctx, execKey, ts.ID, data)
		if err != nil {
			return nil, err
		}
		f.cases = append(f.cases, created...)
	}
	m, err := api.CreateMetric(ctx, execKey, "p1", evalapitest.MinimalRequest("heuristic", "boolean"))
	if err != nil {
		return nil, err
	}
	f.metric = m.ID
	srv.SetLatency(latency) // after the set-up: only the runs pay it
	return f, nil
}

func (f *execFixture) newRun(ctx context.Context) (string, error) {
	run, err := f.api.CreateRun(ctx, execKey, "p1", evalapi.RunRequest{TestsetID: &f.testset, MetricIDs: []string{f.metric}})
	return run.ID, err
}

// execConfig executes run against the system at url, share of shares.
func execConfig(run, url string, inFlight, share, shares int) execute.Config {
	body, _ := execute.ParseBody(`{"question": {{json .inputs.question}}}`)
	return execute.Config{Key: execKey, RunID: run, Concurrency: inFlight, Share: share, Shares: shares, MaxErrors: 0,
		Progress: io.Discard, ProgressEvery: time.Hour,
		System: execute.System{URL: url, Method: http.MethodPost, Body: body, Output: "answer", Timeout: 30 * time.Second,
			Attempts: 3, MaxBackoff: time.Second, MaxAnswerBytes: 1 << 16,
			Headers: http.Header{"X-Caller": {fmt.Sprint(share)}},
			HTTP:    &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: inFlight}}}}
}

// echoSystem answers {"answer": QUESTION} after delay, taking at most
// perCaller calls at once from each caller (X-Caller); the others queue.
func echoSystem(delay time.Duration, perCaller int) *httptest.Server {
	var mu sync.Mutex
	slots := map[string]chan struct{}{}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		slot, ok := slots[r.Header.Get("X-Caller")]
		if !ok {
			slot = make(chan struct{}, perCaller)
			slots[r.Header.Get("X-Caller")] = slot
		}
		mu.Unlock()
		slot <- struct{}{}
		defer func() { <-slot }()
		var q struct{ Question string }
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(delay)
		_ = json.NewEncoder(w).Encode(map[string]string{"answer": q.Question})
	}))
}

// executorThroughput writes n records with the executor (a system that
// answers at once, the service at -latency), and the same n records with
// a plain client, inFlight at once each.
func executorThroughput(ctx context.Context, tab *table, n, inFlight int) error {
	f, err := newExecFixture(ctx, n, inFlight, *flagLatency)
	if err != nil {
		return err
	}
	defer f.srv.Close()
	sut := echoSystem(0, inFlight)
	defer sut.Close()

	plainRun, err := f.newRun(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(inFlight)
	for _, tc := range f.cases {
		g.Go(func() error {
			_, err := f.api.CreateRecord(gctx, execKey, plainRun, evalapi.RecordRequest{TestcaseID: tc.ID, Inputs: tc.Inputs,
				Expected: tc.Expected, Outputs: json.RawMessage(`{"response":"Q","latencyMs":0}`)})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	plain := time.Since(start)

	run, err := f.newRun(ctx)
	if err != nil {
		return err
	}
	start = time.Now()
	sum, err := execute.Run(ctx, f.api, execConfig(run, sut.URL, inFlight, 0, 1))
	if err != nil {
		return err
	}
	took := time.Since(start)
	if got, _ := f.srv.Run(run); sum.Recorded != n || got.NumRecords != n {
		return fmt.Errorf("the executor wrote %d records (the service holds %d), want %d", sum.Recorded, got.NumRecords, n)
	}
	tab.add(fmt.Sprintf("executor: %d records, %d in flight, service latency %s", n, inFlight, *flagLatency),
		rate(n, took), "plain client "+rate(n, plain), fmt.Sprintf("%.2fx", plain.Seconds()/took.Seconds()))
	return nil
}

// executorSpread executes an n-testcase run as 1 share, then another as 4
// shares at once (as 4 Pods would), against a system that answers in
// -exec-system-latency taking -exec-c calls at once per caller.
func executorSpread(ctx context.Context, tab *table, n, inFlight int) error {
	f, err := newExecFixture(ctx, n, 4*inFlight, 0)
	if err != nil {
		return err
	}
	defer f.srv.Close()
	sut := echoSystem(*flagExecSystem, inFlight)
	defer sut.Close()
	took := map[int]time.Duration{}
	for _, shares := range []int{1, 4} {
		run, err := f.newRun(ctx)
		if err != nil {
			return err
		}
		start := time.Now()
		g, gctx := errgroup.WithContext(ctx)
		for share := range shares {
			g.Go(func() error {
				_, err := execute.Run(gctx, f.api, execConfig(run, sut.URL, inFlight, share, shares))
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		took[shares] = time.Since(start)
		if err := f.recordedOnce(ctx, run, n); err != nil {
			return fmt.Errorf("%d shares: %w", shares, err)
		}
	}
	tab.add(fmt.Sprintf("executor: %d testcases over 4 shares, system %s with %d at once per caller", n, *flagExecSystem, inFlight),
		fmt.Sprintf("%.2f s", took[4].Seconds()), fmt.Sprintf("1 share %.2f s", took[1].Seconds()),
		fmt.Sprintf("%.2fx", took[4].Seconds()/took[1].Seconds()))
	return nil
}

// recordedOnce checks that run holds exactly one record per testcase.
func (f *execFixture) recordedOnce(ctx context.Context, run string, n int) error {
	seen := map[string]bool{}
	opts := evalapi.ListOptions{Limit: 100}
	for {
		page, err := f.api.ListRecords(ctx, execKey, run, opts)
		if err != nil {
			return err
		}
		for _, r := range page.Data {
			if seen[r.TestcaseID] {
				return fmt.Errorf("testcase %s recorded twice", r.TestcaseID)
			}
			seen[r.TestcaseID] = true
		}
		if !page.HasMore {
			break
		}
		opts.Cursor = *page.NextCursor
	}
	if len(seen) != n {
		return fmt.Errorf("%d testcases recorded, want %d", len(seen), n)
	}
	return nil
}
