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
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var accuracy = Metric{ID: "m1", Name: "accuracy", OutputType: Boolean, MinPassRate: 0.8}

var pass, fail = []Score{{MetricConfigID: "m1", Value: json.RawMessage(`true`)}},
	[]Score{{MetricConfigID: "m1", Value: json.RawMessage(`false`)}}

// ids are testcase ids, made once.
var ids = func() []string {
	out := make([]string, 1000)
	for i := range out {
		out[i] = fmt.Sprint("tc", i)
	}
	return out
}()

// run is a tally of one boolean Metric: trials[c] are testcase c's trials,
// true for a pass.
func run(m Metric, trials [][]bool) *Tally {
	t := NewTally([]Metric{m})
	for c, tc := range trials {
		for _, ok := range tc {
			scores := fail
			if ok {
				scores = pass
			}
			t.AddRecord(ids[c], scores)
		}
	}
	return t
}

// simulate is 200 testcases of k trials each, testcase c passing each trial
// with probability p(c), drawn from rng.
func simulate(rng *rand.Rand, k int, p func(c int) float64) [][]bool {
	out := make([][]bool, 200)
	for c := range out {
		out[c] = make([]bool, k)
		for i := range out[c] {
			out[c][i] = rng.Float64() < p(c)
		}
	}
	return out
}

// paired is a tally pair of n testcases: both pass the first both, only the
// candidate the next cand, only the baseline the next base, neither the
// rest.
func paired(n, both, cand, base int) (candidate, baseline *Tally) {
	c, b := make([][]bool, n), make([][]bool, n)
	for i := range n {
		c[i] = []bool{i < both || (i >= both && i < both+cand)}
		b[i] = []bool{i < both || (i >= both+cand && i < both+cand+base)}
	}
	return run(accuracy, c), run(accuracy, b)
}

func TestRule(t *testing.T) {
	flaky := func(seed uint64, n int) [][]bool { // 3/3 before, now one trial in three fails on half of the testcases
		rng := rand.New(rand.NewPCG(seed, 1))
		out := make([][]bool, n)
		for c := range out {
			out[c] = []bool{true, true, true}
			if c%2 == 0 {
				out[c][rng.IntN(3)] = false
			}
		}
		return out
	}
	strict := Metric{ID: "m1", Name: "accuracy", OutputType: Boolean, MinPassRate: 1}
	drop := rand.New(rand.NewPCG(56, 200))
	base200 := simulate(drop, 1, func(int) float64 { return 0.9 })
	cand200 := simulate(drop, 1, func(c int) float64 { // the same system, but broken on 1 testcase in 10
		if c%10 == 0 {
			return 0
		}
		return 0.9
	})
	cand17, base18 := paired(20, 16, 1, 2)
	for _, tc := range []struct {
		name      string
		candidate *Tally
		expected  int
		c         Criteria
		verdict   string
	}{
		{"a 3/3 to 2/3 flake passes with 2 of 3 trials required", run(strict, flaky(1, 20)), 20,
			Criteria{MinScoredRatio: 1, Trials: Trials{N: 3, MinPassing: 2}}, Passed},
		{"the same flake fails when every trial must pass", run(strict, flaky(1, 20)), 20,
			Criteria{MinScoredRatio: 1, Trials: Trials{N: 3}}, Failed},
		{"the same flake judged per record fails", run(strict, flaky(1, 20)), 60, Criteria{MinScoredRatio: 1}, Failed},
		{"a 3/3 to 2/3 flake passes against its 3/3 baseline", run(strict, flaky(2, 200)), 200,
			Criteria{MinScoredRatio: 1, Trials: Trials{N: 3, MinPassing: 2}, Baseline: &Baseline{Tally: run(strict, simulate(drop, 3, func(int) float64 { return 1 })), Trials: Trials{N: 3}}, Margin: 0.05}, Passed},
		{"a 10-point drop at n=200 fails against the baseline", run(accuracy, cand200), 200,
			Criteria{MinScoredRatio: 1, Baseline: &Baseline{Tally: run(accuracy, base200)}, Margin: 0.05}, Failed},
		{"17/20 against 18/20 is Inconclusive", cand17, 20,
			Criteria{MinScoredRatio: 1, Baseline: &Baseline{Tally: base18}, Margin: 0.05}, Inconclusive},
		{"17/20 against a minimum of 0.8 passes at the point level", cand17, 20,
			Criteria{MinScoredRatio: 1}, Passed},
		{"17/20 against a minimum of 0.8 is Inconclusive at 95%", cand17, 20,
			Criteria{MinScoredRatio: 1, Level: 0.95}, Inconclusive},
		{"190/200 against a minimum of 0.8 passes at 95%", run(accuracy, simulate(drop, 1, func(int) float64 { return 0.95 })), 200,
			Criteria{MinScoredRatio: 1, Level: 0.95}, Passed},
		{"no testcase in common with the baseline is Inconclusive", run(accuracy, [][]bool{{true}}), 1,
			Criteria{MinScoredRatio: 1, Baseline: &Baseline{Tally: NewTally([]Metric{accuracy})}}, Inconclusive},
	} {
		got := tc.candidate.Result(tc.expected, "", tc.c)
		if got.Verdict != tc.verdict {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Verdict, got.Reason, tc.verdict)
		}
	}
}

// At the point level the bounds are the observed rate: the fixed-rate rule
// that runs without a level keep.
func TestPointLevelIsTheObservedRate(t *testing.T) {
	for n := 1; n <= 50; n++ {
		for k := 0; k <= n; k++ {
			lo, hi := RateBounds(k, n, PointLevel)
			if p := float64(k) / float64(n); lo != p || hi != p {
				t.Fatalf("RateBounds(%d, %d, 0.5) = [%v, %v], want %v", k, n, lo, hi, p)
			}
		}
	}
}

func TestStatusOfAComparison(t *testing.T) {
	cand, base := paired(20, 16, 1, 2)
	r := cand.Result(20, "", Criteria{MinScoredRatio: 1, Baseline: &Baseline{Tally: base}, Margin: 0.05}).Metrics[0]
	if r.Pairs != 20 || *r.PassRate != 0.85 || *r.BaselinePassRate != 0.9 || math.Abs(*r.Difference+0.05) > 1e-12 ||
		r.Level != DefaultLevel || r.Lower >= -0.05 || r.Upper <= 0 || r.Decision != Inconclusive {
		t.Errorf("got %+v", r)
	}
}

// The false alarm rate: how often a candidate as good as its baseline (the
// same system, run again) is Failed; and, for the docs, how often a
// 10-point drop is detected. 10,000 seeded runs of 200 testcases whose
// pass probabilities differ (most pass nearly always, some are flaky).
func TestFalseAlarmRate(t *testing.T) {
	const runs, n = 10000, 200
	rng := rand.New(rand.NewPCG(56, 10000))
	p := make([]float64, n)
	for c := range p {
		p[c] = []float64{0.99, 0.95, 0.9, 0.7, 0.5}[c%5]
	}
	worse := func(c int) float64 {
		if c%10 == 0 {
			return 0
		}
		return p[c]
	}
	same := func(c int) float64 { return p[c] }
	c := Criteria{MinScoredRatio: 1, Margin: 0.05}
	var alarms, detected, promoted int
	for range runs {
		c.Baseline = &Baseline{Tally: run(accuracy, simulate(rng, 1, same))}
		switch run(accuracy, simulate(rng, 1, same)).Result(n, "", c).Verdict {
		case Failed:
			alarms++
		case Passed:
			promoted++
		}
		if run(accuracy, simulate(rng, 1, worse)).Result(n, "", c).Verdict == Failed {
			detected++
		}
	}
	rate := float64(alarms) / runs
	t.Logf("identical systems: %d of %d Failed (%.4f), %d Passed; a 10-point drop: %d Failed (%.4f)",
		alarms, runs, rate, promoted, detected, float64(detected)/runs)
	if rate > 1-DefaultLevel {
		t.Errorf("false alarm rate %.4f is above the stated %.2f", rate, 1-DefaultLevel)
	}
	if detected < runs*8/10 {
		t.Errorf("a 10-point drop was detected in %d of %d runs", detected, runs)
	}
}

// The absolute criterion's false alarm rate: a system whose pass rate is
// exactly its minimum is Failed at most 1 - level of the time.
func TestAbsoluteFalseAlarmRate(t *testing.T) {
	const runs, n = 10000, 200
	rng := rand.New(rand.NewPCG(56, 1))
	c := Criteria{MinScoredRatio: 1, Level: DefaultLevel}
	alarms := 0
	for range runs {
		k := 0
		for range n {
			if rng.Float64() < accuracy.MinPassRate {
				k++
			}
		}
		if FromCounts([]Metric{accuracy}, n, []Count{{Passed: k, Failed: n - k}}).Result(n, "", c).Verdict == Failed {
			alarms++
		}
	}
	rate := float64(alarms) / runs
	t.Logf("a system at its minimum: %d of %d Failed (%.4f)", alarms, runs, rate)
	if rate > 1-DefaultLevel {
		t.Errorf("false alarm rate %.4f is above the stated %.2f", rate, 1-DefaultLevel)
	}
}
