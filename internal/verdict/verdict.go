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

// Package verdict judges the scores of a run against its Metrics: a score
// passes when it is true (boolean) or at least the Metric's passing
// threshold (int, float); each Metric's pass rate is its passed scores over
// its scored records; the run passes when every judged Metric's pass rate
// reaches its minimum and enough of its expected scores exist. A Tally is
// fed one record at a time, so a run's records are never held together.
package verdict

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Verdicts of a run.
const (
	Passed       = "Passed"
	Failed       = "Failed"
	Inconclusive = "Inconclusive"
)

// Output types of a Metric, as the service names them.
const (
	Boolean = "boolean"
	Int     = "int"
	Float   = "float"
)

// Metric is one Metric of a run, as the verdict needs it.
type Metric struct {
	// ID is its remote id; VersionID the run's metricVersionIds entry for it
	// ("" when the service sent none). A score names one or the other.
	ID, VersionID string
	// Name names it in the status: the Metric object's name, else its id.
	Name string
	// OutputType is boolean, int or float; Threshold the passing threshold
	// of int and float.
	OutputType string
	Threshold  float64
	// Human is true for a Metric people score.
	Human bool
	// MinPassRate is the pass rate it must reach, 0 to 1.
	MinPassRate float64
}

// Score is one score of a record: the Metric it names, and its value as
// the service holds it.
type Score struct {
	MetricConfigID string
	Value          json.RawMessage
}

// Count is what a Tally counted for one Metric.
type Count struct {
	Passed, Failed int
}

// Tally counts the passed and failed scores of each Metric, a record at a
// time.
type Tally struct {
	metrics  []Metric
	byConfig map[string]int
	counts   []Count
	records  int
}

// NewTally returns an empty Tally of metrics.
func NewTally(metrics []Metric) *Tally {
	t := &Tally{metrics: metrics, byConfig: map[string]int{}, counts: make([]Count, len(metrics))}
	for i, m := range metrics {
		t.byConfig[m.ID] = i
		if m.VersionID != "" {
			t.byConfig[m.VersionID] = i
		}
	}
	return t
}

// Add counts one record's scores. A score of no Metric of the run, a
// second score of one Metric, or one whose value cannot be read, counts as
// no score.
func (t *Tally) Add(scores []Score) {
	t.records++
	seen := make([]bool, len(t.metrics))
	for _, s := range scores {
		i, ok := t.byConfig[s.MetricConfigID]
		if !ok || seen[i] {
			continue
		}
		pass, readable := Passes(t.metrics[i], s.Value)
		if !readable {
			continue
		}
		seen[i] = true
		if pass {
			t.counts[i].Passed++
		} else {
			t.counts[i].Failed++
		}
	}
}

// FromCounts is a tally of records records whose scores were counted
// elsewhere: counts[i] are metrics[i]'s (a standalone run's, counted by the
// REST server as they are written).
func FromCounts(metrics []Metric, records int, counts []Count) *Tally {
	t := NewTally(metrics)
	t.records = records
	copy(t.counts, counts)
	return t
}

// Records is how many records were added.
func (t *Tally) Records() int { return t.records }

// Passes judges one score value against m. readable is false when the
// value holds no score of m's output type: the service's AI scoring writes
// binaryScore, intScore or floatScore; heuristic code "score"; a client
// "value"; a bare true, number or object holding one of them is read too.
func Passes(m Metric, value json.RawMessage) (pass, readable bool) {
	v, ok := scoreOf(value)
	if !ok {
		return false, false
	}
	switch m.OutputType {
	case Boolean:
		b, ok := v.(bool)
		return b, ok
	case Int, Float:
		n, ok := v.(json.Number)
		if !ok {
			return false, false
		}
		f, err := n.Float64()
		return err == nil && f >= m.Threshold, err == nil
	}
	return false, false
}

// scoreFields are the fields a score object holds its value in, in the
// order they are looked for.
var scoreFields = []string{"binaryScore", "intScore", "floatScore", "score", "value"}

// scoreOf is the scalar a score value holds: a bool or a json.Number.
func scoreOf(value json.RawMessage) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(value))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	for range 2 { // {"score": {"value": 4}} at most
		obj, isObject := v.(map[string]any)
		if !isObject {
			break
		}
		i := slices.IndexFunc(scoreFields, func(f string) bool { _, ok := obj[f]; return ok })
		if i < 0 {
			return nil, false
		}
		v = obj[scoreFields[i]]
	}
	switch v.(type) {
	case bool, json.Number:
		return v, true
	}
	return nil, false
}

// Criteria are what a run must reach to pass.
type Criteria struct {
	// MinScoredRatio is the share of a judged Metric's expected scores
	// that must exist, 0 to 1.
	MinScoredRatio float64
	// IgnoreHuman leaves human Metrics out of the verdict: their counts are
	// reported, not judged.
	IgnoreHuman bool
}

// MetricResult is one Metric's outcome.
type MetricResult struct {
	Metric
	Count
	// Unscored are the expected scores that do not exist.
	Unscored int
	// PassRate is Passed over the scored records; nil with none.
	PassRate *float64
	// Judged says the Metric counts towards the verdict.
	Judged bool
}

// Result is a run's outcome.
type Result struct {
	Metrics []MetricResult
	Verdict string
	// Reason says why, in a sentence: the first Metric that failed or had
	// too few scores.
	Reason string
}

// outcome is the verdict and its reason: failed names the first Metric
// below its minimum pass rate, thin the first with too few scores.
func outcome(failed, thin, unfinished string, judged int) (verdict, reason string) {
	switch {
	case failed != "":
		return Failed, "Metric " + failed + " is below its minimum pass rate"
	case thin != "" && unfinished != "":
		return Inconclusive, "Metric " + thin + " has too few scores: " + unfinished
	case thin != "":
		return Inconclusive, "Metric " + thin + " has too few scores"
	case unfinished != "":
		return Inconclusive, unfinished
	case judged == 0:
		return Inconclusive, "no Metric is judged: the run's Metrics are human and humanScoring is Ignore"
	}
	return Passed, "every judged Metric reached its minimum pass rate"
}

// Result judges what t counted. expected is the records the run expects
// (its Testset's testcases), at least those added; unfinished, when not
// empty, says why the run is judged before it finished (the timeout, a
// failed executor), which makes a run that would pass Inconclusive.
func (t *Tally) Result(expected int, unfinished string, c Criteria) Result {
	expected = max(expected, t.records)
	res := Result{Metrics: make([]MetricResult, len(t.metrics))}
	failed, thin, judged := "", "", 0
	for i, m := range t.metrics {
		r := MetricResult{Metric: m, Count: t.counts[i], Judged: !m.Human || !c.IgnoreHuman}
		scored := r.Passed + r.Failed
		r.Unscored = expected - scored
		if scored > 0 {
			rate := float64(r.Passed) / float64(scored)
			r.PassRate = &rate
		}
		res.Metrics[i] = r
		if !r.Judged {
			continue
		}
		judged++
		switch {
		case scored == 0 || float64(scored) < c.MinScoredRatio*float64(expected):
			if thin == "" {
				thin = m.Name
			}
		case *r.PassRate < m.MinPassRate:
			if failed == "" {
				failed = m.Name
			}
		}
	}
	res.Verdict, res.Reason = outcome(failed, thin, unfinished, judged)
	return res
}
