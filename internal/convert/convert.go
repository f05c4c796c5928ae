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

// Package convert converts between the custom resources and the
// Evaluation Service's wire types (internal/evalapi): the only place that
// knows both. The seam (internal/remote), the REST server and kubectl eval
// convert here.
package convert

import (
	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// RequestFor is the create request for a Metric's spec: unset optional
// fields stay unset, so the service applies its own defaults.
func RequestFor(s *v1alpha1.MetricSpec) evalapi.MetricRequest {
	return evalapi.MetricRequest{
		Name:             string(s.Name),
		Description:      (*string)(s.Description),
		EvalType:         string(s.EvalType),
		OutputType:       string(s.OutputType),
		Guidelines:       (*string)(s.Guidelines),
		PromptTemplate:   (*string)(s.PromptTemplate),
		EvalModelName:    s.EvalModelName,
		Temperature:      s.Temperature,
		PassingThreshold: s.PassingThreshold,
	}
}

// DesiredVariant is the update that makes a remote Metric what s asks for:
// every field of s's variant, with the service's default for each one s
// leaves unset (description null, guidelines "", evalModelName gpt-4o,
// temperature 0, passingThreshold 4 for int and 0.9 for float), and no field
// of another variant. Sent as one PATCH, it leaves nothing of an earlier
// spec behind.
func DesiredVariant(s *v1alpha1.MetricSpec) evalapi.MetricUpdate {
	m := evalapi.ResponseFor("", RequestFor(s))
	return evalapi.MetricUpdate{
		Name:             &m.Name,
		Description:      evalapi.NullableFrom(m.Description),
		EvalType:         m.EvalType,
		OutputType:       m.OutputType,
		Guidelines:       &m.Guidelines,
		PromptTemplate:   copyOf(m.PromptTemplate),
		EvalModelName:    m.EvalModelName,
		Temperature:      m.Temperature,
		PassingThreshold: m.PassingThreshold,
	}
}

// Matches reports whether remote, a Metric in response form, is what s asks for.
func Matches(remote evalapi.Metric, s *v1alpha1.MetricSpec) bool {
	return !evalapi.Differs(remote, DesiredVariant(s))
}

// DriftedFields names the fields of remote, in the API's names, that differ
// from what s asks for; none when Matches.
func DriftedFields(remote evalapi.Metric, s *v1alpha1.MetricSpec) []string {
	return evalapi.DifferingFields(remote, DesiredVariant(s))
}

func copyOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// SpecFor is the Metric spec that asks for req in project projectID: the
// inverse of RequestFor.
func SpecFor(projectID string, req evalapi.MetricRequest) v1alpha1.MetricSpec {
	return v1alpha1.MetricSpec{
		ProjectID:        v1alpha1.ResourceID(projectID),
		Name:             v1alpha1.LineText(req.Name),
		Description:      (*v1alpha1.Text)(req.Description),
		EvalType:         v1alpha1.EvalType(req.EvalType),
		OutputType:       v1alpha1.OutputType(req.OutputType),
		Guidelines:       (*v1alpha1.Text)(req.Guidelines),
		PromptTemplate:   (*v1alpha1.Text)(req.PromptTemplate),
		EvalModelName:    req.EvalModelName,
		Temperature:      req.Temperature,
		PassingThreshold: req.PassingThreshold,
	}
}

// IDStrings is ids as the API sends them.
func IDStrings(ids []v1alpha1.ResourceID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// ResourceIDs is ids as the custom resources hold them. Absent stays absent
// (nil), so the CRD reports a missing list as required.
func ResourceIDs(ids []string) []v1alpha1.ResourceID {
	if ids == nil {
		return nil
	}
	out := make([]v1alpha1.ResourceID, len(ids))
	for i, id := range ids {
		out[i] = v1alpha1.ResourceID(id)
	}
	return out
}

// SetStatus records in st the response-form values the service returned.
func SetStatus(st *v1alpha1.MetricStatus, resp evalapi.Metric) {
	st.ID = resp.ID
	st.Description = (*v1alpha1.Text)(resp.Description)
	st.Guidelines = (*v1alpha1.Text)(&resp.Guidelines)
	st.EvalModelName = ""
	if resp.EvalModelName != nil {
		st.EvalModelName = *resp.EvalModelName
	}
	st.Temperature = resp.Temperature
	st.PassingThreshold = resp.PassingThreshold
}

// ResponseOf is m in response form, built from values that were validated:
// the spec (admission checked it) and the service's answer the reconciler
// recorded in status. Status is writable by anyone who may write the status
// subresource, and its schema cannot state the rules of each variant, so
// each status value is used only when it passes the rules the spec's would;
// otherwise the answer holds the spec's value, or the service's default.
func ResponseOf(m *v1alpha1.Metric) evalapi.Metric {
	res := evalapi.ResponseFor(m.RecordedID(), RequestFor(&m.Spec))
	st := m.Status
	if st.Description != nil && validText(*st.Description, 4096) {
		res.Description = (*string)(st.Description)
	}
	if st.Guidelines != nil && validText(*st.Guidelines, 16384) {
		res.Guidelines = string(*st.Guidelines)
	}
	// ResponseFor set exactly the fields this variant has; only those are overridden.
	if res.EvalModelName != nil && st.EvalModelName != "" && v1alpha1.ValidModelName(st.EvalModelName) {
		res.EvalModelName = &st.EvalModelName
	}
	if res.Temperature != nil && st.Temperature != nil && *st.Temperature >= 0 && *st.Temperature <= 2 {
		res.Temperature = st.Temperature
	}
	if res.PassingThreshold != nil && st.PassingThreshold != nil && validThreshold(m.Spec.OutputType, *st.PassingThreshold) {
		res.PassingThreshold = st.PassingThreshold
	}
	return res
}

// validText applies the CRD's rules of a text field: its bound and ValidText.
func validText(s v1alpha1.Text, maxLen int) bool {
	return len(s) <= maxLen && v1alpha1.ValidText(string(s))
}

// validThreshold applies the CRD's passingThreshold rules of outputType.
func validThreshold(outputType v1alpha1.OutputType, v float64) bool {
	switch outputType {
	case v1alpha1.OutputTypeInt:
		return v >= 1 && v <= 5 && v == float64(int(v))
	case v1alpha1.OutputTypeFloat:
		return v >= 0 && v <= 1
	}
	return false
}
