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
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/quote"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

// refs are a run's Testset and Metrics, resolved to their remote ids.
type refs struct {
	testsetID string
	// testcases are the Testset's testcases, when it is a Testset of the
	// namespace: the records a standalone run expects.
	testcases *int
	// metrics are the Metrics of metricRefs, as the verdict needs them;
	// metricIDs those of spec.metricIds, read from the service to judge.
	metrics   []verdict.Metric
	metricIDs []string
	// projects are the projects of the Testset and Metrics named by
	// reference, for the check of the run's projectId (owned).
	projects []string
	// missing say which of them the run lost after it was created, each in
	// a sentence: the run is judged without them.
	missing []string
	// systemVersionID is the version the run judges (spec.systemVersionId,
	// or its systemVersionRef's id), systemID that version's System when
	// the cluster knows it.
	systemVersionID, systemID string
}

// resolve reads the run's Testset and Metrics from the cluster. Before the
// run exists (running false), those that do not exist or are not Ready yet
// come back, all of them, as the outcome to wait with: nothing is called
// until all are. Once it exists, such an object neither blocks nor resets
// the run: it is left out and named in missing, and the run is judged
// without it.
func (r *Reconciler) resolve(ctx context.Context, e *v1alpha1.EvaluationRun, running bool) (refs, *kit.Outcome, error) {
	out := refs{testsetID: string(e.Spec.TestsetID), systemVersionID: e.Spec.SystemVersionID}
	for _, id := range e.Spec.MetricIDs {
		out.metricIDs = append(out.metricIDs, string(id))
	}
	var unmet []string
	if ref := e.Spec.TestsetRef; ref != nil {
		t := &v1alpha1.Testset{}
		why, err := r.unusable(ctx, e, "Testset", ref.Name, t, running)
		switch {
		case err != nil:
			return refs{}, nil, err
		case why != "":
			unmet = append(unmet, why)
		default:
			out.testsetID = t.RecordedID()
			out.projects = append(out.projects, string(t.Spec.ProjectID))
			n := int(t.Status.Testcases)
			out.testcases = &n
		}
	}
	for _, ref := range e.Spec.MetricRefs {
		m := &v1alpha1.Metric{}
		why, err := r.unusable(ctx, e, "Metric", ref.Name, m, running)
		if err == nil && why == "" && m.Spec.OutputType != verdict.Boolean && m.Status.PassingThreshold == nil {
			why = fmt.Sprintf("Metric %s has no passingThreshold in its status", ref.Name)
		}
		switch {
		case err != nil:
			return refs{}, nil, err
		case why != "":
			unmet = append(unmet, why)
		default:
			out.metrics = append(out.metrics, remote.JudgingOf(m))
			out.projects = append(out.projects, string(m.Spec.ProjectID))
		}
	}
	if err := r.version(ctx, e, running, &out, &unmet); err != nil {
		return refs{}, nil, err
	}
	if !running && len(unmet) > 0 {
		o := kit.Progressing(v1alpha1.ReasonReferencesNotReady, waitingFor(unmet))
		return refs{}, &o, nil
	}
	out.missing = unmet
	return out, nil, nil
}

// version reads the run's systemVersionRef into out, or adds to unmet why
// the run cannot use it yet. Only the create sends the version: once the
// run exists (running), its SystemVersion no longer matters to it.
func (r *Reconciler) version(ctx context.Context, e *v1alpha1.EvaluationRun, running bool, out *refs, unmet *[]string) error {
	ref := e.Spec.SystemVersionRef
	if ref == nil || running {
		return nil
	}
	v := &v1alpha1.SystemVersion{}
	why, err := r.unusable(ctx, e, "SystemVersion", ref.Name, v, false)
	switch {
	case err != nil:
		return err
	case why != "":
		*unmet = append(*unmet, why)
	default:
		out.systemVersionID, out.systemID = v.RecordedID(), v.Status.SystemID
	}
	return nil
}

// maxUnmet is how many unmet references a waiting run names: a run may
// name 50 Metrics, and its message is read in a terminal.
const maxUnmet = 10

// waitingFor is the message of a run waiting for its references: each
// unmet one in its sentence, at most maxUnmet, then how many more.
func waitingFor(unmet []string) string {
	if len(unmet) <= maxUnmet {
		return strings.Join(unmet, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(unmet[:maxUnmet], "; "), len(unmet)-maxUnmet)
}

// maxReason is how many bytes of a referenced object's own Ready message a
// run quotes: enough to say why, and ten of them still fit a terminal.
const maxReason = 160

// notReady says why obj of kind name is not Ready, with its own Ready
// reason and message when it has them, so the run's reader need not look
// up each object.
func notReady(kind, name string, obj remoteObject) string {
	why := fmt.Sprintf("%s %s is not Ready", kind, name)
	c := meta.FindStatusCondition(*obj.GetConditions(), v1alpha1.ConditionReady)
	switch {
	case c == nil || c.Status == metav1.ConditionTrue:
		return why
	case c.Message == "":
		return fmt.Sprintf("%s (%s)", why, c.Reason)
	}
	return fmt.Sprintf("%s (%s: %s)", why, c.Reason, quote.Cut(c.Message, maxReason))
}

// remoteObject is a Metric, a Testset or a SystemVersion.
type remoteObject interface {
	v1alpha1.Object
	RecordedID() string
}

// unusable reads the object kind name of e's namespace into obj and says
// why the run cannot use it, or "" when it can: before the run exists
// (running false) it must exist, be Ready and have a remote id; after, it
// must still exist, not be being deleted, and have a remote id.
func (r *Reconciler) unusable(ctx context.Context, e *v1alpha1.EvaluationRun, kind, name string, obj remoteObject,
	running bool) (string, error) {
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: e.Namespace, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err) && running:
		return fmt.Sprintf("%s %s was deleted after the run was created", kind, name), nil
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("%s %s not found", kind, name), nil
	case err != nil:
		return "", fmt.Errorf("reading %s %s: %w", kind, name, err)
	case running && !obj.GetDeletionTimestamp().IsZero():
		return fmt.Sprintf("%s %s is being deleted after the run was created", kind, name), nil
	case running && obj.RecordedID() == "":
		return fmt.Sprintf("%s %s has no remote id since the run was created", kind, name), nil
	case !running && (!meta.IsStatusConditionTrue(*obj.GetConditions(), v1alpha1.ConditionReady) || obj.RecordedID() == ""):
		return notReady(kind, name, obj), nil
	}
	return "", nil
}

// request is the run to create.
func (f refs) request(e *v1alpha1.EvaluationRun) remote.RunRequest {
	ids := make([]string, 0, len(f.metrics)+len(f.metricIDs))
	for _, m := range f.metrics {
		ids = append(ids, m.ID)
	}
	return remote.RunRequest{ProjectID: e.Spec.ProjectID, TestsetID: f.testsetID,
		SystemVersionID: f.systemVersionID, MetricIDs: append(ids, f.metricIDs...), Testcases: f.testcases}
}

// judged are the run's Metrics as the verdict judges them: those of
// metricRefs from the cluster, those of metricIds read from the service;
// each with its minimum pass rate and the version id the run gave it.
func (f refs) judged(ctx context.Context, c remote.RunClient, e *v1alpha1.EvaluationRun, run remote.Run) (
	[]verdict.Metric, error) {
	out := append([]verdict.Metric(nil), f.metrics...)
	// Read at once rather than one after another: a run names up to 50.
	read := make([]verdict.Metric, len(f.metricIDs))
	errs := make([]error, len(f.metricIDs))
	var wg sync.WaitGroup
	for i, id := range f.metricIDs {
		wg.Go(func() {
			m, err := c.Metric(ctx, id)
			read[i], errs[i] = m.Judging(), err
			read[i].Name = id
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out = append(out, read...)
	for i := range out {
		out[i].MinPassRate = minPassRate(e, out[i].Name, out[i].ID)
		if j := slices.Index(run.MetricIDs, out[i].ID); j >= 0 && j < len(run.MetricVersionIDs) {
			out[i].VersionID = run.MetricVersionIDs[j]
		}
	}
	return out, nil
}
