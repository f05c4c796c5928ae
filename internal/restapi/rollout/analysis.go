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

package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
)

// RouteAnalysis is the gate of Argo Rollouts' web metric provider (and of
// Kargo, whose verification runs Argo Rollouts' AnalysisTemplates).
const RouteAnalysis = tenancy.GatesPath + "analysis"

// Annotations on the runs the analysis gate creates.
const (
	AnalysisReleaseAnnotation  = evaluationv1alpha1.Prefix + "analysis-release"
	AnalysisRevisionAnnotation = evaluationv1alpha1.Prefix + "analysis-revision"
)

// analysisRequest is the web metric's jsonBody: the release (a Rollout's or
// a Kargo Stage's name), its revision (e.g. the pod-template-hash or the
// Freight), the template ConfigMap, and optionally the System the release
// is a version of with the rest of its version's config (e.g. its images),
// or the id of a version kept elsewhere.
type analysisRequest struct {
	Name            string            `json:"name"`
	Revision        string            `json:"revision"`
	Template        string            `json:"template"`
	System          string            `json:"system,omitempty"`
	Version         map[string]string `json:"version,omitempty"`
	SystemVersionID string            `json:"systemVersionId,omitempty"`
}

// analysisMetric is one Metric of the answer: its pass rate, and against a
// baseline the baseline's, the difference and the bounds.
type analysisMetric struct {
	Name             string   `json:"name"`
	PassRate         *float64 `json:"passRate,omitempty"`
	BaselinePassRate *float64 `json:"baselinePassRate,omitempty"`
	Difference       *float64 `json:"difference,omitempty"`
	LowerBound       *float64 `json:"lowerBound,omitempty"`
	UpperBound       *float64 `json:"upperBound,omitempty"`
}

// Analysis answers one call of the web metric, body, sent with a key of
// secret's namespace: the release's revision gets one EvaluationRun from
// the template in that namespace (as Flagger's gate makes them), and the
// answer is 200 with its verdict once it has one, Passed, Failed or
// Inconclusive, for the AnalysisTemplate's successCondition and
// failureCondition to read ({$.verdict}); before that a 409, which the web
// provider counts as a measurement error and measures again after its
// interval (within consecutiveErrorLimit). An error is the server's to
// answer.
func (f *Flagger) Analysis(ctx context.Context, secret types.NamespacedName, body []byte) (apierror.Response, error) {
	var req analysisRequest
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		return apierror.Validation(apierror.Field{Field: apierror.BodyField, Message: "is not the analysis gate's request " +
			"{name, revision, template, system, version, systemVersionId}: " + err.Error()}).Response(), nil
	}
	p := FlaggerPayload{Name: req.Name, Namespace: secret.Namespace, Checksum: req.Revision,
		Metadata: map[string]string{"template": req.Template}, analysis: true}
	if req.SystemVersionID != "" {
		p.Metadata["systemVersionId"] = req.SystemVersionID
	}
	if req.System != "" {
		p.Metadata[metadataSystem] = req.System
	}
	for k, v := range req.Version {
		p.Metadata[metadataVersionPrefix+k] = v
	}
	if errs := p.check(); len(errs) > 0 {
		for i := range errs { // named as this request names them
			errs[i].Field = strings.NewReplacer("checksum", "revision", "metadata.", "").Replace(errs[i].Field)
			errs[i].Message = strings.ReplaceAll(errs[i].Message, "canary's revision checksum", "release's revision")
		}
		return apierror.Validation(errs...).Response(), nil
	}
	run, err := f.run(ctx, p)
	if err != nil {
		return apierror.Response{}, err
	}
	return analysisAnswer(run), nil
}

// analysisAnswer is the web metric's answer on run.
func analysisAnswer(run *evaluationv1alpha1.EvaluationRun) apierror.Response {
	verdict, why := verdictOf(run)
	details := map[string]any{"evaluationRun": run.Name, "namespace": run.Namespace, "verdict": verdict}
	if verdict == "" {
		e := apierror.New(http.StatusConflict, CodeEvaluationPending,
			"evaluationrun/"+run.Name+" in "+run.Namespace+" has no verdict yet: "+why, details)
		e.Header = http.Header{apierror.ShouldRetryHeader: {"false"}}
		return e.Response()
	}
	metrics := make([]analysisMetric, 0, len(run.Status.Metrics))
	for _, m := range run.Status.Metrics {
		if m.Judged {
			metrics = append(metrics, analysisMetric{Name: m.Name, PassRate: m.PassRate, BaselinePassRate: m.BaselinePassRate,
				Difference: m.Difference, LowerBound: m.LowerBound, UpperBound: m.UpperBound})
		}
	}
	details["reason"], details["metrics"] = why, metrics
	return apierror.Response{Status: http.StatusOK, Body: details}
}
