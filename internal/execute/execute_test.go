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

package execute

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

// fixture is a fake service holding a run of n testcases {question} →
// expected {answer}, and its heuristic Metrics correct (boolean) and fast
// (float).
type fixture struct {
	srv     *evalapitest.Server
	api     *evalapi.Client
	run     evalapi.Run
	testset string
}

const key = evalapi.APIKey(evalapitest.DefaultKey)

func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	ctx := context.Background()
	srv := evalapitest.New()
	t.Cleanup(srv.Close)
	srv.SetScorer(nil) // only the executor's checks score
	api, err := evalapi.NewClient(evalapi.Options{BaseURL: srv.URL()})
	must(t, err)
	ts, err := api.CreateTestset(ctx, key, "p1", evalapi.TestsetRequest{Name: "qa", JSONSchema: json.RawMessage(`{}`),
		FieldMapping: evalapi.FieldMapping{Inputs: []string{"question"}, Expected: []string{"answer"}, Metadata: []string{}}})
	must(t, err)
	for start := 0; start < n; start += 100 {
		var data []json.RawMessage
		for i := start; i < min(n, start+100); i++ {
			data = append(data, json.RawMessage(fmt.Sprintf(`{"question":"q%d","answer":"Q%d"}`, i, i)))
		}
		_, err = api.CreateTestcases(ctx, key, ts.ID, data)
		must(t, err)
	}
	ids := make([]string, 0, 2)
	for _, m := range []struct{ name, out string }{{"Correct answer", "boolean"}, {"fast", "float"}} {
		req := evalapitest.MinimalRequest("heuristic", m.out)
		req.Name = m.name
		met, err := api.CreateMetric(ctx, key, "p1", req)
		must(t, err)
		ids = append(ids, met.ID)
	}
	run, err := api.CreateRun(ctx, key, "p1", evalapi.RunRequest{TestsetID: &ts.ID, MetricIDs: ids})
	must(t, err)
	return &fixture{srv: srv, api: api, run: run, testset: ts.ID}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// upper is a system under test answering {"answer": QUESTION}.
func upper(w http.ResponseWriter, r *http.Request) {
	var q struct{ Question string }
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"answer": strings.ToUpper(q.Question)})
}

// config is an execution of f's run against the system at url.
func (f *fixture) config(t *testing.T, url string, progress *bytes.Buffer) Config {
	t.Helper()
	body, err := ParseBody(`{"question": {{json .inputs.question}}}`)
	must(t, err)
	checks := make([]Check, 0, 2)
	for _, s := range []string{"correct-answer=exact:answer", "fast=latency:5s"} {
		c, err := ParseCheck(s)
		must(t, err)
		checks = append(checks, c)
	}
	return Config{Key: key, RunID: f.run.ID, Checks: checks, Concurrency: 4, Shares: 1, MaxErrors: 10,
		Progress: progress, ProgressEvery: time.Hour,
		System: System{URL: url, Method: http.MethodPost, Body: body, Output: "answer", Timeout: 2 * time.Second,
			Attempts: 3, MaxBackoff: 2 * time.Second, MaxAnswerBytes: 1 << 16, HTTP: &http.Client{}}}
}

// records is the run's records by testcase id, failing on a testcase
// recorded twice.
func (f *fixture) records(t *testing.T) map[string]evalapi.RecordWithScores {
	t.Helper()
	out := map[string]evalapi.RecordWithScores{}
	opts := evalapi.ListOptions{Limit: 100}
	for {
		page, err := f.api.ListRecords(context.Background(), key, f.run.ID, opts)
		must(t, err)
		for _, r := range page.Data {
			if _, dup := out[r.TestcaseID]; dup {
				t.Fatalf("testcase %s recorded twice", r.TestcaseID)
			}
			out[r.TestcaseID] = r
		}
		if !page.HasMore {
			return out
		}
		opts.Cursor = *page.NextCursor
	}
}

// passes reports whether r's score of the run's Metric i passed.
func (f *fixture) passes(r evalapi.RecordWithScores, i int) (bool, bool) {
	for _, s := range r.Scores {
		if s.MetricConfigID == f.run.MetricIDs[i] || s.MetricConfigID == f.run.MetricVersionIDs[i] {
			var v struct {
				BinaryScore *bool
				FloatScore  *float64
			}
			_ = json.Unmarshal(s.Score, &v)
			if v.BinaryScore != nil {
				return *v.BinaryScore, true
			}
			return v.FloatScore != nil && *v.FloatScore == 1, true
		}
	}
	return false, false
}

func TestRunWritesOneScoredRecordPerTestcase(t *testing.T) {
	f := newFixture(t, 250)
	sut := httptest.NewServer(http.HandlerFunc(upper))
	defer sut.Close()
	var progress bytes.Buffer
	sum, err := Run(context.Background(), f.api, f.config(t, sut.URL, &progress))
	must(t, err)
	if sum.Listed != 250 || sum.Recorded != 250 || sum.Scores != 500 || sum.Existing != 0 {
		t.Fatalf("summary %+v, want 250 listed and recorded, 500 scores", sum)
	}
	recs := f.records(t)
	if len(recs) != 250 {
		t.Fatalf("%d records, want 250", len(recs))
	}
	for _, r := range recs {
		var out map[string]any
		must(t, json.Unmarshal(r.Outputs, &out))
		if out[OutputResponse] == nil || out[OutputLatency] == nil {
			t.Fatalf("outputs %s lack response or latencyMs", r.Outputs)
		}
		for i := range 2 {
			if pass, ok := f.passes(r, i); !pass || !ok {
				t.Fatalf("record %s: Metric %d scored %v (present %v), want a pass", r.ID, i, pass, ok)
			}
		}
	}
	if !strings.Contains(progress.String(), "finished: 250 testcases") {
		t.Fatalf("no last progress line in %q", progress.String())
	}
}

func TestRunSkipsWhatTheRunHolds(t *testing.T) {
	f := newFixture(t, 40)
	sut := httptest.NewServer(http.HandlerFunc(upper))
	defer sut.Close()
	// An earlier attempt recorded the first 15 testcases, and stopped
	// before scoring them.
	page, err := f.api.ListTestcases(context.Background(), key, f.testset, evalapi.ListOptions{Limit: 15})
	must(t, err)
	for _, tc := range page.Data {
		_, err := f.api.CreateRecord(context.Background(), key, f.run.ID, evalapi.RecordRequest{TestcaseID: tc.ID,
			Inputs: tc.Inputs, Expected: tc.Expected, Outputs: json.RawMessage(`{"response":"` +
				strings.ToUpper(strings.Trim(string(tc.Inputs[12:]), `"}`)) + `","latencyMs":3}`)})
		must(t, err)
	}
	sum, err := Run(context.Background(), f.api, f.config(t, sut.URL, &bytes.Buffer{}))
	must(t, err)
	if sum.Existing != 15 || sum.Recorded != 25 {
		t.Fatalf("summary %+v, want 15 existing and 25 recorded", sum)
	}
	recs := f.records(t)
	if len(recs) != 40 {
		t.Fatalf("%d records, want 40", len(recs))
	}
	for _, r := range recs {
		if _, ok := f.passes(r, 0); !ok {
			t.Fatalf("record %s has no score of correct", r.ID)
		}
	}
}

func TestRunLooksUpAWriteWhoseAnswerWasLost(t *testing.T) {
	f := newFixture(t, 10)
	sut := httptest.NewServer(http.HandlerFunc(upper))
	defer sut.Close()
	f.srv.InjectFaults(evalapitest.OpCreateRecord, evalapitest.CommitThenReset, evalapitest.Status429("0"),
		evalapitest.CommitThenReset)
	cfg := f.config(t, sut.URL, &bytes.Buffer{})
	cfg.Concurrency = 1
	sum, err := Run(context.Background(), f.api, cfg)
	must(t, err)
	if recs := f.records(t); len(recs) != 10 || sum.Recorded != 10 {
		t.Fatalf("%d records (summary %+v), want 10", len(recs), sum)
	}
}

func TestRunSplitsTheTestsetIntoShares(t *testing.T) {
	f := newFixture(t, 300)
	sut := httptest.NewServer(http.HandlerFunc(upper))
	defer sut.Close()
	total := 0
	for share := range 4 {
		cfg := f.config(t, sut.URL, &bytes.Buffer{})
		cfg.Share, cfg.Shares = share, 4
		sum, err := Run(context.Background(), f.api, cfg)
		must(t, err)
		if sum.Listed < 30 || sum.Listed > 120 {
			t.Fatalf("share %d took %d of 300 testcases; the shares are uneven", share, sum.Listed)
		}
		total += sum.Recorded
	}
	if recs := f.records(t); len(recs) != 300 || total != 300 {
		t.Fatalf("%d records, %d written, want 300", len(recs), total)
	}
}

// flaky answers each question's first call as fail does, then as upper.
func flaky(fail func(w http.ResponseWriter, r *http.Request)) http.Handler {
	var mu sync.Mutex
	seen := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		mu.Lock()
		first := !seen[buf.String()]
		seen[buf.String()] = true
		mu.Unlock()
		r.Body = http.NoBody
		if first {
			fail(w, r)
			return
		}
		r.Body = readCloser{&buf}
		upper(w, r)
	})
}

type readCloser struct{ *bytes.Buffer }

func (readCloser) Close() error { return nil }

// hang answers nothing until the caller gives up (the server notices a
// closed connection only once it has read the request's body), or 10s.
func hang(_ http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func TestRunRetriesTheSystem(t *testing.T) {
	for name, fail := range map[string]func(w http.ResponseWriter, r *http.Request){
		"429 with Retry-After": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		},
		"500": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
		"reset": func(w http.ResponseWriter, _ *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		},
		"slow": hang,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, 3)
			sut := httptest.NewServer(flaky(fail))
			defer sut.Close()
			cfg := f.config(t, sut.URL, &bytes.Buffer{})
			cfg.System.Timeout = 500 * time.Millisecond
			start := time.Now()
			sum, err := Run(context.Background(), f.api, cfg)
			must(t, err)
			if sum.Recorded != 3 || sum.Failed != 0 {
				t.Fatalf("summary %+v, want 3 recorded, none failed", sum)
			}
			if name == "429 with Retry-After" && time.Since(start) < time.Second {
				t.Fatalf("retried after %s, before the system's Retry-After of 1s", time.Since(start))
			}
		})
	}
}

func TestRunRecordsWhatTheSystemCannotAnswer(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"garbage":  func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>oops")) },
		"no field": func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"text":"Q"}`)) },
		"huge": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"answer":"` + strings.Repeat("x", 1<<20) + `"}`))
		},
		"hangs": hang,
		"400":   func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "bad", http.StatusBadRequest) },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, 3)
			sut := httptest.NewServer(h)
			defer sut.Close()
			cfg := f.config(t, sut.URL, &bytes.Buffer{})
			cfg.System.Timeout, cfg.System.Attempts = 300*time.Millisecond, 2
			sum, err := Run(context.Background(), f.api, cfg)
			must(t, err)
			if sum.Recorded != 3 || sum.Failed != 3 {
				t.Fatalf("summary %+v, want 3 recorded with the system's error", sum)
			}
			for _, r := range f.records(t) {
				if !bytes.Contains(r.Outputs, []byte(`"error":`)) {
					t.Fatalf("outputs %s hold no error", r.Outputs)
				}
				if pass, ok := f.passes(r, 0); pass || !ok {
					t.Fatalf("record %s scored %v (present %v), want a fail", r.ID, pass, ok)
				}
			}
		})
	}
}

func TestRunStopsAfterMaxErrors(t *testing.T) {
	f := newFixture(t, 50)
	var calls sync.Map
	sut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Store(r.RemoteAddr+time.Now().String(), true)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer sut.Close()
	cfg := f.config(t, sut.URL, &bytes.Buffer{})
	cfg.System.Attempts, cfg.MaxErrors, cfg.Concurrency = 1, 3, 1
	_, err := Run(context.Background(), f.api, cfg)
	if err == nil || !strings.Contains(err.Error(), "stopped after 4 testcases failed") {
		t.Fatalf("error %v, want a stop after 4 failed testcases", err)
	}
	if n := len(f.records(t)); n != 3 {
		t.Fatalf("%d records, want the 3 failures within --max-errors", n)
	}
}

func TestRunRefusesACheckOfAMetricOutsideTheRun(t *testing.T) {
	f := newFixture(t, 1)
	cfg := f.config(t, "http://127.0.0.1:1", &bytes.Buffer{})
	c, _ := ParseCheck("tone=exact")
	cfg.Checks = append(cfg.Checks, c)
	_, err := Run(context.Background(), f.api, cfg)
	if err == nil || !strings.Contains(err.Error(), `check of "tone": the run has no such Metric (it has Correct answer, fast)`) {
		t.Fatalf("error %v", err)
	}
	if n := len(f.records(t)); n != 0 {
		t.Fatalf("%d records written before the refusal", n)
	}
}
