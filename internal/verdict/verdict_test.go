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

package verdict

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

func TestPasses(t *testing.T) {
	boolean := Metric{OutputType: Boolean}
	integer := Metric{OutputType: Int, Threshold: 4}
	float := Metric{OutputType: Float, Threshold: 0.9}
	for _, tc := range []struct {
		name           string
		m              Metric
		value          string
		pass, readable bool
	}{
		{"AI boolean true", boolean, `{"binaryScore":true,"reasoning":"ok"}`, true, true},
		{"AI boolean false", boolean, `{"binaryScore":false}`, false, true},
		{"client value", boolean, `{"value":true,"reasoning":"x"}`, true, true},
		{"heuristic score", boolean, `{"score":false}`, false, true},
		{"a bare boolean", boolean, `true`, true, true},
		{"int at the threshold", integer, `{"intScore":4}`, true, true},
		{"int below", integer, `{"intScore":3}`, false, true},
		{"heuristic int", integer, `{"score":5,"reasoning":"r"}`, true, true},
		{"float below", float, `{"floatScore":0.89}`, false, true},
		{"float at", float, `{"floatScore":0.9}`, true, true},
		{"nested score object", float, `{"score":{"value":0.95}}`, true, true},
		{"a number for a boolean Metric", boolean, `{"score":1}`, false, false},
		{"a boolean for an int Metric", integer, `{"intScore":true}`, false, false},
		{"no score field", integer, `{"rating":"excellent"}`, false, false},
		{"not JSON", integer, `{`, false, false},
		{"null", boolean, `null`, false, false},
	} {
		pass, readable := Passes(tc.m, json.RawMessage(tc.value))
		if pass != tc.pass || readable != tc.readable {
			t.Errorf("%s: Passes(%s) = %v, %v; want %v, %v", tc.name, tc.value, pass, readable, tc.pass, tc.readable)
		}
	}
}

// tally adds records whose scores are given per record as config id to value.
func tally(metrics []Metric, records ...map[string]string) *Tally {
	t := NewTally(metrics)
	for _, rec := range records {
		var scores []Score
		// In key order: which of two scores of one Metric comes first matters.
		for _, id := range slices.Sorted(maps.Keys(rec)) {
			scores = append(scores, Score{MetricConfigID: id, Value: json.RawMessage(rec[id])})
		}
		t.Add(scores)
	}
	return t
}

func TestResult(t *testing.T) {
	acc := Metric{ID: "m1", VersionID: "v1", Name: "accuracy", OutputType: Boolean, MinPassRate: 0.5}
	tone := Metric{ID: "m2", Name: "tone", OutputType: Int, Threshold: 4, MinPassRate: 1}
	review := Metric{ID: "m3", Name: "review", OutputType: Boolean, Human: true, MinPassRate: 1}
	yes, no := `{"binaryScore":true}`, `{"binaryScore":false}`
	all := Criteria{MinScoredRatio: 1, IgnoreHuman: true}
	for _, tc := range []struct {
		name       string
		metrics    []Metric
		records    []map[string]string
		expected   int
		unfinished string
		c          Criteria
		verdict    string
	}{
		{"every score passes", []Metric{acc, tone}, []map[string]string{{"m1": yes, "m2": `{"intScore":5}`}, {"v1": yes, "m2": `{"intScore":4}`}}, 2, "", all, Passed},
		{"a pass rate at its minimum passes", []Metric{acc}, []map[string]string{{"m1": yes}, {"m1": no}}, 2, "", all, Passed},
		{"one score below an int threshold fails", []Metric{tone}, []map[string]string{{"m2": `{"intScore":5}`}, {"m2": `{"intScore":3}`}}, 2, "", all, Failed},
		{"a missing record is unscored: inconclusive", []Metric{acc}, []map[string]string{{"m1": yes}}, 2, "", all, Inconclusive},
		{"a missing record within the scored ratio passes", []Metric{acc}, []map[string]string{{"m1": yes}}, 2, "", Criteria{MinScoredRatio: 0.5}, Passed},
		{"failure wins over too few scores", []Metric{acc, tone}, []map[string]string{{"m1": no}, {"m1": no}}, 2, "", all, Failed},
		{"human Metrics ignored", []Metric{acc, review}, []map[string]string{{"m1": yes}}, 1, "", all, Passed},
		{"human Metrics waited for and missing", []Metric{acc, review}, []map[string]string{{"m1": yes}}, 1, "", Criteria{MinScoredRatio: 1}, Inconclusive},
		{"only human Metrics, ignored", []Metric{review}, []map[string]string{{}}, 1, "", all, Inconclusive},
		{"the executor failed, passing so far", []Metric{acc}, []map[string]string{{"m1": yes}}, 1, "the executor Job x failed", all, Inconclusive},
		{"timed out but passing so far", []Metric{acc}, []map[string]string{{"m1": yes}}, 1, "the run did not finish in time", all, Inconclusive},
		{"an unreadable score counts as none", []Metric{acc}, []map[string]string{{"m1": `{"rating":"x"}`}}, 1, "", all, Inconclusive},
		{"a second score of one Metric is ignored", []Metric{acc}, []map[string]string{{"m1": yes, "v1": no}}, 1, "", all, Passed},
		{"a score of another Metric is ignored", []Metric{acc}, []map[string]string{{"m1": yes, "zz": no}}, 1, "", all, Passed},
	} {
		got := tally(tc.metrics, tc.records...).Result(tc.expected, tc.unfinished, tc.c)
		if got.Verdict != tc.verdict {
			t.Errorf("%s: verdict %s (%s), want %s", tc.name, got.Verdict, got.Reason, tc.verdict)
		}
	}
}

// A run whose every Metric went missing judges none: the reason is what
// went missing, not that its Metrics are human.
func TestResultWithoutMetricsSaysWhy(t *testing.T) {
	lost := "Metric tone was deleted after the run was created"
	got := NewTally(nil).Result(2, lost, Criteria{MinScoredRatio: 1, IgnoreHuman: true})
	if got.Verdict != Inconclusive || got.Reason != lost {
		t.Errorf("got %s (%s), want %s (%s)", got.Verdict, got.Reason, Inconclusive, lost)
	}
}

func TestResultCounts(t *testing.T) {
	acc := Metric{ID: "m1", Name: "accuracy", OutputType: Boolean, MinPassRate: 0.9}
	yes, no := `{"binaryScore":true}`, `{"binaryScore":false}`
	got := tally([]Metric{acc}, map[string]string{"m1": yes}, map[string]string{"m1": no},
		map[string]string{"m1": yes}, map[string]string{}).Result(5, "", Criteria{MinScoredRatio: 0.5})
	r := got.Metrics[0]
	if r.Passed != 2 || r.Failed != 1 || r.Unscored != 2 || r.PassRate == nil || *r.PassRate != 2.0/3 || !r.Judged {
		t.Errorf("counts = %+v, pass rate %v; want 2 passed, 1 failed, 2 unscored (5 expected, 4 records), 2/3", r.Count, r.PassRate)
	}
	if got.Verdict != Failed || got.Reason != "Metric accuracy is below its minimum pass rate" {
		t.Errorf("verdict %s: %s", got.Verdict, got.Reason)
	}
}

func TestFromCounts(t *testing.T) {
	acc := Metric{ID: "m1", Name: "accuracy", OutputType: Boolean, MinPassRate: 0.5}
	got := FromCounts([]Metric{acc}, 4, []Count{{Passed: 2, Failed: 1}}).Result(4, "", Criteria{MinScoredRatio: 0.75})
	if got.Verdict != Passed || got.Metrics[0].Unscored != 1 {
		t.Errorf("FromCounts: %s (%s), %d unscored; want Passed, 1 unscored", got.Verdict, got.Reason, got.Metrics[0].Unscored)
	}
	got = FromCounts([]Metric{acc}, 4, []Count{{Passed: 1, Failed: 2}}).Result(4, "", Criteria{MinScoredRatio: 0.75})
	if got.Verdict != Failed {
		t.Errorf("FromCounts: %s, want Failed", got.Verdict)
	}
}
