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

package restapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/gates"
	"github.com/eval-operator/eval-operator/internal/quote"
)

// The gate webhooks, outside the API's base path: Flagger calls them with
// its own payload, not the API's.
const (
	gatesPath            = "/gates/v1/"
	routeFlagger         = gatesPath + "flagger"
	routeFlaggerRollback = gatesPath + "flagger/rollback"
)

// Annotations on the runs the Flagger gate creates.
const (
	FlaggerCanaryAnnotation   = evaluationv1alpha1.Prefix + "flagger-canary"
	FlaggerChecksumAnnotation = evaluationv1alpha1.Prefix + "flagger-checksum"
)

// Codes of the Flagger gate's refusals: Flagger reads any answer above 202
// as "not yet" (confirm-promotion) or "no rollback" (rollback), and logs
// the message.
const (
	// CodeEvaluationPending: the run has no verdict yet.
	CodeEvaluationPending = "EVALUATION_PENDING"
	// CodeEvaluationNotPassed: the run is Failed or Inconclusive, or stalled.
	CodeEvaluationNotPassed = "EVALUATION_NOT_PASSED"
	// CodeEvaluationPassed: the run Passed (the rollback hook's refusal).
	CodeEvaluationPassed = "EVALUATION_PASSED"
)

// Bounds of Flagger's payload: its checksum is a hash of the canary's
// revision (Flagger's own are a few bytes) kept whole in the run's
// annotation; its phase is one of Flagger's phase names.
const (
	maxFlaggerChecksum = 128
	maxFlaggerPhase    = 64
)

// flaggerPayload is what Flagger sends its webhooks.
type flaggerPayload struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Phase     string            `json:"phase"`
	Checksum  string            `json:"checksum"`
	Metadata  map[string]string `json:"metadata"`
}

// runEndpoint is the budget's and the watches' view of the runs this server
// creates (through the runs API and the Flagger gate), which are read back.
var runEndpoint = &endpoint{kind: runKind, local: &localCreate{readable: true},
	newObject: func() evaluationv1alpha1.Object { return &evaluationv1alpha1.EvaluationRun{} }}

// flaggerGate serves Flagger's webhooks: the canary's revision (its
// checksum) gets one EvaluationRun, made from the template ConfigMap named
// by metadata.template the first time any call names it. The promotion
// gate (rollback false) answers 200 once the run Passed; the rollback hook
// (rollback true) answers 200 once it cannot pass.
func (s *Server) flaggerGate(rollback bool) func(http.ResponseWriter, *http.Request) response {
	return func(w http.ResponseWriter, r *http.Request) response {
		secret, err := s.authenticate(r)
		if err != nil {
			return s.failure(runEndpoint.kind, err)
		}
		body, err := s.readBody(w, r)
		if err != nil {
			return s.failure(runEndpoint.kind, err)
		}
		var p flaggerPayload
		if err := json.Unmarshal(body, &p); err != nil {
			return validationError(fieldError{Field: bodyField, Message: "is not Flagger's webhook payload: " + err.Error()}).response()
		}
		if errs := p.check(); len(errs) > 0 {
			return validationError(errs...).response()
		}
		if p.Namespace != secret.Namespace {
			return newAPIError(http.StatusForbidden, CodeForbidden, fmt.Sprintf(
				"This key is namespace %s's; the canary is in %s: give its webhook a key of its own namespace",
				secret.Namespace, p.Namespace), nil).response()
		}
		run, err := s.flaggerRun(r.Context(), p)
		if err != nil {
			return s.failure(runEndpoint.kind, err)
		}
		return gateAnswer(run, rollback)
	}
}

// check names what is missing from p.
func (p flaggerPayload) check() []fieldError {
	var errs []fieldError
	if len(validation.IsDNS1123Subdomain(p.Name)) > 0 {
		errs = append(errs, fieldError{Field: "name", Message: "must be the canary's name"})
	}
	if len(validation.IsDNS1123Label(p.Namespace)) > 0 {
		errs = append(errs, fieldError{Field: "namespace", Message: "must be the canary's namespace"})
	}
	switch {
	case p.Checksum == "":
		errs = append(errs, fieldError{Field: "checksum", Message: "must be the canary's revision checksum"})
	case len(p.Checksum) > maxFlaggerChecksum || !evaluationv1alpha1.ValidLineText(p.Checksum):
		errs = append(errs, fieldError{Field: "checksum", Message: fmt.Sprintf(
			"must be the canary's revision checksum, at most %d bytes; it %s", maxFlaggerChecksum, evaluationv1alpha1.LineTextRule)})
	}
	if len(p.Phase) > maxFlaggerPhase || !evaluationv1alpha1.ValidLineText(p.Phase) {
		errs = append(errs, fieldError{Field: "phase", Message: fmt.Sprintf(
			"must be the canary's phase, at most %d bytes; it %s", maxFlaggerPhase, evaluationv1alpha1.LineTextRule)})
	}
	if len(validation.IsDNS1123Subdomain(p.Metadata["template"])) > 0 {
		errs = append(errs, fieldError{Field: "metadata.template",
			Message: "must name the ConfigMap holding the EvaluationRun template (key " + gates.TemplateKey + ")"})
	}
	if v, ok := p.Metadata["systemVersionId"]; ok && !evaluationv1alpha1.ValidResourceID(v) {
		errs = append(errs, fieldError{Field: "metadata.systemVersionId", Message: fmt.Sprintf(
			"must be the version's id: 1 to %d letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
			evaluationv1alpha1.ResourceIDMaxLength)})
	}
	return errs
}

// flaggerRunName is the run of one canary revision: the canary's name and
// a hash of its checksum.
func flaggerRunName(p flaggerPayload) string {
	sum := sha256.Sum256([]byte(p.Checksum))
	name := p.Name
	if len(name) > validation.DNS1123SubdomainMaxLength-11 {
		name = name[:validation.DNS1123SubdomainMaxLength-11]
	}
	return name + "-" + hex.EncodeToString(sum[:])[:10]
}

// flaggerRun is the canary revision's run: the one that exists, or a new
// one from the template, within the namespace's budget.
func (s *Server) flaggerRun(ctx context.Context, p flaggerPayload) (*evaluationv1alpha1.EvaluationRun, error) {
	key := types.NamespacedName{Namespace: p.Namespace, Name: flaggerRunName(p)}
	run := &evaluationv1alpha1.EvaluationRun{}
	err := s.opts.Cache.Get(ctx, key, run)
	if !apierrors.IsNotFound(err) {
		return run, err
	}
	run, err = s.runFromTemplate(ctx, p, key)
	if err != nil {
		return nil, err
	}
	settle, err := s.checkBudget(ctx, runEndpoint, parsedRequest{obj: run})
	if err != nil {
		return nil, err
	}
	err = s.opts.Client.Create(ctx, run)
	settle(err == nil)
	switch {
	case apierrors.IsAlreadyExists(err):
		return run, nil // another call made it: both wait for one verdict
	case apierrors.IsInvalid(err):
		return nil, conflict("The template %s does not make a valid EvaluationRun: %s", p.Metadata["template"],
			quote.Bounded(err.Error()))
	case err != nil:
		return nil, writeError(nil, err, "creating the EvaluationRun")
	}
	s.log.Info("Created the EvaluationRun of a Flagger canary", "namespace", p.Namespace, "name", key.Name,
		"canary", p.Name, "checksum", quote.Prefix(p.Checksum))
	return run, nil
}

// runFromTemplate is the run made from the ConfigMap p names.
func (s *Server) runFromTemplate(ctx context.Context, p flaggerPayload, key types.NamespacedName) (
	*evaluationv1alpha1.EvaluationRun, error) {
	name := p.Metadata["template"]
	cm := &corev1.ConfigMap{}
	err := s.opts.Reader.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, conflict("The template ConfigMap %s does not exist in %s", name, p.Namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	data, ok := cm.Data[gates.TemplateKey]
	if !ok {
		return nil, conflict("The ConfigMap %s has no key %s", name, gates.TemplateKey)
	}
	run, err := gates.FromTemplate([]byte(data), p.Namespace)
	if errors.Is(err, gates.ErrNotEvaluationRun) {
		return nil, conflict("The ConfigMap %s's %s: %s", name, gates.TemplateKey, err.Error())
	}
	if err != nil {
		return nil, err
	}
	run.Name = key.Name
	if run.Annotations == nil {
		run.Annotations = map[string]string{}
	}
	run.Annotations[FlaggerCanaryAnnotation] = p.Name
	run.Annotations[FlaggerChecksumAnnotation] = p.Checksum
	// The release's labels, for the run gauges: the canary's name is a DNS
	// label; a checksum that is no label value stays in its annotation only.
	if run.Labels == nil {
		run.Labels = map[string]string{}
	}
	run.Labels[evaluationv1alpha1.CanaryLabel] = p.Name
	if len(validation.IsValidLabelValue(p.Checksum)) == 0 {
		run.Labels[evaluationv1alpha1.RevisionLabel] = p.Checksum
	}
	if v := p.Metadata["systemVersionId"]; v != "" {
		run.Spec.SystemVersionID = v
	}
	return run, nil
}

// gateAnswer is the answer of the promotion gate or the rollback hook on run.
func gateAnswer(run *evaluationv1alpha1.EvaluationRun, rollback bool) response {
	verdict, why := verdictOf(run)
	ok := verdict == "Passed"
	if rollback {
		ok = verdict != "" && verdict != "Passed"
	}
	details := map[string]any{"evaluationRun": run.Name, "namespace": run.Namespace, "verdict": verdict}
	if ok {
		return response{status: http.StatusOK, body: details}
	}
	where := fmt.Sprintf("evaluationrun/%s in %s", run.Name, run.Namespace)
	var e *apiError
	switch verdict {
	case "":
		e = newAPIError(http.StatusConflict, CodeEvaluationPending, where+" has no verdict yet: "+why, details)
	case "Passed":
		e = newAPIError(http.StatusConflict, CodeEvaluationPassed, where+" Passed: no rollback", details)
	default:
		e = newAPIError(http.StatusPreconditionFailed, CodeEvaluationNotPassed, where+" is "+verdict+": "+why, details)
	}
	e.header = http.Header{ShouldRetryHeader: {"false"}}
	return e.response()
}

// verdictOf is run's verdict and why; a run stalled for a person counts as
// Inconclusive (it will not get a verdict by itself), one without a verdict
// as "" with its Ready message.
func verdictOf(run *evaluationv1alpha1.EvaluationRun) (verdict, why string) {
	if v := run.Status.Verdict; v != "" {
		if c := meta.FindStatusCondition(run.Status.Conditions, evaluationv1alpha1.ConditionPassed); c != nil {
			return string(v), c.Message
		}
		return string(v), ""
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, evaluationv1alpha1.ConditionStalled); c != nil &&
		c.Status == metav1.ConditionTrue {
		return "Inconclusive", "it needs a person: " + c.Reason + ": " + c.Message
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, evaluationv1alpha1.ConditionReady); c != nil {
		return "", c.Reason + ": " + c.Message
	}
	return "", "waiting for the operator"
}
