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

package evalapi

import "github.com/eval-operator/eval-operator/api/v1alpha1"

// Conversions between the custom resources' specs and the API's requests.

// RequestFor is the create request for a Metric's spec: unset optional
// fields stay unset, so the service applies its own defaults.
func RequestFor(s *v1alpha1.MetricSpec) MetricRequest {
	return MetricRequest{
		Name:             s.Name,
		Description:      s.Description,
		EvalType:         string(s.EvalType),
		OutputType:       string(s.OutputType),
		Guidelines:       s.Guidelines,
		PromptTemplate:   s.PromptTemplate,
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
func DesiredVariant(s *v1alpha1.MetricSpec) MetricUpdate {
	m := ResponseFor("", RequestFor(s))
	return MetricUpdate{
		Name:             &m.Name,
		Description:      NullableFrom(m.Description),
		EvalType:         m.EvalType,
		OutputType:       m.OutputType,
		Guidelines:       &m.Guidelines,
		PromptTemplate:   copyOf(m.PromptTemplate),
		EvalModelName:    m.EvalModelName,
		Temperature:      m.Temperature,
		PassingThreshold: m.PassingThreshold,
	}
}

// Differs reports whether sending want would change remote, a Metric in
// response form: whether name, description, evalType, outputType,
// guidelines, the ai fields or passingThreshold differ from what want asks
// for. Numbers compare as numbers (4 and 4.0 are equal). A field want does
// not send is taken as remote has it, as a PATCH would keep it
// (DesiredVariant sends every field).
func Differs(remote Metric, want MetricUpdate) bool {
	return !sameFields(remote, ResponseFor(remote.ID, MergeUpdate(remote, want)))
}

func sameFields(a, b Metric) bool {
	return a.Name == b.Name &&
		equalPtr(a.Description, b.Description) &&
		a.EvalType == b.EvalType &&
		a.OutputType == b.OutputType &&
		a.Guidelines == b.Guidelines &&
		equalPtr(a.PromptTemplate, b.PromptTemplate) &&
		equalPtr(a.EvalModelName, b.EvalModelName) &&
		equalPtr(a.Temperature, b.Temperature) &&
		equalPtr(a.PassingThreshold, b.PassingThreshold)
}

// equalPtr reports whether both are unset or both hold equal values.
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
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
func SpecFor(projectID string, req MetricRequest) v1alpha1.MetricSpec {
	return v1alpha1.MetricSpec{
		ProjectID:        v1alpha1.ResourceID(projectID),
		Name:             req.Name,
		Description:      req.Description,
		EvalType:         v1alpha1.EvalType(req.EvalType),
		OutputType:       v1alpha1.OutputType(req.OutputType),
		Guidelines:       req.Guidelines,
		PromptTemplate:   req.PromptTemplate,
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
