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
	"errors"

	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
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

// LocalRun is a standalone run as e's status tells it, the counts the REST
// server keeps there, judged by metrics: its phase follows from the counts
// as the service's would, from no records yet, through records and then
// scores missing, to only human scores missing, to completed.
func LocalRun(e *v1alpha1.EvaluationRun, metrics []verdict.Metric) Run {
	records := int(e.Status.Records)
	var expected *int
	want := records
	if n := e.Status.ExpectedRecords; n != nil {
		v := int(*n)
		expected, want = &v, max(want, v)
	}
	scoring, human := false, false
	for _, m := range metrics {
		if n := CountOf(e, m.ID); n.Passed+n.Failed < want {
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

// CountOf is the scores of Metric id counted in a standalone run's status.
func CountOf(e *v1alpha1.EvaluationRun, id string) verdict.Count {
	for _, m := range e.Status.Metrics {
		if m.ID == id {
			return verdict.Count{Passed: int(m.Passed), Failed: int(m.Failed)}
		}
	}
	return verdict.Count{}
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

// ErrStandaloneRuns: a standalone service keeps a run in the cluster, which
// its reconciler reads there.
var ErrStandaloneRuns = errors.New("a standalone service's runs are read from the cluster")

func (c *httpClient) CreateRun(ctx context.Context, req RunRequest, guard func(context.Context) error) (Run, error) {
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

func (c *httpClient) GetRun(ctx context.Context, id string) (Run, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return Run{}, err
	}
	defer release()
	r, err := c.svc.GetRun(ctx, key, id)
	return runOf(r), err
}

func (c *httpClient) GetMetric(ctx context.Context, id string) (Metric, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return Metric{}, err
	}
	defer release()
	m, err := c.svc.GetMetric(ctx, key, id)
	return metricOf(m), err
}

func (c *httpClient) Scores(ctx context.Context, runID string, each func(string, []verdict.Score) error) error {
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

// CreateRun assigns a fresh id locally: the cluster is the run's record,
// and the REST server counts the records and scores written to it.
func (c standalone) CreateRun(ctx context.Context, req RunRequest, _ func(context.Context) error) (Run, error) {
	if err := c.confirm.before(ctx); err != nil {
		return Run{}, err
	}
	return Run{ID: NewRunID(), Status: evalapi.RunAwaitingExecution, TestsetID: req.TestsetID, MetricIDs: req.MetricIDs}, nil
}

func (standalone) GetRun(context.Context, string) (Run, error) { return Run{}, ErrStandaloneRuns }

func (standalone) GetMetric(context.Context, string) (Metric, error) {
	return Metric{}, ErrStandaloneRuns
}

func (standalone) Scores(context.Context, string, func(string, []verdict.Score) error) error {
	return ErrStandaloneRuns
}
