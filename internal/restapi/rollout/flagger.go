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

// Package rollout serves the webhooks rollout tools call to gate a canary's
// promotion on an EvaluationRun: Flagger's confirm-promotion and rollback
// hooks.
package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/gates"
	"github.com/eval-operator/eval-operator/internal/quote"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
)

// The gate webhooks, outside the API's base path: Flagger calls them with
// its own payload, not the API's.
const (
	RouteFlagger         = tenancy.GatesPath + "flagger"
	RouteFlaggerRollback = tenancy.GatesPath + "flagger/rollback"
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

// Kinds of the objects the gates create.
const (
	kindRun     = "EvaluationRun"
	kindVersion = "SystemVersion"
)

// Flagger's metadata keys that name the release's System, and prefix the
// keys of its version's config (version.image: ... is the config's image).
const (
	metadataSystem        = "system"
	metadataVersionPrefix = "version."
)

// FlaggerPayload is what Flagger sends its webhooks.
type FlaggerPayload struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Phase     string            `json:"phase"`
	Checksum  string            `json:"checksum"`
	Metadata  map[string]string `json:"metadata"`
	// analysis marks a call of the analysis gate (analysis.go), whose run
	// records the release and revision under its own annotations.
	analysis bool
	// release is the release metadata.system names, set by check; nil
	// without one.
	release *gates.Release
}

// Flagger serves Flagger's webhooks.
type Flagger struct {
	// Cache is where a canary's run is looked up: the manager's cache.
	Cache client.Reader
	// Reader reads the template ConfigMaps, which the cache does not hold.
	Reader client.Reader
	// Client creates the runs.
	Client client.Client
	// Quotas hold each namespace to its budget of EvaluationRuns.
	Quotas *tenancy.Quotas
	Log    logr.Logger
}

// Gate answers one of Flagger's calls, body, sent with a key of secret's
// namespace: the canary's revision (its checksum) gets one EvaluationRun,
// made from the template ConfigMap named by metadata.template the first
// time any call names it. The promotion gate (rollback false) answers 200
// once the run Passed; the rollback hook (rollback true) answers 200 once it
// cannot pass. An error is the server's to answer.
func (f *Flagger) Gate(ctx context.Context, secret types.NamespacedName, body []byte, rollback bool) (apierror.Response, error) {
	var p FlaggerPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return apierror.Validation(apierror.Field{Field: apierror.BodyField, Message: "is not Flagger's webhook payload: " + err.Error()}).Response(), nil
	}
	if errs := p.check(); len(errs) > 0 {
		return apierror.Validation(errs...).Response(), nil
	}
	// The release's System is looked up in the canary's namespace, which
	// must be the key's.
	if p.Namespace != secret.Namespace {
		return apierror.New(http.StatusForbidden, apierror.CodeForbidden, fmt.Sprintf(
			"This key is namespace %s's; the canary is in %s: give its webhook a key of its own namespace",
			secret.Namespace, p.Namespace), nil).Response(), nil
	}
	run, err := f.run(ctx, p)
	if err != nil {
		return apierror.Response{}, err
	}
	return gateAnswer(run, rollback), nil
}

// check names what is missing from p, and derives its release.
func (p *FlaggerPayload) check() []apierror.Field {
	var errs []apierror.Field
	if len(validation.IsDNS1123Subdomain(p.Name)) > 0 {
		errs = append(errs, apierror.Field{Field: "name", Message: "must be the canary's name"})
	}
	if len(validation.IsDNS1123Label(p.Namespace)) > 0 {
		errs = append(errs, apierror.Field{Field: "namespace", Message: "must be the canary's namespace"})
	}
	switch {
	case p.Checksum == "":
		errs = append(errs, apierror.Field{Field: "checksum", Message: "must be the canary's revision checksum"})
	case len(p.Checksum) > maxFlaggerChecksum || !evaluationv1alpha1.ValidLineText(p.Checksum):
		errs = append(errs, apierror.Field{Field: "checksum", Message: fmt.Sprintf(
			"must be the canary's revision checksum, at most %d bytes; it %s", maxFlaggerChecksum, evaluationv1alpha1.LineTextRule)})
	}
	if len(p.Phase) > maxFlaggerPhase || !evaluationv1alpha1.ValidLineText(p.Phase) {
		errs = append(errs, apierror.Field{Field: "phase", Message: fmt.Sprintf(
			"must be the canary's phase, at most %d bytes; it %s", maxFlaggerPhase, evaluationv1alpha1.LineTextRule)})
	}
	if len(validation.IsDNS1123Subdomain(p.Metadata["template"])) > 0 {
		errs = append(errs, apierror.Field{Field: "metadata.template",
			Message: "must name the ConfigMap holding the EvaluationRun template (key " + gates.TemplateKey + ")"})
	}
	if v, ok := p.Metadata["systemVersionId"]; ok && !evaluationv1alpha1.ValidUUID(v) {
		errs = append(errs, apierror.Field{Field: "metadata.systemVersionId", Message: "must be a SystemVersion's id, " +
			"a UUID (the canary's revision is its checksum; metadata.system derives its SystemVersion)"})
	}
	return append(errs, p.checkRelease()...)
}

// checkRelease derives p's release from metadata.system, the revision (the
// checksum) and the metadata.version.* keys, into p.release.
func (p *FlaggerPayload) checkRelease() []apierror.Field {
	system, named := p.Metadata[metadataSystem]
	version := map[string]string{}
	for k, v := range p.Metadata {
		if key, ok := strings.CutPrefix(k, metadataVersionPrefix); ok {
			version[key] = v
		}
	}
	switch {
	case !named && len(version) == 0:
		return nil
	case !named:
		return []apierror.Field{{Field: "metadata." + metadataSystem,
			Message: "must name the System the metadata.version.* keys are a version of"}}
	case p.Metadata["systemVersionId"] != "":
		return []apierror.Field{{Field: "metadata.systemVersionId",
			Message: "must not be set with metadata.system, which derives the version from the release"}}
	}
	revisionKey := "checksum"
	if p.analysis {
		revisionKey = "revision"
	}
	r, errs := gates.ReleaseOf(system, revisionKey, p.Checksum, version)
	if len(errs) == 0 {
		p.release = &r
		return nil
	}
	fields := make([]apierror.Field, len(errs))
	for i, e := range errs {
		fields[i] = apierror.Field{Field: "metadata." + e.Field, Message: e.Message}
	}
	return fields
}

// FlaggerRunName is the run of one canary revision: the canary's name and
// a hash of its checksum.
func FlaggerRunName(p FlaggerPayload) string {
	sum := sha256.Sum256([]byte(p.Checksum))
	name := p.Name
	if len(name) > validation.DNS1123SubdomainMaxLength-11 {
		name = name[:validation.DNS1123SubdomainMaxLength-11]
	}
	return name + "-" + hex.EncodeToString(sum[:])[:10]
}

// run is the canary revision's run: the one that exists, or a new
// one from the template, within the namespace's budget.
func (f *Flagger) run(ctx context.Context, p FlaggerPayload) (*evaluationv1alpha1.EvaluationRun, error) {
	key := types.NamespacedName{Namespace: p.Namespace, Name: FlaggerRunName(p)}
	run := &evaluationv1alpha1.EvaluationRun{}
	err := f.Cache.Get(ctx, key, run)
	if !apierrors.IsNotFound(err) {
		return run, err
	}
	run, err = f.runFromTemplate(ctx, p, key)
	if err != nil {
		return nil, err
	}
	if p.release != nil {
		if err := f.linkVersion(ctx, p, run); err != nil {
			return nil, err
		}
	}
	settle, err := f.Quotas.Reserve(ctx, kindRun, run, false)
	if err != nil {
		return nil, err
	}
	err = f.Client.Create(ctx, run)
	settle(err == nil)
	switch {
	case apierrors.IsAlreadyExists(err):
		return run, nil // another call made it: both wait for one verdict
	case apierrors.IsInvalid(err):
		return nil, apierror.Conflict("The template %s does not make a valid EvaluationRun: %s", p.Metadata["template"],
			quote.Bounded(err.Error()))
	case err != nil:
		return nil, apierror.WriteFailed(nil, err, "creating the EvaluationRun")
	}
	f.Log.Info("Created the EvaluationRun of a Flagger canary", "namespace", p.Namespace, "name", key.Name,
		"canary", p.Name, "checksum", quote.Prefix(p.Checksum))
	return run, nil
}

// linkVersion upserts p's release's SystemVersion, within the namespace's
// budget, and names it in run.
func (f *Flagger) linkVersion(ctx context.Context, p FlaggerPayload, run *evaluationv1alpha1.EvaluationRun) error {
	create := func(ctx context.Context, v *evaluationv1alpha1.SystemVersion) error {
		settle, err := f.Quotas.Reserve(ctx, kindVersion, v, false)
		if err != nil {
			return err
		}
		err = f.Client.Create(ctx, v)
		settle(err == nil)
		return err
	}
	v, created, err := gates.UpsertVersion(ctx, f.Cache, create, p.Namespace, *p.release)
	switch {
	case errors.Is(err, gates.ErrSystemNotFound), errors.Is(err, gates.ErrVersionNameTaken):
		return apierror.Conflict("%s", err.Error())
	case apierrors.IsInvalid(err):
		return apierror.Conflict("The release's SystemVersion is not valid: %s", quote.Bounded(err.Error()))
	case err != nil:
		return apierror.WriteFailed(nil, err, "upserting the release's SystemVersion")
	}
	if created {
		f.Log.Info("Created the SystemVersion of a release", "namespace", p.Namespace, "name", v.Name,
			"system", p.release.System)
	}
	run.Spec.SystemVersionRef, run.Spec.SystemVersionID = &evaluationv1alpha1.ObjectRef{Name: v.Name}, ""
	return nil
}

// runFromTemplate is the run made from the ConfigMap p names.
func (f *Flagger) runFromTemplate(ctx context.Context, p FlaggerPayload, key types.NamespacedName) (
	*evaluationv1alpha1.EvaluationRun, error) {
	name := p.Metadata["template"]
	cm := &corev1.ConfigMap{}
	err := f.Reader.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, apierror.Conflict("The template ConfigMap %s does not exist in %s", name, p.Namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	data, ok := cm.Data[gates.TemplateKey]
	if !ok {
		return nil, apierror.Conflict("The ConfigMap %s has no key %s", name, gates.TemplateKey)
	}
	run, err := gates.FromTemplate([]byte(data), p.Namespace)
	if errors.Is(err, gates.ErrNotEvaluationRun) {
		return nil, apierror.Conflict("The ConfigMap %s's %s: %s", name, gates.TemplateKey, err.Error())
	}
	if err != nil {
		return nil, err
	}
	run.Name = key.Name
	if run.Annotations == nil {
		run.Annotations = map[string]string{}
	}
	release, revision := FlaggerCanaryAnnotation, FlaggerChecksumAnnotation
	if p.analysis {
		release, revision = AnalysisReleaseAnnotation, AnalysisRevisionAnnotation
	}
	run.Annotations[release] = p.Name
	run.Annotations[revision] = p.Checksum
	// The release's labels, for the run gauges: a value that is no label
	// value stays in its annotation only.
	if run.Labels == nil {
		run.Labels = map[string]string{}
	}
	for label, v := range map[string]string{evaluationv1alpha1.CanaryLabel: p.Name, evaluationv1alpha1.RevisionLabel: p.Checksum} {
		if len(validation.IsValidLabelValue(v)) == 0 {
			run.Labels[label] = v
		}
	}
	if v := p.Metadata["systemVersionId"]; v != "" {
		run.Spec.SystemVersionID = v
	}
	return run, nil
}

// gateAnswer is the answer of the promotion gate or the rollback hook on run.
func gateAnswer(run *evaluationv1alpha1.EvaluationRun, rollback bool) apierror.Response {
	verdict, why := verdictOf(run)
	ok := verdict == "Passed"
	if rollback {
		ok = verdict != "" && verdict != "Passed"
	}
	details := map[string]any{"evaluationRun": run.Name, "namespace": run.Namespace, "verdict": verdict}
	if ok {
		return apierror.Response{Status: http.StatusOK, Body: details}
	}
	where := fmt.Sprintf("evaluationrun/%s in %s", run.Name, run.Namespace)
	var e *apierror.Error
	switch verdict {
	case "":
		e = apierror.New(http.StatusConflict, CodeEvaluationPending, where+" has no verdict yet: "+why, details)
	case "Passed":
		e = apierror.New(http.StatusConflict, CodeEvaluationPassed, where+" Passed: no rollback", details)
	default:
		e = apierror.New(http.StatusPreconditionFailed, CodeEvaluationNotPassed, where+" is "+verdict+": "+why, details)
	}
	e.Header = http.Header{apierror.ShouldRetryHeader: {"false"}}
	return e.Response()
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
