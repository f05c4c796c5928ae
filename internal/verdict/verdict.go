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
// its scored records (or, with trials or a baseline, its passed testcases
// over its decided ones); the run passes when every judged Metric clears
// the rule of rule.go (a confidence bound on its pass rate against its
// minimum, or on the paired difference against a baseline run) and enough
// of its expected scores exist. A Tally is fed one record at a time and
// keeps counts only (per testcase when judged by testcase), so a run's
// records are never held together.
package verdict

import (
	"bytes"
	"encoding/json"
	"math"
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

// Count is what a Tally counted for one Metric: scores, or, judged by
// testcase, testcases.
type Count struct {
	Passed, Failed int
}

// Tally counts the passed and failed scores of each Metric, a record at a
// time, and, for the trials and the baseline rules, each testcase's trials.
type Tally struct {
	metrics  []Metric
	byConfig map[string]int
	counts   []Count
	records  int
	// cases are each testcase's trials per Metric, a row per testcase:
	// rows[cases[id]]; a record without a testcase id is a row of its own.
	cases map[string]int
	rows  [][]trials
	// counted says the counts came from elsewhere (FromCounts), with no
	// testcases.
	counted bool
}

// trials are the passed and failed trials of one testcase for one Metric.
type trials struct{ passed, failed uint16 }

// NewTally returns an empty Tally of metrics.
func NewTally(metrics []Metric) *Tally {
	t := &Tally{metrics: metrics, byConfig: map[string]int{}, counts: make([]Count, len(metrics)), cases: map[string]int{}}
	for i, m := range metrics {
		t.byConfig[m.ID] = i
		if m.VersionID != "" {
			t.byConfig[m.VersionID] = i
		}
	}
	return t
}

// Add counts one record's scores, a record of no known testcase.
func (t *Tally) Add(scores []Score) { t.AddRecord("", scores) }

// AddRecord counts the scores of one record of testcase (a trial of it;
// "" when the record names none). A score of no Metric of the run, a
// second score of one Metric, or one whose value cannot be read, counts as
// no score.
func (t *Tally) AddRecord(testcase string, scores []Score) {
	t.records++
	row := t.row(testcase)
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
			row[i].passed = min(row[i].passed+1, math.MaxUint16-1)
		} else {
			t.counts[i].Failed++
			row[i].failed = min(row[i].failed+1, math.MaxUint16-1)
		}
	}
}

// row is testcase's row of trials, added if new.
func (t *Tally) row(testcase string) []trials {
	if i, ok := t.cases[testcase]; ok && testcase != "" {
		return t.rows[i]
	}
	if testcase != "" {
		t.cases[testcase] = len(t.rows)
	}
	t.rows = append(t.rows, make([]trials, len(t.metrics)))
	return t.rows[len(t.rows)-1]
}

// FromCounts is a tally of records records whose scores were counted
// elsewhere: counts[i] are metrics[i]'s (a standalone run's, counted by the
// REST server as they are written). It knows no testcases: judged by
// testcase, each passed or failed score is a testcase of one trial.
func FromCounts(metrics []Metric, records int, counts []Count) *Tally {
	t := NewTally(metrics)
	t.records, t.counted = records, true
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
