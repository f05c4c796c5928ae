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

package remote

import (
	"context"
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/quote"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

// recordPageSize is the page size of a read of a run's records: the most
// the service serves in one page.
const recordPageSize = 100

// RunRequest is a run to create.
type RunRequest struct {
	ProjectID v1alpha1.ResourceID
	// TestsetID is "" for a run without a Testset.
	TestsetID       string
	SystemVersionID string
	MetricIDs       []string
	// Testcases is the testcases of the run's Testset as the cluster counts
	// them, nil without one: a run kept in the cluster expects that many
	// records.
	Testcases *int
}

// RunClient acts on one EvaluationRun's run. On a standalone service the
// cluster keeps the run: the REST server counts the records and scores
// written to it in the EvaluationRun's status, and the client answers from
// there, so its reconciler reads every run the same way.
type RunClient interface {
	// Unsupported says what of the run's spec its service cannot run, ""
	// when nothing.
	Unsupported() string
	// RefusedVersion says why the service would refuse, or leave unlinked,
	// a run naming system version id; "" when it takes it.
	RefusedVersion(id string) string
	// Create creates the run req asks for, with its guard as for a
	// Metric's Create.
	Create(ctx context.Context, req RunRequest, guard func(context.Context) error) (Run, error)
	// Get reads the run as of now, judged by metrics; testcases is as in
	// RunRequest, for a run whose status does not say what it expects yet.
	Get(ctx context.Context, testcases *int, metrics []verdict.Metric) (Run, error)
	// Metric reads remote Metric id, which the run names by its id.
	Metric(ctx context.Context, id string) (Metric, error)
	// Tally counts the scores of run for metrics, page by page where the
	// service keeps them: the records are never held together.
	Tally(ctx context.Context, run Run, metrics []verdict.Metric) (*verdict.Tally, error)
}

// Run is a run as the service holds it.
type Run struct {
	ID     string
	Status string
	// TestsetID is the run's Testset, "" without one.
	TestsetID string
	// Records and Scores are the service's counts; Expected the records it
	// expects (its Testset's testcases), nil without a Testset.
	Records, Scores int
	Expected        *int
	// MetricIDs and MetricVersionIDs name the run's Metrics, in order.
	MetricIDs, MetricVersionIDs []string
}

func runOf(r evalapi.Run) Run {
	return Run{ID: r.ID, Status: r.Status, TestsetID: ptr.Deref(r.TestsetID, ""), Records: r.NumRecords, Scores: r.NumScores, Expected: r.NumExpectedRecords,
		MetricIDs: r.MetricIDs, MetricVersionIDs: r.MetricVersionIDs}
}

// localRun is a standalone run as e's status tells it, the counts the REST
// server keeps there, judged by metrics: its phase follows from the counts
// as the service's would, from no records yet, through records and then
// scores missing, to only human scores missing, to completed.
func localRun(e *v1alpha1.EvaluationRun, metrics []verdict.Metric) Run {
	records := int(e.Status.Records)
	var expected *int
	want := records
	if n := e.Status.ExpectedRecords; n != nil {
		v := int(*n)
		expected, want = &v, max(want, v)
	}
	scoring, human := false, false
	for _, m := range metrics {
		if n := countOf(e, m.ID); n.Passed+n.Failed+unjudgedOf(e, m.ID) < want {
			scoring = scoring || !m.Human
			human = human || m.Human
		}
	}
	run := Run{ID: e.RecordedID(), Records: records, Scores: int(e.Status.Scores), Expected: expected}
	switch {
	case records == 0:
		run.Status = evalapi.RunAwaitingExecution
	case expected != nil && records < *expected:
		run.Status = evalapi.RunRunningExecution
	case scoring:
		run.Status = evalapi.RunRunningScoring
	case human:
		run.Status = evalapi.RunAwaitingHumanScoring
	default:
		run.Status = evalapi.RunCompleted
	}
	return run
}

// countOf is the scores of Metric id counted in a standalone run's status.
func countOf(e *v1alpha1.EvaluationRun, id string) verdict.Count {
	for _, m := range e.Status.Metrics {
		if m.ID == id {
			return verdict.Count{Passed: int(m.Passed), Failed: int(m.Failed)}
		}
	}
	return verdict.Count{}
}

// unjudgedOf is the records of a standalone run the judge left without a
// score of Metric id: done, and unscored in the verdict.
func unjudgedOf(e *v1alpha1.EvaluationRun, id string) int {
	for _, m := range e.Status.Metrics {
		if m.ID == id {
			return int(m.Unjudged)
		}
	}
	return 0
}

// Completed reports whether the service finished the run; HumanOnly whether
// only human scores are missing.
func (r Run) Completed() bool { return r.Status == evalapi.RunCompleted }

// HumanOnly reports whether the run waits for human scores alone.
func (r Run) HumanOnly() bool { return r.Status == evalapi.RunAwaitingHumanScoring }

// Judging is what the verdict needs of the Metric.
func (m Metric) Judging() verdict.Metric {
	threshold := 0.0
	if m.held.PassingThreshold != nil {
		threshold = *m.held.PassingThreshold
	}
	return verdict.Metric{ID: m.ID, Name: m.Name, OutputType: m.held.OutputType, Threshold: threshold,
		Human: m.held.EvalType == evalapi.EvalTypeHuman}
}

// JudgingOf is what the verdict needs of the Metric object m: its recorded
// id, output type, human or not, and the passing threshold in its status
// (0 until the service reported one).
func JudgingOf(m *v1alpha1.Metric) verdict.Metric {
	vm := verdict.Metric{ID: m.RecordedID(), Name: m.Name, OutputType: string(m.Spec.OutputType),
		Human: m.Spec.EvalType == v1alpha1.EvalTypeHuman}
	if t := m.Status.PassingThreshold; t != nil {
		vm.Threshold = *t
	}
	return vm
}

// serviceRun is the RunClient of a service that keeps its runs.
type serviceRun struct {
	c  *httpClient
	id string
}

func (serviceRun) Unsupported() string { return "" }

// RefusedVersion: the service holds version ids as UUIDs.
func (serviceRun) RefusedVersion(id string) string {
	if id == "" || v1alpha1.ValidUUID(id) {
		return ""
	}
	return "systemVersionId " + quote.Cut(id, 64) + " is not a UUID, which the service holds version ids as; " +
		"name a SystemVersion by spec.systemVersionRef, or give its id"
}

func (r serviceRun) Create(ctx context.Context, req RunRequest, guard func(context.Context) error) (Run, error) {
	return r.c.createRun(ctx, req, guard)
}

func (r serviceRun) Get(ctx context.Context, _ *int, _ []verdict.Metric) (Run, error) {
	return r.c.getRun(ctx, r.id)
}

func (r serviceRun) Metric(ctx context.Context, id string) (Metric, error) {
	return r.c.getMetric(ctx, id)
}

func (r serviceRun) Tally(ctx context.Context, run Run, metrics []verdict.Metric) (*verdict.Tally, error) {
	tally := verdict.NewTally(metrics)
	err := r.c.scores(ctx, run.ID, func(tc string, s []verdict.Score) error { tally.AddRecord(tc, s); return nil })
	return tally, err
}

func (c *httpClient) createRun(ctx context.Context, req RunRequest, guard func(context.Context) error) (Run, error) {
	key, release, err := c.beginCreate(ctx)
	if err != nil {
		return Run{}, err
	}
	defer release()
	if err := guard(ctx); err != nil {
		return Run{}, err
	}
	body := evalapi.RunRequest{MetricIDs: req.MetricIDs}
	if req.TestsetID != "" {
		body.TestsetID = &req.TestsetID
	}
	if req.SystemVersionID != "" {
		body.SystemVersionID = &req.SystemVersionID
	}
	r, err := c.svc.CreateRun(ctx, key, string(req.ProjectID), body)
	return runOf(r), err
}

func (c *httpClient) getRun(ctx context.Context, id string) (Run, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return Run{}, err
	}
	defer release()
	r, err := c.svc.GetRun(ctx, key, id)
	return runOf(r), err
}

func (c *httpClient) getMetric(ctx context.Context, id string) (Metric, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return Metric{}, err
	}
	defer release()
	m, err := c.svc.GetMetric(ctx, key, id)
	return metricOf(m), err
}

func (c *httpClient) scores(ctx context.Context, runID string, each func(testcase string, scores []verdict.Score) error) error {
	cursor := ""
	for {
		page, err := c.recordPage(ctx, runID, cursor)
		if err != nil {
			return err
		}
		for _, rec := range page.Data {
			scores := make([]verdict.Score, len(rec.Scores))
			for i, s := range rec.Scores {
				scores[i] = verdict.Score{MetricConfigID: s.MetricConfigID, Value: s.Score}
			}
			if err := each(rec.TestcaseID, scores); err != nil {
				return err
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" || len(page.Data) == 0 {
			return nil
		}
		cursor = *page.NextCursor
	}
}

// recordPage reads one page through the gate, as testcasePage does.
func (c *httpClient) recordPage(ctx context.Context, runID, cursor string) (evalapi.RecordPage, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return evalapi.RecordPage{}, err
	}
	defer release()
	return c.svc.ListRecords(ctx, key, runID, evalapi.ListOptions{Limit: recordPageSize, Cursor: cursor})
}

// standaloneRun is the RunClient of a standalone service: the cluster is
// the run's record, e its status.
type standaloneRun struct {
	c standalone
	e *v1alpha1.EvaluationRun
}

// Unsupported refuses metricIds (the cluster is the record of the Metrics
// that judge a standalone run, so they are named by reference), and trials
// or a baseline, which judge by testcase from records it does not keep.
func (r standaloneRun) Unsupported() string {
	pc := r.e.Spec.PassCriteria
	switch {
	case len(r.e.Spec.MetricIDs) > 0:
		return "on a standalone service the cluster is the record of the Metrics that judge a run: name them by " +
			"spec.metricRefs, not metricIds"
	case pc.Baseline != nil || (pc.Trials != nil && *pc.Trials > 1):
		return "a standalone run keeps counts per Metric, not its records, so it cannot be judged by testcase: " +
			"passCriteria.trials above 1 and passCriteria.baseline need a service connection"
	}
	return ""
}

// RefusedVersion: the cluster is the record, and takes any id.
func (standaloneRun) RefusedVersion(string) string { return "" }

// Create assigns a fresh id locally: the cluster is the run's record, and
// the REST server counts the records and scores written to it.
func (r standaloneRun) Create(ctx context.Context, req RunRequest, _ func(context.Context) error) (Run, error) {
	if err := r.c.confirm.before(ctx); err != nil {
		return Run{}, err
	}
	return Run{ID: NewRunID(), Status: evalapi.RunAwaitingExecution, TestsetID: req.TestsetID, MetricIDs: req.MetricIDs,
		Expected: req.Testcases}, nil
}

// Get answers from the run's status; a run the REST server created expects
// its Testset's testcases, which the status records from then on.
func (r standaloneRun) Get(_ context.Context, testcases *int, metrics []verdict.Metric) (Run, error) {
	if r.e.Status.ExpectedRecords == nil && testcases != nil {
		n := clamp32(*testcases)
		r.e.Status.ExpectedRecords = &n
	}
	return localRun(r.e, metrics), nil
}

// Metric finds no remote Metric: Unsupported refuses a run that names one.
func (standaloneRun) Metric(_ context.Context, id string) (Metric, error) {
	return Metric{}, fmt.Errorf("a standalone service holds no remote Metric %s", id)
}

// Tally counts the scores the REST server kept in the run's status.
func (r standaloneRun) Tally(_ context.Context, run Run, metrics []verdict.Metric) (*verdict.Tally, error) {
	counts := make([]verdict.Count, len(metrics))
	for i, m := range metrics {
		counts[i] = countOf(r.e, m.ID)
	}
	return verdict.FromCounts(metrics, run.Records, counts), nil
}

func clamp32(n int) int32 { return int32(min(max(n, 0), 1<<31-1)) } //nolint:gosec // clamped
