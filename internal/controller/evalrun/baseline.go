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

// baseline is the baseline run of s's run for metrics, its scores read
// from the service (a standalone run asking for one is refused before it is
// created: Unsupported). A baseline without a verdict yet is waited for (o, within e's
// timeout); one that cannot be compared comes back as why, a sentence:
// e is then Inconclusive.
func (r *Reconciler) baseline(ctx context.Context, s *scope, run remote.Run,
	metrics []verdict.Metric) (base *verdict.Baseline, why string, o *kit.Outcome, err error) {
	e, conn := s.Obj, s.Conn
	name := e.Spec.PassCriteria.Baseline.RunRef.Name
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
