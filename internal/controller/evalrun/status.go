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

package evalrun

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

// observe copies the service's phase and counts of run into e's status.
func observe(e *v1alpha1.EvaluationRun, run remote.Run) {
	e.Status.RunID, e.Status.Phase = run.ID, run.Status
	e.Status.Records, e.Status.Scores = clamp32(run.Records), clamp32(run.Scores)
	e.Status.ExpectedRecords = nil
	if run.Expected != nil {
		n := clamp32(*run.Expected)
		e.Status.ExpectedRecords = &n
	}
}

func clamp32(n int) int32 { return int32(min(max(n, 0), 1<<31-1)) } //nolint:gosec // clamped

// progress says where a run in progress stands, and what it lost since it
// was created (missing).
func progress(run remote.Run, missing []string) string {
	expected := "?"
	if run.Expected != nil {
		expected = fmt.Sprint(*run.Expected)
	}
	return strings.Join(append([]string{fmt.Sprintf("run %s is %s: %d of %s records, %d scores", run.ID, run.Status,
		run.Records, expected, run.Scores)}, missing...), "; ")
}

// startOf is when e's run was created: status.startTime, or, should that
// write have been lost, the object's creation.
func startOf(e *v1alpha1.EvaluationRun) time.Time {
	if e.Status.StartTime != nil {
		return e.Status.StartTime.Time
	}
	return e.CreationTimestamp.Time
}

// deadlineOf is when e ends at the latest: its run's start plus its
// timeout. Before the run exists, startOf is the object's creation, so a
// run whose references never become Ready ends at its timeout too.
func deadlineOf(e *v1alpha1.EvaluationRun) time.Time { return startOf(e).Add(timeoutOf(e)) }

// unfinishedBy says why a run is judged short of a full verdict: what it
// lost since it was created, then why it was judged unfinished, if it was.
func unfinishedBy(missing []string, unfinished string) string {
	if unfinished != "" {
		missing = append(slices.Clip(missing), unfinished)
	}
	return strings.Join(missing, "; ")
}

// waitedFor is what a run that did not advance waited for: its outcome's
// message, with the error that held it back.
func waitedFor(o kit.Outcome, err error) string {
	if err == nil || strings.Contains(o.Message, err.Error()) {
		return o.Message
	}
	return o.Message + ": " + err.Error()
}

// retryWithin is when a run whose step failed with err, left before its
// deadline after elapsed, is retried: when the work queue's backoff could
// outlast the deadline, at its next poll or its deadline, whichever comes
// first. ok is false where the backoff is due: no error, a deadline further
// than the longest backoff, or an error with its own retry (a conflict, a
// call held back by its service's limits, a cache not caught up).
func retryWithin(err error, left, elapsed time.Duration) (after time.Duration, ok bool) {
	_, throttled := remote.ThrottledFor(err)
	_, lagging := remote.CacheLagFor(err)
	if err == nil || left > kit.BackoffMax || apierrors.IsConflict(err) || throttled || lagging {
		return 0, false
	}
	return min(left, pollAfter(elapsed)), true
}

// ended is the verdict of a run that reached its deadline while it waited
// for what waited says: Inconclusive, whether or not its run exists.
func ended(e *v1alpha1.EvaluationRun, waited string) verdict.Result {
	timeout := timeoutOf(e)
	var reason string
	switch id := e.RecordedID(); {
	case id != "":
		reason = fmt.Sprintf("run %s could not be judged within the timeout (%s): %s", id, timeout, waited)
	case e.CreatePending():
		reason = fmt.Sprintf("no verdict within the timeout (%s): %s", timeout, waited)
	default:
		reason = fmt.Sprintf("no run was created within the timeout (%s): %s", timeout, waited)
	}
	return verdict.Result{Verdict: verdict.Inconclusive, Reason: reason}
}

func timeoutOf(e *v1alpha1.EvaluationRun) time.Duration {
	if e.Spec.Timeout == nil || e.Spec.Timeout.Duration <= 0 {
		return defaultTimeout
	}
	return e.Spec.Timeout.Duration
}

// pollAfter is when a run that has run for elapsed is read again.
func pollAfter(elapsed time.Duration) time.Duration { return min(max(elapsed/4, minPoll), maxPoll) }

// criteriaOf is e's pass criteria for the verdict.
// (the baseline's tally is read apart).
func criteriaOf(e *v1alpha1.EvaluationRun) verdict.Criteria {
	pc := e.Spec.PassCriteria
	c := verdict.Criteria{MinScoredRatio: orOne(pc.MinScoredRatio),
		IgnoreHuman: e.Spec.HumanScoring != v1alpha1.HumanScoringWait, Level: ptr.Deref(pc.Confidence, 0),
		Trials: verdict.Trials{N: int(ptr.Deref(pc.Trials, 1)), MinPassing: int(ptr.Deref(pc.MinPassingTrials, 0))}}
	if pc.Baseline != nil {
		c.Margin = ptr.Deref(pc.Baseline.Margin, defaultMargin)
	}
	return c
}

// defaultMargin is baseline.margin's default, for an object the API server
// did not default.
const defaultMargin = 0.05

func orOne(v *float64) float64 {
	if v == nil {
		return 1
	}
	return *v
}

// minPassRate is the pass rate m must reach under e's criteria: its own
// entry, by object name or id, else the run's.
func minPassRate(e *v1alpha1.EvaluationRun, name, id string) float64 {
	for _, c := range e.Spec.PassCriteria.Metrics {
		if (c.Name != "" && c.Name == name) || (c.ID != "" && string(c.ID) == id) {
			return c.MinPassRate
		}
	}
	return orOne(e.Spec.PassCriteria.MinPassRate)
}

// record writes res into e's status and its Passed condition; a result
// without Metrics (a run ended unjudged) leaves status.metrics as it was.
func record(e *v1alpha1.EvaluationRun, res verdict.Result, now metav1.Time) {
	counted := e.Status.Metrics
	if res.Metrics != nil { // a run ended unjudged keeps the counts it had
		e.Status.Metrics = make([]v1alpha1.MetricResult, len(res.Metrics))
	}
	for i, m := range res.Metrics {
		e.Status.Metrics[i] = v1alpha1.MetricResult{ID: m.ID, Name: m.Name, Passed: clamp32(m.Passed),
			Failed: clamp32(m.Failed), Unscored: clamp32(m.Unscored), PassRate: m.PassRate, MinPassRate: m.MinPassRate,
			Judged: m.Judged, BaselinePassRate: rounded(m.BaselinePassRate, math.Round),
			Difference: rounded(m.Difference, math.Round), Unjudged: unjudgedIn(counted, m.ID)}
		bounds(&e.Status.Metrics[i], m)
	}
	e.Status.Verdict = v1alpha1.Verdict(res.Verdict)
	e.Status.CompletionTime = &now
	meta.SetStatusCondition(&e.Status.Conditions, passedCondition(res, e.Generation))
}

// unjudgedIn is, of the standalone counts in metrics, the records the
// judge left without Metric id's score: kept past the verdict.
func unjudgedIn(metrics []v1alpha1.MetricResult, id string) int32 {
	for _, m := range metrics {
		if m.ID == id {
			return m.Unjudged
		}
	}
	return 0
}

// bounds writes the bounds the rule judged m on into out: against a
// baseline, or at a level above the point estimate's (where both are the
// pass rate, already shown). A Metric too thin to judge has none.
func bounds(out *v1alpha1.MetricResult, m verdict.MetricResult) {
	if m.Decision == "" || (m.Difference == nil && m.Level == verdict.PointLevel && m.Pairs == 0) {
		return
	}
	// Outwards, so that the status never shows a bound clearing what it did not.
	out.LowerBound, out.UpperBound = rounded(&m.Lower, math.Floor), rounded(&m.Upper, math.Ceil)
	out.Confidence = ptr.To(m.Level)
	if m.Difference != nil || m.Pairs > 0 {
		out.Pairs = ptr.To(clamp32(m.Pairs))
	}
}

// rounded is v to 4 decimals by round: a status to read, not a float's
// every digit (50 Metrics of them weigh on the object).
func rounded(v *float64, round func(float64) float64) *float64 {
	if v == nil {
		return nil
	}
	return ptr.To(round(*v*1e4) / 1e4)
}

// passedCondition is the Passed condition of a verdict.
func passedCondition(res verdict.Result, generation int64) metav1.Condition {
	status := metav1.ConditionUnknown
	switch res.Verdict {
	case verdict.Passed:
		status = metav1.ConditionTrue
	case verdict.Failed:
		status = metav1.ConditionFalse
	}
	return metav1.Condition{Type: v1alpha1.ConditionPassed, Status: status, Reason: res.Verdict,
		Message: res.Reason, ObservedGeneration: generation}
}

// judgeBudgetSpent says, for a standalone run whose judge's request budget
// is spent, why its records stay unscored; "" otherwise.
func judgeBudgetSpent(e *v1alpha1.EvaluationRun) string {
	if j := e.Status.Judge; j == nil || !j.BudgetSpent {
		return ""
	}
	return fmt.Sprintf("JudgeBudgetSpent: the judge's request budget for the run (maxRequestsPerRun of %s) is spent "+
		"after %d requests", e.Status.Judge.Service, e.Status.Judge.Requests)
}

// scoredBy names, for a verdict's message, the judge and models that scored
// a standalone run's AI Metrics; "" when no judge did.
func scoredBy(e *v1alpha1.EvaluationRun) string {
	j := e.Status.Judge
	if j == nil || j.Service == "" {
		return ""
	}
	models := "no model"
	if len(j.Models) > 0 {
		models = "model " + strings.Join(j.Models, ", ")
	}
	return fmt.Sprintf("; AI Metrics scored by the judge of %s (%s, %s)", j.Service, j.Endpoint, models)
}
