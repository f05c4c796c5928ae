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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Testcase is a testcase of the run's Testset.
type Testcase = evalapi.Testcase

// Service is the part of the Evaluation Service API the executor uses.
type Service interface {
	GetRun(ctx context.Context, key evalapi.APIKey, id string) (evalapi.Run, error)
	GetMetric(ctx context.Context, key evalapi.APIKey, id string) (evalapi.Metric, error)
	ListTestcases(ctx context.Context, key evalapi.APIKey, testsetID string, opts evalapi.ListOptions) (evalapi.TestcasePage, error)
	ListRecords(ctx context.Context, key evalapi.APIKey, runID string, opts evalapi.ListOptions) (evalapi.RecordPage, error)
	CreateRecord(ctx context.Context, key evalapi.APIKey, runID string, req evalapi.RecordRequest) (evalapi.Record, error)
	UpsertScore(ctx context.Context, key evalapi.APIKey, recordID, metricID string, score json.RawMessage) (evalapi.Score, error)
}

// Config is one execution of a run, or of one share of it.
type Config struct {
	Key   evalapi.APIKey
	RunID string
	// TestsetID overrides the run's Testset; "" uses the run's.
	TestsetID string
	System    System
	Checks    []Check
	// Concurrency is how many testcases are in flight at once.
	Concurrency int
	// Share and Shares split the Testset: this execution takes the
	// testcases whose id hashes to Share modulo Shares.
	Share, Shares int
	// MaxErrors is how many testcases may fail before the execution stops.
	MaxErrors int
	// Progress receives progress lines every ProgressEvery, and the last.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// Summary is what an execution did.
type Summary struct {
	// Listed is how many testcases of this share were read.
	Listed int
	// Existing is how many already had their record (an earlier attempt's).
	Existing int
	// Recorded is how many records this execution wrote, Failed how many of
	// those hold the system's error instead of an output.
	Recorded, Failed int
	// Scores is how many scores it wrote.
	Scores int
	// Lost is how many testcases got no record (a write that failed).
	Lost int
}

// Output keys of a record's outputs.
const (
	// OutputResponse holds the picked output.
	OutputResponse = "response"
	// OutputError holds why the system gave no output.
	OutputError = "error"
	// OutputLatency holds the call's latency in milliseconds.
	OutputLatency = "latencyMs"
)

// pageSize is how many testcases or records a list call asks for.
const pageSize = 100

// Run executes cfg's share of its run against api.
func Run(ctx context.Context, api Service, cfg Config) (Summary, error) {
	x := &execution{api: api, cfg: cfg, start: time.Now()}
	if err := x.prepare(ctx); err != nil {
		return Summary{}, err
	}
	done := make(chan struct{})
	go x.report(done)
	err := x.execute(ctx)
	close(done)
	x.line("finished")
	return x.summary(), err
}

// execution is one Run's state.
type execution struct {
	api    Service
	cfg    Config
	start  time.Time
	cancel context.CancelCauseFunc
	run    evalapi.Run
	// metrics are the checked Metrics, by check index.
	metrics []evalapi.Metric
	// recorded holds the testcases of this share already recorded; nil when
	// the service does not list records.
	recorded                                              map[string]bool
	listed, existing, written, failed, scores, lost, errs atomic.Int64
	mu                                                    sync.Mutex
}

// prepare reads the run, its checked Metrics and what it already holds.
func (x *execution) prepare(ctx context.Context) error {
	var err error
	if x.run, err = read(ctx, func() (evalapi.Run, error) { return x.api.GetRun(ctx, x.cfg.Key, x.cfg.RunID) }); err != nil {
		return fmt.Errorf("reading run %s: %w", x.cfg.RunID, err)
	}
	if x.cfg.TestsetID == "" {
		if x.run.TestsetID == nil || *x.run.TestsetID == "" {
			return fmt.Errorf("run %s has no Testset: give one with --testset", x.run.ID)
		}
		x.cfg.TestsetID = *x.run.TestsetID
	}
	if err := x.resolveChecks(ctx); err != nil {
		return err
	}
	return x.readRecorded(ctx)
}

// resolveChecks finds each check's Metric among the run's: by name or id,
// heuristic only (the service scores ai Metrics, people human ones).
func (x *execution) resolveChecks(ctx context.Context) error {
	if len(x.cfg.Checks) == 0 {
		return nil
	}
	var metrics []evalapi.Metric
	for _, id := range x.run.MetricIDs {
		m, err := read(ctx, func() (evalapi.Metric, error) { return x.api.GetMetric(ctx, x.cfg.Key, id) })
		if err != nil {
			return fmt.Errorf("reading Metric %s of the run: %w", id, err)
		}
		metrics = append(metrics, m)
	}
	for _, c := range x.cfg.Checks {
		i := indexOf(metrics, c.Metric)
		if i < 0 {
			names := make([]string, len(metrics))
			for j, m := range metrics {
				names[j] = m.Name
			}
			return fmt.Errorf("check of %q: the run has no such Metric (it has %s)", c.Metric, strings.Join(names, ", "))
		}
		if metrics[i].EvalType != "heuristic" {
			return fmt.Errorf("check of %q: the Metric's evalType is %s; checks score heuristic Metrics only",
				c.Metric, metrics[i].EvalType)
		}
		x.metrics = append(x.metrics, metrics[i])
	}
	return nil
}

// indexOf finds a Metric by its id or name on the service, else by its
// name as an object name ("Valid JSON output" as valid-json-output, as
// the Metric object is usually named) when one alone has it.
func indexOf(ms []evalapi.Metric, ref string) int {
	if i := slices.IndexFunc(ms, func(m evalapi.Metric) bool { return m.Name == ref || m.ID == ref }); i >= 0 {
		return i
	}
	found := -1
	for i, m := range ms {
		if slug(m.Name) == slug(ref) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// slug is s in lower case with each run of other characters than letters
// and digits as one dash.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}

// readRecorded reads the run's records of this share: each is kept as
// done, and scored where a check's score is missing (an attempt that
// stopped between a record and its scores). A service that does not list
// records (the cluster's REST server keeps only counts) leaves recorded nil.
func (x *execution) readRecorded(ctx context.Context) error {
	x.recorded = map[string]bool{}
	opts := evalapi.ListOptions{Limit: pageSize}
	for {
		page, err := read(ctx, func() (evalapi.RecordPage, error) {
			return x.api.ListRecords(ctx, x.cfg.Key, x.run.ID, opts)
		})
		if evalapi.KindOf(err) == evalapi.KindNotFound {
			x.recorded = nil
			x.printf("the service does not list a run's records: testcases recorded by an earlier attempt " +
				"cannot be skipped, so run the executor once per run")
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the run's records: %w", err)
		}
		for _, r := range page.Data {
			if r.TestcaseID == "" || !x.mine(r.TestcaseID) {
				continue
			}
			x.recorded[r.TestcaseID] = true
			if err := x.scoreMissing(ctx, r); err != nil {
				return err
			}
		}
		if !page.HasMore || page.NextCursor == nil {
			return nil
		}
		opts.Cursor = *page.NextCursor
	}
}

// scoreMissing writes the scores r lacks, from its stored outputs.
func (x *execution) scoreMissing(ctx context.Context, r evalapi.RecordWithScores) error {
	have := map[string]bool{}
	for _, s := range r.Scores {
		have[s.MetricConfigID] = true
		// A score may name the Metric's version instead: the run lists both.
		if i := slices.Index(x.run.MetricVersionIDs, s.MetricConfigID); i >= 0 && i < len(x.run.MetricIDs) {
			have[x.run.MetricIDs[i]] = true
		}
	}
	var out struct {
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
		LatencyMs int64           `json:"latencyMs"`
	}
	_ = json.Unmarshal(r.Outputs, &out)
	var callErr error
	if out.Error != "" {
		callErr = errors.New(out.Error)
	}
	return x.score(ctx, r.Record, out.Response, time.Duration(out.LatencyMs)*time.Millisecond, callErr, have)
}

// mine reports whether testcase id is in this execution's share.
func (x *execution) mine(id string) bool {
	if x.cfg.Shares <= 1 {
		return true
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32()%uint32(x.cfg.Shares)) == x.cfg.Share //nolint:gosec // Shares is small and positive
}

// execute lists the Testset page by page and hands this share's testcases
// that have no record yet to Concurrency callers, whose answers
// Concurrency writers record: the system is kept as busy as Concurrency
// allows while the service is written to. Once the callers are stopped
// (MaxErrors), what was answered is still recorded.
func (x *execution) execute(ctx context.Context) error {
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	x.cancel = cancel
	work := make(chan Testcase, x.cfg.Concurrency)
	results := make(chan answered, x.cfg.Concurrency)
	var callers, writers sync.WaitGroup
	for range x.cfg.Concurrency {
		callers.Go(func() {
			for tc := range work {
				if r, ok := x.call(callCtx, tc); ok {
					results <- r
				}
			}
		})
		writers.Go(func() {
			for r := range results {
				x.write(ctx, r)
			}
		})
	}
	err := x.list(callCtx, work)
	close(work)
	callers.Wait()
	close(results)
	writers.Wait()
	if cause := context.Cause(callCtx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	if err != nil {
		return err
	}
	if n := x.lost.Load(); n > 0 {
		return fmt.Errorf("%d testcase(s) got no record", n)
	}
	return ctx.Err()
}

// list sends this share's unrecorded testcases to work.
func (x *execution) list(ctx context.Context, work chan<- Testcase) error {
	opts := evalapi.ListOptions{Limit: pageSize}
	for {
		page, err := read(ctx, func() (evalapi.TestcasePage, error) {
			return x.api.ListTestcases(ctx, x.cfg.Key, x.cfg.TestsetID, opts)
		})
		if err != nil {
			return fmt.Errorf("listing the testcases of Testset %s: %w", x.cfg.TestsetID, err)
		}
		for _, tc := range page.Data {
			if !x.mine(tc.ID) {
				continue
			}
			x.listed.Add(1)
			if x.recorded[tc.ID] {
				x.existing.Add(1)
				continue
			}
			select {
			case work <- tc:
			case <-ctx.Done():
				return nil
			}
		}
		if !page.HasMore || page.NextCursor == nil {
			return nil
		}
		opts.Cursor = *page.NextCursor
	}
}

// answered is a testcase and what the system made of it.
type answered struct {
	tc  Testcase
	ans Answer
	err error
}

// call calls the system for tc. A call that fails is recorded with its
// error (every check fails it) until more than MaxErrors have failed;
// then the execution stops calling. ok is false when nothing is to be
// recorded.
func (x *execution) call(ctx context.Context, tc Testcase) (r answered, ok bool) {
	if ctx.Err() != nil {
		return r, false
	}
	ans, err := x.cfg.System.Call(ctx, tc)
	if ctx.Err() != nil {
		return r, false
	}
	if err != nil {
		x.printf("testcase %s: %v", tc.ID, err)
		if n := x.errs.Add(1); n > int64(x.cfg.MaxErrors) {
			x.cancel(fmt.Errorf("stopped after %d testcases failed (--max-errors %d); the last: %w", n, x.cfg.MaxErrors, err))
			return r, false
		}
	}
	return answered{tc: tc, ans: ans, err: err}, true
}

// write records r and writes its scores.
func (x *execution) write(ctx context.Context, r answered) {
	outputs := map[string]any{OutputLatency: r.ans.Latency.Milliseconds()}
	if r.err != nil {
		outputs[OutputError] = r.err.Error()
	} else {
		outputs[OutputResponse] = r.ans.Output
	}
	raw, _ := json.Marshal(outputs)
	rec, err := x.create(ctx, evalapi.RecordRequest{TestcaseID: r.tc.ID, Inputs: r.tc.Inputs, Expected: r.tc.Expected,
		Outputs: raw})
	if err != nil {
		x.lost.Add(1)
		x.printf("testcase %s: writing its record: %v", r.tc.ID, err)
		return
	}
	x.written.Add(1)
	if r.err != nil {
		x.failed.Add(1)
	}
	if err := x.score(ctx, rec, r.ans.Output, r.ans.Latency, r.err, nil); err != nil {
		x.printf("testcase %s: %v", r.tc.ID, err)
	}
}

// maxWriteAttempts bounds the attempts at one write to the service.
const maxWriteAttempts = 6

// create writes a record once. A write the service certainly did not act
// on is tried again; one whose outcome is unknown is looked up among the
// run's records first, and never repeated where they cannot be listed.
func (x *execution) create(ctx context.Context, req evalapi.RecordRequest) (evalapi.Record, error) {
	for attempt := 1; ; attempt++ {
		rec, err := x.api.CreateRecord(ctx, x.cfg.Key, x.run.ID, req)
		if err == nil {
			return rec, nil
		}
		kind := evalapi.KindOf(err)
		if kind == evalapi.KindOutcomeUnknown {
			if x.recorded == nil {
				return evalapi.Record{}, fmt.Errorf("%w; not written again, as it may have been written and the "+
					"service does not list records to tell", err)
			}
			found, ok, lerr := x.lookup(ctx, req.TestcaseID)
			if lerr != nil {
				return evalapi.Record{}, fmt.Errorf("%w; looking it up: %w", err, lerr)
			}
			if ok {
				return found, nil
			}
		} else if !safeToRepeat(kind) {
			return evalapi.Record{}, err
		}
		if attempt >= maxWriteAttempts {
			return evalapi.Record{}, err
		}
		if serr := sleep(ctx, writeBackoff(attempt, err)); serr != nil {
			return evalapi.Record{}, err
		}
	}
}

// lookup finds the record of testcase id among the run's.
func (x *execution) lookup(ctx context.Context, id string) (evalapi.Record, bool, error) {
	opts := evalapi.ListOptions{Limit: pageSize}
	for {
		page, err := read(ctx, func() (evalapi.RecordPage, error) {
			return x.api.ListRecords(ctx, x.cfg.Key, x.run.ID, opts)
		})
		if err != nil {
			return evalapi.Record{}, false, err
		}
		for _, r := range page.Data {
			if r.TestcaseID == id {
				return r.Record, true, nil
			}
		}
		if !page.HasMore || page.NextCursor == nil {
			return evalapi.Record{}, false, nil
		}
		opts.Cursor = *page.NextCursor
	}
}

// score writes each check's score of rec that is not in have (PUT: a
// repeat is harmless, so any failure but a refusal is tried again).
func (x *execution) score(ctx context.Context, rec evalapi.Record, output json.RawMessage, latency time.Duration,
	callErr error, have map[string]bool) error {
	for i, c := range x.cfg.Checks {
		m := x.metrics[i]
		if have[m.ID] {
			continue
		}
		pass, why := c.Judge(output, rec.Expected, latency, callErr)
		body, _ := json.Marshal(scoreOf(m.OutputType, pass, why))
		_, err := read(ctx, func() (evalapi.Score, error) { return x.api.UpsertScore(ctx, x.cfg.Key, rec.ID, m.ID, body) })
		if err != nil {
			return fmt.Errorf("writing the score of Metric %s: %w", m.Name, err)
		}
		x.scores.Add(1)
	}
	return nil
}

// scoreOf is a check's score in the field of the Metric's output type: a
// pass is true, 5 (the top of the 1-5 scale) or 1.0; a fail false, 1 or 0.
func scoreOf(outputType string, pass bool, why string) map[string]any {
	s := map[string]any{"reasoning": why}
	switch outputType {
	case "int":
		s["intScore"] = map[bool]int{true: 5, false: 1}[pass]
	case "float":
		s["floatScore"] = map[bool]float64{true: 1, false: 0}[pass]
	default:
		s["binaryScore"] = pass
	}
	return s
}

// safeToRepeat reports whether a failed call of kind certainly did nothing
// and may succeed later.
func safeToRepeat(kind evalapi.ErrorKind) bool {
	return kind == evalapi.KindNotSent || kind == evalapi.KindRateLimited || kind == evalapi.KindUnavailable
}

// writeBackoff is the wait before another write: the service's
// Retry-After, else 200ms doubled per attempt; at most 30s.
func writeBackoff(attempt int, err error) time.Duration {
	if d := evalapi.RetryAfterOf(err); d > 0 {
		return min(d, 30*time.Second)
	}
	return min(200*time.Millisecond<<(attempt-1), 30*time.Second)
}

// read calls f, which must be idempotent (a read, or a PUT), until it
// succeeds, fails for good, or maxWriteAttempts are spent.
func read[T any](ctx context.Context, f func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := f()
		kind := evalapi.KindOf(err)
		if err == nil || attempt >= maxWriteAttempts || (!safeToRepeat(kind) && kind != evalapi.KindOutcomeUnknown) {
			return v, err
		}
		if serr := sleep(ctx, writeBackoff(attempt, err)); serr != nil {
			return v, err
		}
	}
}

func (x *execution) summary() Summary {
	return Summary{Listed: int(x.listed.Load()), Existing: int(x.existing.Load()), Recorded: int(x.written.Load()),
		Failed: int(x.failed.Load()), Scores: int(x.scores.Load()), Lost: int(x.lost.Load())}
}

// report prints a progress line every ProgressEvery until done.
func (x *execution) report(done <-chan struct{}) {
	t := time.NewTicker(x.cfg.ProgressEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			x.line("progress")
		}
	}
}

func (x *execution) line(what string) {
	s := x.summary()
	secs := time.Since(x.start).Seconds()
	x.printf("%s: %d testcases of share %d/%d read, %d already recorded, %d recorded (%d with the system's error), "+
		"%d scores, %d not recorded; %.1f records/s", what, s.Listed, x.cfg.Share, max(x.cfg.Shares, 1), s.Existing,
		s.Recorded, s.Failed, s.Scores, s.Lost, float64(s.Recorded)/max(secs, 1e-3))
}

func (x *execution) printf(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	_, _ = fmt.Fprintf(x.cfg.Progress, "exec: "+format+"\n", args...)
}
