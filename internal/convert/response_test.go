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

package convert_test

import (
	"testing"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
)

// A status value outside the rules of the Metric's variant is never served:
// status is writable apart from the spec, and its schema cannot state them.
func TestResponseOfServesOnlyValidStatus(t *testing.T) {
	m := &evaluationv1alpha1.Metric{Spec: evaluationv1alpha1.MetricSpec{
		ProjectID: "p", Name: "n", EvalType: evaluationv1alpha1.EvalTypeAI, OutputType: evaluationv1alpha1.OutputTypeFloat,
		PromptTemplate: ptr[evaluationv1alpha1.Text]("{{outputs.response}}"), PassingThreshold: ptr(0.8), Guidelines: ptr[evaluationv1alpha1.Text]("spec"),
	}}
	m.Status = evaluationv1alpha1.MetricStatus{ID: "met_1",
		PassingThreshold: ptr(99.0), Temperature: ptr(7.0), EvalModelName: "bad model\x7f",
		Guidelines: ptr[evaluationv1alpha1.Text]("bad\uffff"), Description: ptr[evaluationv1alpha1.Text]("bad\x00")}
	res := convert.ResponseOf(m)
	if *res.PassingThreshold != 0.8 || *res.Temperature != 0 || *res.EvalModelName != "gpt-4o" ||
		res.Guidelines != "spec" || res.Description != nil {
		t.Errorf("served unchecked status values: %+v", res)
	}

	m.Status = evaluationv1alpha1.MetricStatus{ID: "met_1", PassingThreshold: ptr(0.5), Temperature: ptr(1.0),
		EvalModelName: "openai/gpt-4o@2024", Guidelines: ptr[evaluationv1alpha1.Text]("line\nline"), Description: ptr[evaluationv1alpha1.Text]("d")}
	res = convert.ResponseOf(m)
	if *res.PassingThreshold != 0.5 || *res.Temperature != 1 || *res.EvalModelName != "openai/gpt-4o@2024" ||
		res.Guidelines != "line\nline" || *res.Description != "d" {
		t.Errorf("did not serve the service's valid values: %+v", res)
	}

	m.Spec.OutputType = evaluationv1alpha1.OutputTypeInt
	m.Spec.PassingThreshold = nil
	m.Status.PassingThreshold = ptr(4.5)
	if res = convert.ResponseOf(m); *res.PassingThreshold != 4 {
		t.Errorf("int passingThreshold 4.5 served: %v", *res.PassingThreshold)
	}
}
