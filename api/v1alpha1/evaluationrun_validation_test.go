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

package v1alpha1_test

import (
	. "github.com/onsi/ginkgo/v2"
)

// evaluationRun returns a valid EvaluationRun with every optional field set.
func evaluationRun() map[string]any {
	obj := typeMeta("EvaluationRun")
	obj["spec"] = map[string]any{
		"projectId":       "proj-1",
		"testsetRef":      map[string]any{"name": "qa"},
		"metricRefs":      []any{map[string]any{"name": "exact"}, map[string]any{"name": "tone"}},
		"systemVersionId": "87654321-4d3b-4ae4-8c7a-4b6e2a19ccf0",
		"passCriteria": map[string]any{"minPassRate": 0.9, "minScoredRatio": 0.8,
			"metrics": []any{map[string]any{"name": "tone", "minPassRate": 0.5}}},
		"humanScoring":            "Wait",
		"timeout":                 "45m",
		"ttlSecondsAfterFinished": 3600,
		"apiKeySecretRef":         map[string]any{"name": "eval-api-key"},
		"serviceRef":              map[string]any{"kind": "EvaluationService", "name": "default"},
		"executor": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "evaluator"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "executor", "image": "example.com/e:1"}}},
		}},
	}
	return obj
}

// byIDs is a valid EvaluationRun naming remote ids instead of objects.
func byIDs() map[string]any {
	obj := evaluationRun()
	spec := obj["spec"].(map[string]any)
	delete(spec, "testsetRef")
	delete(spec, "metricRefs")
	spec["testsetId"] = "ts_1"
	spec["metricIds"] = []any{"met_1", "met_2"}
	spec["passCriteria"] = map[string]any{"metrics": []any{map[string]any{"id": "met_2", "minPassRate": 0.5}}}
	return obj
}

var _ = Describe("EvaluationRun validation", func() {
	DescribeTable("creating an EvaluationRun",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectCreate(base, mutate, wantErrs)
		},
		Entry("with every field, is valid", evaluationRun, unchanged),
		Entry("by remote ids is valid", byIDs, unchanged),
		Entry("without a Testset is valid", evaluationRun, unset("spec", "testsetRef")),
		Entry("a Testset by object and by id", evaluationRun, set("ts_1", "spec", "testsetId"),
			"spec: Invalid value: set at most one of testsetRef and testsetId"),
		Entry("no Metrics", evaluationRun, unset("spec", "metricRefs"),
			"spec: Invalid value: set exactly one of metricRefs and metricIds"),
		Entry("Metrics by object and by id", evaluationRun, set([]any{"met_1"}, "spec", "metricIds"),
			"spec: Invalid value: set exactly one of metricRefs and metricIds"),
		Entry("a Metric named twice", evaluationRun, set([]any{map[string]any{"name": "exact"}, map[string]any{"name": "exact"}},
			"spec", "metricRefs"), `spec.metricRefs[1]: Duplicate value`),
		Entry("a pass rate over 1", evaluationRun, set(1.5, "spec", "passCriteria", "minPassRate"),
			"spec.passCriteria.minPassRate: Invalid value: 1.5: spec.passCriteria.minPassRate in body should be less than or equal to 1"),
		Entry("a Metric's criteria by name and id", evaluationRun,
			set([]any{map[string]any{"name": "tone", "id": "met_2", "minPassRate": 0.5}}, "spec", "passCriteria", "metrics"),
			"spec.passCriteria.metrics[0]: Invalid value: set exactly one of name and id"),
		Entry("an unknown humanScoring", evaluationRun, set("Maybe", "spec", "humanScoring"),
			`spec.humanScoring: Unsupported value: "Maybe": supported values: "Ignore", "Wait"`),
		Entry("a timeout that is not a duration", evaluationRun, set("soon", "spec", "timeout"),
			`spec.timeout: Invalid value: "soon": spec.timeout in body must be of type duration: "soon"`),
		Entry("no projectId", evaluationRun, unset("spec", "projectId"), required("projectId")),
		Entry("an executor template with more than metadata and spec", evaluationRun,
			set(map[string]any{}, "spec", "executor", "template", "status"),
			"spec.executor.template: Too many: 3: must have at most 2 items"),
	)

	DescribeTable("updating an EvaluationRun",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectUpdate(base, mutate, wantErrs)
		},
		Entry("its Metrics changed", evaluationRun, set([]any{map[string]any{"name": "exact"}}, "spec", "metricRefs"),
			"spec: Invalid value: an EvaluationRun is immutable: create a new one for a new run"),
		Entry("its timeout changed", evaluationRun, set("1h", "spec", "timeout"),
			"spec: Invalid value: an EvaluationRun is immutable: create a new one for a new run"),
	)
})
