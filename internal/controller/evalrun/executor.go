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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/executorpolicy"
	"github.com/eval-operator/eval-operator/internal/quote"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create

// The environment of the executor's containers.
const (
	EnvAPIURL    = "EVAL_API_URL"
	EnvAPIKey    = "EVAL_API_KEY" //nolint:gosec // a variable's name; its value is a secretKeyRef
	EnvRunID     = "EVAL_RUN_ID"
	EnvProjectID = "EVAL_PROJECT_ID"
	EnvTestsetID = "EVAL_TESTSET_ID"
)

// ExecutorLabel marks an executor Job and its Pods with their job's name;
// the manager caches only the Jobs that carry it.
const ExecutorLabel = v1alpha1.Prefix + "executor"

// placeholderRunID stands for the run's id in the dry run made before the
// run exists.
const placeholderRunID = "pending"

// executorEnv is what the executor is told of its run.
type executorEnv struct {
	url, runID, projectID, testsetID string
	// secret and key hold the run's API key.
	secret, key string
}

// jobName is the executor Job's name: the run's, when it fits in a label
// value (the Job controller labels the Job's Pods with it), else its first
// 52 characters and a hash of the whole.
func jobName(run string) string {
	if len(run) <= 63 {
		return run
	}
	sum := sha256.Sum256([]byte(run))
	return run[:52] + "-" + hex.EncodeToString(sum[:])[:10]
}

// executorJob is the Job that runs e's executor with env. It runs once:
// a second attempt would write the run's records twice, so the Job has no
// retries and its Pods restart Never; it ends with the run's timeout.
func executorJob(e *v1alpha1.EvaluationRun, env executorEnv, tmpl corev1.PodTemplateSpec) *batchv1.Job {
	name := jobName(e.Name)
	tmpl.Labels = mergeLabels(tmpl.Labels, name)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	vars := []corev1.EnvVar{
		{Name: EnvAPIURL, Value: env.url},
		{Name: EnvAPIKey, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: env.secret}, Key: env.key}}},
		{Name: EnvRunID, Value: env.runID},
		{Name: EnvProjectID, Value: env.projectID},
		{Name: EnvTestsetID, Value: env.testsetID},
	}
	for i := range tmpl.Spec.Containers {
		c := &tmpl.Spec.Containers[i]
		c.Env = append(slices.DeleteFunc(c.Env, func(v corev1.EnvVar) bool {
			return slices.ContainsFunc(vars, func(o corev1.EnvVar) bool { return o.Name == v.Name })
		}), vars...)
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: e.Namespace, Labels: mergeLabels(nil, name),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(e,
				v1alpha1.GroupVersion.WithKind("EvaluationRun"))},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To(int64(timeoutOf(e) / time.Second)),
			Template:              tmpl,
		},
	}
}

// mergeLabels is in with the executor label set to name.
func mergeLabels(in map[string]string, name string) map[string]string {
	out := maps.Clone(in)
	if out == nil {
		out = map[string]string{}
	}
	out[ExecutorLabel] = name
	return out
}

// envOf is the executor's environment on the run's service for run id, or the outcome
// to stop at when the Pod could not call the service: its URL is unknown
// (a standalone service without --serve-api-url), or the run's key is not
// in a Secret of its own namespace (a Pod reads only those, and a
// ClusterEvaluationService's own key is never handed to a namespace's Pods).
func envOf(s *scope, runID, testsetID string) (executorEnv, *kit.Outcome) {
	e := s.Obj
	url := s.Conn.PodURL()
	if url == "" {
		o := kit.Stalled(v1alpha1.ReasonExecutorURLUnavailable, "the executor is told the service's URL, and a "+
			"standalone service's is the REST server's, which the operator was not told: start it with --serve-api-url "+
			"(the chart sets it with serveApi.enabled)")
		return executorEnv{}, &o
	}
	secret, key, ok := s.Conn.KeySecret()
	if !ok || secret.Namespace != e.Namespace {
		o := kit.Stalled(v1alpha1.ReasonExecutorKeyUnavailable, "the executor's Pod can read only a Secret of namespace "+
			e.Namespace+", and the run's key is not in one: set spec.apiKeySecretRef to a Secret of this namespace")
		return executorEnv{}, &o
	}
	return executorEnv{url: url, runID: runID, projectID: string(e.Spec.ProjectID), testsetID: testsetID,
		secret: secret.Name, key: key}, nil
}

// templatePath is the executor template's path, for messages.
var templatePath = field.NewPath("spec", "executor", "template")

// maxRefusals is how many refused fields a message names.
const maxRefusals = 8

// executorTemplate is e's executor template as its Job runs it: within its
// size limit, under the grant of e's service (its ServiceAccount and
// Secrets, besides keySecret, the run's key) and the restricted Pod
// Security profile, whose unset settings it fills in. A refusal is the
// outcome to stop at, naming each field.
func executorTemplate(s *scope, keySecret string) (
	corev1.PodTemplateSpec, *kit.Outcome) {
	e := s.Obj
	tmpl := e.Spec.Executor.Template.DeepCopy()
	if err := executorpolicy.CheckSize(tmpl, templatePath); err != nil {
		o := kit.Stalled(v1alpha1.ReasonInvalidExecutor, err.Error())
		return corev1.PodTemplateSpec{}, &o
	}
	grant := executorpolicy.Grant{KeySecret: keySecret}
	if strings.Contains(s.Conn.Service, "/") { // a service object, not the manager's flags
		grant.Source = s.Conn.Service
	}
	if g := s.Conn.Executor; g != nil {
		grant.ServiceAccountName, grant.Secrets = g.ServiceAccountName, g.Secrets
	}
	errs := executorpolicy.Apply(tmpl, grant, templatePath)
	if len(errs) == 0 {
		return *tmpl, nil
	}
	refused := make([]string, 0, maxRefusals+1)
	for i, err := range errs {
		if i == maxRefusals {
			refused = append(refused, fmt.Sprintf("and %d more", len(errs)-i))
			break
		}
		refused = append(refused, quote.Bounded(err.Error()))
	}
	o := kit.Stalled(v1alpha1.ReasonExecutorNotAllowed, "the executor's template asks for more than its Pods may "+
		"have: "+strings.Join(refused, "; "))
	return corev1.PodTemplateSpec{}, &o
}

// jobOf is the executor Job of e's run id, or the outcome to stop at when
// its Pod could not call the service or its template is refused.
func jobOf(s *scope, runID, testsetID string) (*batchv1.Job, *kit.Outcome) {
	e := s.Obj
	env, o := envOf(s, runID, testsetID)
	if o != nil {
		return nil, o
	}
	tmpl, o := executorTemplate(s, env.secret)
	if o != nil {
		return nil, o
	}
	return executorJob(e, env, tmpl), nil
}

// checkExecutor makes sure, before the run is created, that its executor
// can start: the key is readable by the Pod, the template is within what
// the executor may have, and the API server accepts the Job (a dry run).
// A refusal is the outcome to stop at.
func (r *Reconciler) checkExecutor(ctx context.Context, s *scope,
	testsetID string) (*kit.Outcome, error) {
	e := s.Obj
	if err := r.wholeExecutor(ctx, e); err != nil {
		return nil, err
	}
	job, o := jobOf(s, placeholderRunID, testsetID)
	if o != nil {
		return o, nil
	}
	err := r.Client.Create(ctx, job, client.DryRunAll)
	switch {
	case err == nil:
		return nil, nil
	case apierrors.IsInvalid(err) || apierrors.IsAlreadyExists(err) || apierrors.IsBadRequest(err):
		o := kit.Stalled(v1alpha1.ReasonInvalidExecutor, "the executor's Job is refused: "+err.Error())
		return &o, nil
	}
	return nil, fmt.Errorf("checking the executor's Job: %w", err)
}

// startExecutor starts e's executor Job for run once, and reports why the
// run cannot finish when the Job failed ("" while it runs or succeeded).
func (r *Reconciler) startExecutor(ctx context.Context, s *scope,
	run remote.Run) (failed string, o *kit.Outcome, err error) {
	e := s.Obj
	job := &batchv1.Job{}
	key := types.NamespacedName{Namespace: e.Namespace, Name: jobName(e.Name)}
	err = r.Client.Get(ctx, key, job)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.wholeExecutor(ctx, e); err != nil {
			return "", nil, err
		}
		var o *kit.Outcome
		if job, o = jobOf(s, run.ID, run.TestsetID); o != nil {
			return "", o, nil
		}
		if err := r.Client.Create(ctx, job); err != nil {
			return "", nil, fmt.Errorf("starting the executor's Job: %w", err)
		}
		ctrl.LoggerFrom(ctx).Info("Started the executor", "job", job.Name, "run", run.ID)
		r.Recorder.Eventf(e, job, corev1.EventTypeNormal, v1alpha1.ReasonRunning, "StartExecutor",
			"started Job %s for run %s", job.Name, run.ID)
	case err != nil:
		return "", nil, fmt.Errorf("reading the executor's Job: %w", err)
	case !metav1.IsControlledBy(job, e):
		// The Job of an earlier run of this name, not collected yet.
		return "", nil, fmt.Errorf("job %s belongs to another object; waiting for it to go", key.Name)
	}
	e.Status.ExecutorJob = job.Name
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return fmt.Sprintf("the executor Job %s failed (%s: %s)", job.Name, c.Reason, c.Message), nil, nil
		}
	}
	return "", nil, nil
}

// ownerRun maps an executor Job to its EvaluationRun.
func ownerRun(_ context.Context, job client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(job)
	if ref == nil || ref.Kind != "EvaluationRun" || ref.APIVersion != v1alpha1.GroupVersion.String() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: job.GetNamespace(), Name: ref.Name}}}
}
