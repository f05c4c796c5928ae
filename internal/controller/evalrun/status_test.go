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
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

func TestDeadlineOf(t *testing.T) {
	created := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	e := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
		Spec: v1alpha1.EvaluationRunSpec{Timeout: &metav1.Duration{Duration: time.Minute}}}
	if got, want := deadlineOf(e), created.Add(time.Minute); !got.Equal(want) {
		t.Errorf("before the run exists: %s, want the creation plus the timeout, %s", got, want)
	}
	started := metav1.NewTime(created.Add(10 * time.Minute))
	e.Status.StartTime = &started
	if got, want := deadlineOf(e), started.Add(time.Minute); !got.Equal(want) {
		t.Errorf("once the run exists: %s, want its start plus the timeout, %s", got, want)
	}
	e.Spec.Timeout = nil
	if got, want := deadlineOf(e), started.Add(defaultTimeout); !got.Equal(want) {
		t.Errorf("without a timeout: %s, want the default's, %s", got, want)
	}
}

func TestProgressNamesWhatTheRunLost(t *testing.T) {
	two := 2
	run := remote.Run{ID: "run_1", Status: "running_execution", Records: 1, Expected: &two}
	if got, want := progress(run, nil), "run run_1 is running_execution: 1 of 2 records, 0 scores"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	lost := []string{"Testset qa was deleted after the run was created"}
	if got, want := progress(run, lost), "run run_1 is running_execution: 1 of 2 records, 0 scores; "+lost[0]; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestUnfinishedBy(t *testing.T) {
	lost := []string{"Testset qa was deleted after the run was created", "Metric exact is being deleted after the run was created"}
	for _, tc := range []struct {
		name       string
		missing    []string
		unfinished string
		want       string
	}{
		{"nothing lost, finished", nil, "", ""},
		{"nothing lost, timed out", nil, "the run did not finish in time", "the run did not finish in time"},
		{"lost, finished", lost[:1], "", lost[0]},
		{"lost and timed out", lost, "the run did not finish in time", lost[0] + "; " + lost[1] + "; the run did not finish in time"},
	} {
		if got := unfinishedBy(tc.missing, tc.unfinished); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if unfinishedBy(lost[:1:2], "x"); lost[1] != "Metric exact is being deleted after the run was created" {
		t.Error("unfinishedBy wrote into the caller's list")
	}
}

func TestWaitedFor(t *testing.T) {
	err := errors.New("connection refused")
	for _, tc := range []struct {
		name string
		o    kit.Outcome
		err  error
		want string
	}{
		{"an outcome", kit.Progressing(v1alpha1.ReasonReferencesNotReady, "Testset qa not found"), nil, "Testset qa not found"},
		{"an outcome and its error", kit.Progressing(v1alpha1.ReasonReferencesNotReady, "reading the run's Testset and Metrics"),
			err, "reading the run's Testset and Metrics: connection refused"},
		{"an outcome that says its error", kit.Progressing(v1alpha1.ReasonUpstreamUnavailable, "retrying: connection refused"),
			err, "retrying: connection refused"},
	} {
		if got := waitedFor(tc.o, tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRetryWithin(t *testing.T) {
	down := errors.New("dial tcp: connection refused")
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "evaluationruns"}, "x", errors.New("changed"))
	for _, tc := range []struct {
		name          string
		err           error
		left, elapsed time.Duration
		after         time.Duration
		ok            bool
	}{
		{"no error", nil, time.Second, time.Minute, 0, false},
		{"a deadline beyond the longest backoff", down, kit.BackoffMax + time.Second, time.Minute, 0, false},
		{"a failure near the deadline: the next poll", down, time.Minute, 40 * time.Second, 10 * time.Second, true},
		{"a failure nearer the deadline than the poll: the deadline", down, time.Second, time.Minute, time.Second, true},
		{"a conflict, requeued on its own", conflict, time.Second, time.Minute, 0, false},
		{"a call held back by the service's limits", &remote.Throttled{After: time.Second}, time.Second, time.Minute, 0, false},
		{"a cache not caught up", &remote.CacheLag{After: time.Second}, time.Second, time.Minute, 0, false},
	} {
		after, ok := retryWithin(tc.err, tc.left, tc.elapsed)
		if after != tc.after || ok != tc.ok {
			t.Errorf("%s: %s, %t; want %s, %t", tc.name, after, ok, tc.after, tc.ok)
		}
	}
}

func TestEnded(t *testing.T) {
	e := &v1alpha1.EvaluationRun{Spec: v1alpha1.EvaluationRunSpec{Timeout: &metav1.Duration{Duration: 3 * time.Second}}}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{"no run", nil, "no run was created within the timeout (3s): Testset qa not found"},
		{"a create whose answer was lost", map[string]string{v1alpha1.CreatePendingAnnotation: "x"},
			"no verdict within the timeout (3s): Testset qa not found"},
		{"a run", map[string]string{v1alpha1.RunIDAnnotation: "run_1"},
			"run run_1 could not be judged within the timeout (3s): Testset qa not found"},
	} {
		e.Annotations = tc.annotations
		got := ended(e, "Testset qa not found")
		if got.Verdict != verdict.Inconclusive || got.Reason != tc.want || got.Metrics != nil {
			t.Errorf("%s: %+v, want Inconclusive (%s) without Metrics", tc.name, got, tc.want)
		}
	}
}

// A run that states no level keeps the fixed-rate rule; what it states
// maps onto the verdict's criteria.
func TestCriteriaOf(t *testing.T) {
	e := &v1alpha1.EvaluationRun{}
	if c := criteriaOf(e); c.Level != 0 || c.Trials != (verdict.Trials{N: 1}) || c.Margin != 0 || !c.IgnoreHuman || c.MinScoredRatio != 1 {
		t.Errorf("defaults: %+v", c)
	}
	e.Spec.PassCriteria = v1alpha1.PassCriteria{Confidence: ptr.To(0.99), Trials: ptr.To[int32](3),
		MinPassingTrials: ptr.To[int32](2), Baseline: &v1alpha1.Baseline{RunRef: &v1alpha1.ObjectRef{Name: "prod"}}}
	if c := criteriaOf(e); c.Level != 0.99 || c.Trials != (verdict.Trials{N: 3, MinPassing: 2}) || c.Margin != defaultMargin {
		t.Errorf("stated: %+v", c)
	}
}

// Bounds go to status where they say more than the pass rate: against a
// baseline or above the point level, and only for a Metric judged.
func TestBounds(t *testing.T) {
	diff := -0.05
	for _, tc := range []struct {
		name string
		m    verdict.MetricResult
		want bool
	}{
		{"the fixed-rate rule", verdict.MetricResult{Level: verdict.PointLevel, Decision: verdict.Passed}, false},
		{"too few scores", verdict.MetricResult{Level: 0.95}, false},
		{"at 95%", verdict.MetricResult{Level: 0.95, Decision: verdict.Inconclusive, Lower: 0.7, Upper: 0.9}, true},
		{"against a baseline", verdict.MetricResult{Level: 0.95, Decision: verdict.Failed, Difference: &diff, Pairs: 20}, true},
	} {
		var out v1alpha1.MetricResult
		bounds(&out, tc.m)
		if got := out.LowerBound != nil && out.UpperBound != nil && out.Confidence != nil; got != tc.want {
			t.Errorf("%s: bounds written %v, want %v", tc.name, got, tc.want)
		}
		if tc.m.Difference != nil && (out.Pairs == nil || *out.Pairs != 20) {
			t.Errorf("%s: pairs %v", tc.name, out.Pairs)
		}
	}
}
