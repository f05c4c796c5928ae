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
	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Answers about a Metric are built from values that were validated: the
// spec (admission checked it) and the service's answer the reconciler
// recorded in status. Status is writable by anyone who may write the status
// subresource, and its schema cannot state the rules of each variant, so
// each status value is used only when it passes the rules the spec's would;
// otherwise the answer holds the spec's value, or the service's default.

// servable reports whether m may be served under its recorded id id: a
// valid id that m holds (not refused as a duplicate or an invalid claim).
func servable(m *evaluationv1alpha1.Metric, id string) bool {
	return evaluationv1alpha1.ValidResourceID(id) && !controller.Unclaimed(m)
}

// holder is the Metric that holds the id all of items claim: the
// reconciler's choice, so GET by id reaches the Metric that serves it.
func holder(items []evaluationv1alpha1.Metric) *evaluationv1alpha1.Metric {
	h := &items[0]
	for i := range items[1:] {
		if m := &items[1+i]; controller.Ahead(m, h) {
			h = m
		}
	}
	return h
}

// metricResponse is the Metric in response form: the values the service
// returned (status) where they are valid, the spec's and the service's
// defaults elsewhere.
func metricResponse(m *evaluationv1alpha1.Metric) evalapi.Metric {
	res := evalapi.ResponseFor(recordedID(m), evalapi.RequestFor(&m.Spec))
	st := m.Status
	if st.Description != nil && validText(*st.Description, 4096) {
		res.Description = st.Description
	}
	if st.Guidelines != nil && validText(*st.Guidelines, 16384) {
		res.Guidelines = *st.Guidelines
	}
	// ResponseFor set exactly the fields this variant has; only those are overridden.
	if res.EvalModelName != nil && st.EvalModelName != "" && evaluationv1alpha1.ValidModelName(st.EvalModelName) {
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

func validText(s string, maxLen int) bool {
	return len(s) <= maxLen && evaluationv1alpha1.ValidText(s)
}

// validThreshold applies the CRD's passingThreshold rules of outputType.
func validThreshold(outputType evaluationv1alpha1.OutputType, v float64) bool {
	switch outputType {
	case evaluationv1alpha1.OutputTypeInt:
		return v >= 1 && v <= 5 && v == float64(int(v))
	case evaluationv1alpha1.OutputTypeFloat:
		return v >= 0 && v <= 1
	}
	return false
}
