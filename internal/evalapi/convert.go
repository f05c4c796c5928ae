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
