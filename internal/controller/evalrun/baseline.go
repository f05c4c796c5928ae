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
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

// baseline is the baseline run of s's run for metrics (named by runRef, or
// resolved from the production version of the run's System, and recorded
// in status.baselineRun), its scores read from the service (a standalone
// run asking for one is refused before it is created: Unsupported). A
// baseline without a verdict yet is waited for (o, within e's timeout);
// one that cannot be compared, or a production version without a Passed
// run, comes back as why, a sentence: e is then Inconclusive.
func (r *Reconciler) baseline(ctx context.Context, s *scope, run remote.Run,
	metrics []verdict.Metric) (base *verdict.Baseline, why string, o *kit.Outcome, err error) {
	e, conn := s.Obj, s.Conn
	name, why, err := r.baselineName(ctx, e)
	if why != "" || err != nil {
		return nil, why, nil, err
	}
	e.Status.BaselineRun = name
	if name == e.Name {
		return nil, "the baseline is this run itself", nil, nil
	}
	b := &v1alpha1.EvaluationRun{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: name}, b); {
	case apierrors.IsNotFound(err):
		wait := kit.Progressing(v1alpha1.ReasonRunning, "waiting for baseline run "+name+", which does not exist")
		return nil, "", &wait, nil
	case err != nil:
		return nil, "", nil, fmt.Errorf("reading baseline run %s: %w", name, err)
	case b.Status.Verdict == "":
		wait := kit.Progressing(v1alpha1.ReasonRunning, "waiting for baseline run "+name+" to be judged")
		return nil, "", &wait, nil
	case b.RecordedID() == "" || b.Status.Service != conn.Service:
		return nil, fmt.Sprintf("baseline run %s has no run on this run's service %s", name, conn.Service), nil, nil
	}
	bc := conn.Run(b)
	brun, err := bc.Get(ctx, nil, nil)
	if err != nil {
		return nil, "", nil, fmt.Errorf("reading baseline run %s: %w", name, err)
	}
	if brun.TestsetID != run.TestsetID {
		return nil, fmt.Sprintf("baseline run %s ran Testset %q, this run %q: only runs of one Testset compare",
			name, brun.TestsetID, run.TestsetID), nil, nil
	}
	tally, err := bc.Tally(ctx, brun, baselineMetrics(metrics, brun))
	if err != nil {
		return nil, "", nil, fmt.Errorf("reading the scores of baseline run %s: %w", name, err)
	}
	return &verdict.Baseline{Tally: tally, Trials: criteriaOf(b).Trials}, "", nil, nil
}

// baselineMetrics are metrics as the baseline run names them: the same
// remote ids, with the Metric versions the baseline ran.
func baselineMetrics(metrics []verdict.Metric, brun remote.Run) []verdict.Metric {
	out := slices.Clone(metrics)
	for i := range out {
		out[i].VersionID = ""
		if j := slices.Index(brun.MetricIDs, out[i].ID); j >= 0 && j < len(brun.MetricVersionIDs) {
			out[i].VersionID = brun.MetricVersionIDs[j]
		}
	}
	return out
}

// baselineName is the name of e's baseline run: runRef's, or the most
// recent Passed run of the production version of e's System; why says
// there is none.
func (r *Reconciler) baselineName(ctx context.Context, e *v1alpha1.EvaluationRun) (name, why string, err error) {
	bl := e.Spec.PassCriteria.Baseline
	if bl.RunRef != nil {
		return bl.RunRef.Name, "", nil
	}
	sys, _, why, err := r.systemOf(ctx, e)
	if why != "" || err != nil {
		return "", "no production baseline: " + why, err
	}
	production := sys.Status.ProductionVersionID
	if production == "" {
		return "", "no production baseline: System " + sys.Name + " has no production version", nil
	}
	l := &v1alpha1.EvaluationRunList{}
	if err := r.Client.List(ctx, l, client.InNamespace(e.Namespace),
		client.MatchingFields{passedVersionIndex: production}); err != nil {
		return "", "", fmt.Errorf("listing the Passed runs of production version %s: %w", production, err)
	}
	b := latestPassed(l.Items, e, production)
	if b == nil {
		return "", fmt.Sprintf("no production baseline: no Passed run of System %s's production version %s "+
			"on this run's Testset and service in the namespace", sys.Name, production), nil
	}
	return b.Name, "", nil
}

// latestPassed is the run of runs that judged version versionID most
// recently with a Passed verdict, on e's Testset and service (e itself
// left out), or nil: the latest completion, then the latest created, then
// the first by name.
func latestPassed(runs []v1alpha1.EvaluationRun, e *v1alpha1.EvaluationRun, versionID string) *v1alpha1.EvaluationRun {
	var best *v1alpha1.EvaluationRun
	for i := range runs {
		b := &runs[i]
		if b.Name == e.Name || b.Status.Verdict != verdict.Passed || b.Status.SystemVersionID != versionID ||
			b.RecordedID() == "" || b.Status.Service != e.Status.Service || !sameTestset(&b.Spec, &e.Spec) {
			continue
		}
		if best == nil || completedAfter(b, best) {
			best = b
		}
	}
	return best
}

// completedAfter reports whether a was judged after b.
func completedAfter(a, b *v1alpha1.EvaluationRun) bool {
	at, bt := a.Status.CompletionTime, b.Status.CompletionTime
	switch {
	case at != nil && bt != nil && !at.Equal(bt):
		return bt.Before(at)
	case (at == nil) != (bt == nil):
		return at != nil
	case !a.CreationTimestamp.Equal(&b.CreationTimestamp):
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name < b.Name
}

// sameTestset reports whether two runs name the same Testset: the same
// Testset of the namespace, or the same remote id. (The baseline's remote
// Testset is checked against the run's once read.)
func sameTestset(a, b *v1alpha1.EvaluationRunSpec) bool {
	if a.TestsetRef != nil || b.TestsetRef != nil {
		return a.TestsetRef != nil && b.TestsetRef != nil && a.TestsetRef.Name == b.TestsetRef.Name
	}
	return a.TestsetID != "" && a.TestsetID == b.TestsetID
}
