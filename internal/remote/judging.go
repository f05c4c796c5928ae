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

package remote

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/judge"
)

// A standalone service's judge scores the AI Metrics of its runs. A record
// written to such a run is kept, until it is scored, in a ConfigMap of the
// run's namespace owned by the run (JudgeRecordLabel names the run): the
// scoring controller reads it, asks the judge once per AI Metric, counts
// each score in the run's status (once: the scored-records bits) and then
// deletes it. A restart loses nothing, and the run's deletion takes its
// records with it.

// JudgeRecordLabel marks a record waiting for the judge; its value is the run's name.
const JudgeRecordLabel = v1alpha1.Prefix + "judge-record"

// JudgeRecordIndexLabel is the record's number in its run.
const JudgeRecordIndexLabel = v1alpha1.Prefix + "record-index"

// maxRecordPartBytes bounds each of a kept record's inputs, outputs and
// expected: the judge's prompt uses at most judge.MaxValueBytes of a value.
const maxRecordPartBytes = 64 << 10

// Judge is a standalone service's judge, as a run's records are scored by it.
type Judge struct {
	*judge.Client
	// Service is the service connection; Endpoint the judge's host.
	Service, Endpoint string
	// models maps evalModelName to the judge's model; defaultModel serves
	// the others, "" for none.
	models       map[string]string
	defaultModel string
	// MaxRequestsPerRun is a run's budget of judge requests.
	MaxRequestsPerRun int
}

// Model is the judge's model for m's evalModelName (the API's default when
// unset), "" when it has none.
func (j *Judge) Model(m *v1alpha1.Metric) (evalModelName, model string) {
	evalModelName = ptr.Deref(m.Spec.EvalModelName, evalapi.DefaultEvalModelName)
	if model, ok := j.models[evalModelName]; ok {
		return evalModelName, model
	}
	return evalModelName, j.defaultModel
}

// Request is the judge's question of m about rec, for model.
func (j *Judge) Request(m *v1alpha1.Metric, model string, rec judge.Record) judge.Request {
	return judge.Request{Model: model, Temperature: ptr.Deref(m.Spec.Temperature, 0), OutputType: string(m.Spec.OutputType),
		Template: string(ptr.Deref(m.Spec.PromptTemplate, "")), Guidelines: string(ptr.Deref(m.Spec.Guidelines, "")), Record: rec}
}

// buildJudge makes the judge of a standalone service so (nil without one),
// with the connection's address rules, proxy and its own CA bundle; its
// key is read from its Secret at each request.
func (s *serviceSet) buildJudge(so v1alpha1.ServiceObject, name string, namespaced bool) (*Judge, error) {
	spec := so.GetConnection().Standalone.Judge
	if spec == nil {
		return nil, nil
	}
	if namespaced && !HostAllowed(string(spec.URL), s.defaults.NamespacedServiceHosts) {
		return nil, &ServiceError{Reason: v1alpha1.ReasonRejected, Message: fmt.Sprintf(
			"%s: the host of the judge's url is not one the operator allows namespaced services (--namespaced-service-hosts %s)",
			name, strings.Join(s.defaults.NamespacedServiceHosts, ","))}
	}
	t, err := NewTransport(TransportOptions{CABundle: spec.CABundle,
		RefusePrivate: namespaced && !s.defaults.AllowPrivateServiceAddresses})
	if err != nil {
		return nil, &ServiceError{Reason: v1alpha1.ReasonRejected, Message: name + ": judge caBundle: " + err.Error()}
	}
	u, err := url.Parse(string(spec.URL))
	if err != nil {
		return nil, &ServiceError{Reason: v1alpha1.ReasonRejected, Message: name + ": the judge's url cannot be parsed"}
	}
	cfg := judge.Config{URL: string(spec.URL), HTTPClient: &http.Client{Transport: t}, Label: ServiceKey(so),
		MaxInFlight: int(ptr.Deref(spec.MaxInFlight, 4)), RequestsPerSecond: float64(ptr.Deref(spec.RequestsPerSecond, 10)),
		MaxTokens: int(ptr.Deref(spec.MaxTokens, 512)), Retries: 4, Timeout: ptr.Deref(spec.Timeout, metav1.Duration{}).Duration}
	if cfg.Timeout <= 0 {
		cfg.Timeout = judge.DefaultTimeout
	}
	if ref := spec.APIKeySecretRef; ref != nil {
		// A namespaced service's judge key is always a Secret of its own
		// namespace, whatever the spec says (admission refuses a namespace
		// there too).
		ns := ref.Namespace
		if namespaced {
			ns = so.GetNamespace()
		}
		cfg.Key = s.judgeKey(types.NamespacedName{Namespace: ns, Name: ref.Name}, ref.Key)
	}
	j := &Judge{Client: judge.New(cfg), Service: name, Endpoint: u.Host, models: map[string]string{},
		defaultModel: spec.DefaultModel, MaxRequestsPerRun: int(ptr.Deref(spec.MaxRequestsPerRun, 30000))}
	for _, m := range spec.Models {
		j.models[m.EvalModelName] = m.Model
	}
	return j, nil
}

// judgeKey reads the judge's key from secret's field at each request: a
// rotated key takes effect at once and no Secret data is cached.
func (s *serviceSet) judgeKey(secret types.NamespacedName, field string) func(context.Context) (string, error) {
	if field == "" {
		field = v1alpha1.DefaultAPIKeySecretKey
	}
	return func(ctx context.Context) (string, error) {
		var sec corev1.Secret
		if err := s.live.Get(ctx, secret, &sec); err != nil {
			return "", fmt.Errorf("reading the judge's key Secret %s: %w", secret, client.IgnoreNotFound(err))
		}
		key := strings.TrimSpace(string(sec.Data[field]))
		if key == "" {
			return "", fmt.Errorf("the judge's key Secret %s has no key %q", secret, field)
		}
		return key, nil
	}
}

// JudgeRecord is a record waiting for the judge, as kept in the cluster.
func JudgeRecord(run *v1alpha1.EvaluationRun, index int, rec judge.Record) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-record-%d", run.Name, index), Namespace: run.Namespace,
			Labels: map[string]string{JudgeRecordLabel: run.Name, JudgeRecordIndexLabel: strconv.Itoa(index)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "EvaluationRun",
				Name: run.Name, UID: run.UID}},
		},
		Data: map[string]string{
			"inputs":   string(judge.Shrink(rec.Inputs, maxRecordPartBytes)),
			"outputs":  string(judge.Shrink(rec.Outputs, maxRecordPartBytes)),
			"expected": string(judge.Shrink(rec.Expected, maxRecordPartBytes)),
		},
	}
}

// RecordOf is the run name, record number and record a JudgeRecord keeps;
// ok is false for a ConfigMap that is not one.
func RecordOf(cm *corev1.ConfigMap) (run string, index int, rec judge.Record, ok bool) {
	run = cm.Labels[JudgeRecordLabel]
	index, err := strconv.Atoi(cm.Labels[JudgeRecordIndexLabel])
	if run == "" || err != nil || index < 1 || !slices.ContainsFunc(cm.OwnerReferences, func(o metav1.OwnerReference) bool {
		return o.Kind == "EvaluationRun" && o.Name == run
	}) {
		return "", 0, rec, false
	}
	return run, index, judge.Record{Inputs: []byte(cm.Data["inputs"]), Outputs: []byte(cm.Data["outputs"]),
		Expected: []byte(cm.Data["expected"])}, true
}

// ErrScored is a second score of one record and Metric: a run kept in the
// cluster counts one.
var ErrScored = errors.New("the record already has a score of this Metric")

// Scored reports whether record index of run has a score of Metric id
// counted (or was left unscored by the judge).
func Scored(run *v1alpha1.EvaluationRun, id string, index int) bool {
	i := slices.IndexFunc(run.Status.Metrics, func(r v1alpha1.MetricResult) bool { return r.ID == id })
	if i < 0 {
		return false
	}
	bits, err := base64.StdEncoding.DecodeString(run.Status.Metrics[i].ScoredRecords)
	byteAt := (index - 1) / 8
	return err == nil && byteAt < len(bits) && bits[byteAt]&(1<<((index-1)%8)) != 0
}

// CountScore counts, once, a score of Metric id (named name) for record
// index of run: passed or failed, or, with pass nil, none (the judge left
// the record unscored). A second count is ErrScored.
func CountScore(run *v1alpha1.EvaluationRun, id, name string, index int, pass *bool) error {
	i := slices.IndexFunc(run.Status.Metrics, func(r v1alpha1.MetricResult) bool { return r.ID == id })
	if i < 0 {
		run.Status.Metrics = append(run.Status.Metrics, v1alpha1.MetricResult{ID: id, Name: name})
		i = len(run.Status.Metrics) - 1
	}
	res := &run.Status.Metrics[i]
	bits, err := base64.StdEncoding.DecodeString(res.ScoredRecords)
	if err != nil {
		bits = nil // not this operator's: start again
	}
	byteAt, bit := (index-1)/8, byte(1)<<((index-1)%8)
	if byteAt >= len(bits) {
		bits = append(bits, make([]byte, byteAt+1-len(bits))...)
	}
	if bits[byteAt]&bit != 0 {
		return ErrScored
	}
	bits[byteAt] |= bit
	res.ScoredRecords = base64.StdEncoding.EncodeToString(bits)
	switch {
	case pass == nil:
		res.Unjudged++
		return nil
	case *pass:
		res.Passed++
	default:
		res.Failed++
	}
	run.Status.Scores++
	return nil
}
