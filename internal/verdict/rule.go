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

import "math"

// The rule. Each Metric is judged on a bound at a one-sided confidence
// level L:
//   - absolute (minPassRate m): the Wilson score bounds [lo, hi] of the
//     pass rate, each one-sided at L. Passed when lo >= m, Failed when
//     hi < m, else the data cannot decide: Inconclusive. At L = 0.5 both
//     bounds are the observed rate, which is the fixed-rate rule.
//   - against a baseline run (margin d): the testcases both runs decided
//     are paired; with b the pairs only the candidate passed and c those
//     only the baseline passed, the Agresti-Min bounds of the paired
//     difference (add 1/2 to each cell of the 2x2 table, then Wald):
//     Failed when hi < 0 (measurably worse), Passed when lo >= -d (no
//     worse than the baseline by more than d), else Inconclusive.
// A Failed verdict of a candidate as good as its baseline (or exactly at
// m) happens with probability at most about 1 - L: the false alarm rate.

// Levels of the rule.
const (
	// PointLevel makes both bounds the observed pass rate: the absolute
	// criterion's level when a run states none.
	PointLevel = 0.5
	// DefaultLevel is the baseline comparison's level when a run states
	// none.
	DefaultLevel = 0.95
)

// z is the standard normal quantile of level.
func z(level float64) float64 { return math.Sqrt2 * math.Erfinv(2*level-1) }

// RateBounds are the Wilson score bounds of a pass rate of passed out of
// n, each one-sided at level; [0, 1] when n is 0.
func RateBounds(passed, n int, level float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	k, nf, z := float64(passed), float64(n), z(level)
	p, z2 := k/nf, z*z
	center := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / (1 + z2/nf)
	return max(0, center-half), min(1, center+half)
}

// Pairs is the 2x2 table of the testcases two runs both decided for one
// Metric.
type Pairs struct {
	Both, CandidateOnly, BaselineOnly, Neither int
}

// N is how many testcases are paired.
func (p Pairs) N() int { return p.Both + p.CandidateOnly + p.BaselineOnly + p.Neither }

// Difference is the candidate's pass rate minus the baseline's, on the
// paired testcases; 0 without pairs.
func (p Pairs) Difference() float64 {
	if p.N() == 0 {
		return 0
	}
	return float64(p.CandidateOnly-p.BaselineOnly) / float64(p.N())
}

// DiffBounds are the Agresti-Min bounds of the paired difference, each
// one-sided at level; [-1, 1] without pairs.
func DiffBounds(p Pairs, level float64) (lo, hi float64) {
	if p.N() == 0 {
		return -1, 1
	}
	n := float64(p.N()) + 2
	b, c := float64(p.CandidateOnly)+0.5, float64(p.BaselineOnly)+0.5
	d := (b - c) / n
	half := z(level) * math.Sqrt((b+c)-(b-c)*(b-c)/n) / n
	return max(-1, d-half), min(1, d+half)
}

// Trials are how many trials each testcase has (records of one testcase)
// and how many of them must pass for the testcase to pass.
type Trials struct {
	// N is the trials per testcase, 1 when 0.
	N int
	// MinPassing is how many must pass, N when 0.
	MinPassing int
}

// byTestcase says the verdict judges testcases rather than records.
func (tr Trials) byTestcase() bool { return tr.N > 1 }

// decide judges a testcase of passed and failed scored trials: it passes
// once MinPassing passed, fails once more than N - MinPassing failed (it
// can no longer pass; with more trials than N this wins), and is
// undecided before either.
func (tr Trials) decide(passed, failed int) (decided, pass bool) {
	n := max(tr.N, 1)
	need := tr.MinPassing
	if need <= 0 || need > n {
		need = n
	}
	switch {
	case failed > n-need:
		return true, false
	case passed >= need:
		return true, true
	}
	return false, false
}
