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
	"fmt"
	"strings"
)

// Criteria are what a run must reach to pass.
type Criteria struct {
	// MinScoredRatio is the share of a judged Metric's expected scores
	// that must exist, 0 to 1.
	MinScoredRatio float64
	// IgnoreHuman leaves human Metrics out of the verdict: their counts are
	// reported, not judged.
	IgnoreHuman bool
	// Level is the one-sided confidence level of every bound, 0.5 to 1; 0
	// is PointLevel for the absolute criterion and DefaultLevel against a
	// baseline.
	Level float64
	// Trials judge each testcase on its trials; the zero value judges
	// each record on its own, as one trial.
	Trials Trials
	// Baseline, when set, is the run each Metric is compared with instead
	// of its minimum pass rate.
	Baseline *Baseline
	// Margin is how far below the baseline's pass rate the lower bound of
	// the difference may reach for a Metric to pass, 0 to 1.
	Margin float64
}

// Baseline is the run a run is compared with: a tally of the same Metrics,
// and the trials rule that judges its testcases (its own).
type Baseline struct {
	Tally  *Tally
	Trials Trials
}

// level is the level of c's bounds.
func (c Criteria) level() float64 {
	switch {
	case c.Level > 0:
		return c.Level
	case c.Baseline != nil:
		return DefaultLevel
	}
	return PointLevel
}

// byTestcase says the verdict judges testcases rather than records.
func (c Criteria) byTestcase() bool { return c.Trials.byTestcase() || c.Baseline != nil }

// MetricResult is one Metric's outcome.
type MetricResult struct {
	Metric
	// Count counts scores, or, judged by testcase, decided testcases.
	Count
	// Unscored are the expected scores (testcases) that do not exist or
	// are undecided.
	Unscored int
	// PassRate is Passed over Passed and Failed; nil with none.
	PassRate *float64
	// Judged says the Metric counts towards the verdict.
	Judged bool
	// Against a baseline: BaselinePassRate and PassRate's twin on the
	// paired testcases, Difference the candidate's minus the baseline's,
	// Pairs how many testcases were paired. nil and 0 without one.
	BaselinePassRate, Difference *float64
	Pairs                        int
	// Lower and Upper are the bounds the rule judged: of the pass rate, or
	// of the difference against a baseline.
	Lower, Upper float64
	// Level is their one-sided confidence level.
	Level float64
	// Decision is Passed, Failed or Inconclusive for this Metric alone;
	// "" when it has too few scores to be judged.
	Decision string
}

// Result is a run's outcome.
type Result struct {
	Metrics []MetricResult
	Verdict string
	// Reason says why, in a sentence: the first Metric that failed, had
	// too few scores or could not be decided.
	Reason string
}

// outcome is the verdict and its reason: failed names the first Metric
// that failed, thin the first with too few scores, undecided the first
// whose bounds could not decide.
func outcome(failed, thin, undecided, unfinished string, judged int) (verdict, reason string) {
	var why []string
	switch {
	case failed != "":
		return Failed, failed
	case thin != "":
		why = append(why, "Metric "+thin+" has too few scores")
	case undecided != "":
		why = append(why, undecided)
	}
	switch {
	case unfinished != "":
		return Inconclusive, strings.Join(append(why, unfinished), ": ")
	case len(why) > 0:
		return Inconclusive, why[0]
	case judged == 0:
		return Inconclusive, "no Metric is judged: the run's Metrics are human and humanScoring is Ignore"
	}
	return Passed, "every judged Metric reached its minimum pass rate"
}

// Result judges what t counted. expected is the records the run expects
// (its Testset's testcases; judged by testcase, the testcases), at least
// those added; unfinished, when not empty, says why the run is judged
// before it finished (the timeout, a failed executor), which makes a run
// that would pass Inconclusive.
func (t *Tally) Result(expected int, unfinished string, c Criteria) Result {
	expected = max(expected, t.units(c))
	res := Result{Metrics: make([]MetricResult, len(t.metrics))}
	failed, thin, undecided, judged := "", "", "", 0
	for i, m := range t.metrics {
		r := MetricResult{Metric: m, Count: t.count(i, c), Judged: !m.Human || !c.IgnoreHuman, Level: c.level()}
		scored := r.Passed + r.Failed
		r.Unscored = expected - scored
		if scored > 0 {
			rate := float64(r.Passed) / float64(scored)
			r.PassRate = &rate
		}
		if scored > 0 && float64(scored) >= c.MinScoredRatio*float64(expected) {
			t.decide(&r, i, c)
		}
		res.Metrics[i] = r
		if !r.Judged {
			continue
		}
		judged++
		switch {
		case r.Decision == "" && thin == "":
			thin = m.Name
		case r.Decision == Failed && failed == "":
			failed = failure(r)
		case r.Decision == Inconclusive && undecided == "":
			undecided = undecidedBy(r)
		}
	}
	res.Verdict, res.Reason = outcome(failed, thin, undecided, unfinished, judged)
	return res
}

// decide applies the rule to r, the i-th Metric's counts.
func (t *Tally) decide(r *MetricResult, i int, c Criteria) {
	var threshold float64
	if c.Baseline == nil {
		threshold = r.MinPassRate
		r.Lower, r.Upper = RateBounds(r.Passed, r.Passed+r.Failed, r.Level)
	} else {
		p := t.pairs(c.Baseline, i, c.Trials)
		r.Pairs = p.N()
		if r.Pairs == 0 {
			r.Decision, r.Lower, r.Upper = Inconclusive, -1, 1
			return
		}
		cand := float64(p.Both+p.CandidateOnly) / float64(r.Pairs)
		base := float64(p.Both+p.BaselineOnly) / float64(r.Pairs)
		diff := p.Difference()
		r.BaselinePassRate, r.Difference = &base, &diff
		r.PassRate = &cand
		threshold = -c.Margin
		r.Lower, r.Upper = DiffBounds(p, r.Level)
	}
	switch {
	case c.Baseline == nil && r.Upper < threshold, c.Baseline != nil && r.Upper < 0:
		r.Decision = Failed
	case r.Lower >= threshold:
		r.Decision = Passed
	default:
		r.Decision = Inconclusive
	}
}

// failure says why r failed.
func failure(r MetricResult) string {
	switch {
	case r.Difference != nil:
		return fmt.Sprintf("Metric %s is worse than the baseline: %+.3f, at most %+.3f at the %s level",
			r.Name, *r.Difference, r.Upper, percent(r.Level))
	case r.Level == PointLevel:
		return "Metric " + r.Name + " is below its minimum pass rate"
	}
	return fmt.Sprintf("Metric %s is below its minimum pass rate %g: at most %.3f at the %s level",
		r.Name, r.MinPassRate, r.Upper, percent(r.Level))
}

// undecidedBy says why r could not be decided.
func undecidedBy(r MetricResult) string {
	switch {
	case r.Pairs == 0 && r.Difference == nil && r.Lower == -1:
		return "Metric " + r.Name + " has no testcase decided in both this run and the baseline"
	case r.Difference != nil:
		return fmt.Sprintf("Metric %s cannot be told from the baseline at the %s level: the difference %+.3f "+
			"lies in [%+.3f, %+.3f] on %d testcases", r.Name, percent(r.Level), *r.Difference, r.Lower, r.Upper, r.Pairs)
	}
	return fmt.Sprintf("Metric %s cannot be decided at the %s level: its pass rate lies in [%.3f, %.3f] "+
		"around its minimum %g", r.Name, percent(r.Level), r.Lower, r.Upper, r.MinPassRate)
}

func percent(level float64) string { return fmt.Sprintf("%g%%", level*100) }

// units is how many records, or judged by testcase, testcases, t counted.
func (t *Tally) units(c Criteria) int {
	if c.byTestcase() && !t.counted {
		return len(t.rows)
	}
	return t.records
}

// count is the i-th Metric's count: of scores, or of decided testcases.
// Counted elsewhere, each score is a testcase of one trial.
func (t *Tally) count(i int, c Criteria) Count {
	if !c.byTestcase() {
		return t.counts[i]
	}
	if t.counted {
		var out Count
		if _, pass := c.Trials.decide(1, 0); pass {
			out.Passed = t.counts[i].Passed
		}
		if decided, pass := c.Trials.decide(0, 1); decided && !pass {
			out.Failed = t.counts[i].Failed
		}
		return out
	}
	var out Count
	for _, row := range t.rows {
		switch decided, pass := c.Trials.decide(int(row[i].passed), int(row[i].failed)); {
		case decided && pass:
			out.Passed++
		case decided:
			out.Failed++
		}
	}
	return out
}

// pairs is the 2x2 table of the testcases t (under tr) and base both
// decided for the i-th Metric, paired by testcase id.
func (t *Tally) pairs(base *Baseline, i int, tr Trials) Pairs {
	var p Pairs
	for id, row := range t.cases {
		j, ok := base.Tally.cases[id]
		if !ok || i >= len(base.Tally.metrics) {
			continue
		}
		cd, cp := tr.decide(int(t.rows[row][i].passed), int(t.rows[row][i].failed))
		bd, bp := base.Trials.decide(int(base.Tally.rows[j][i].passed), int(base.Tally.rows[j][i].failed))
		switch {
		case !cd || !bd:
		case cp && bp:
			p.Both++
		case cp:
			p.CandidateOnly++
		case bp:
			p.BaselineOnly++
		default:
			p.Neither++
		}
	}
	return p
}
