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
	"fmt"
	"strings"

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
			"metrics":    []any{map[string]any{"name": "tone", "minPassRate": 0.5}},
			"baseline":   map[string]any{"runRef": map[string]any{"name": "production"}, "margin": 0.05},
			"confidence": 0.95, "trials": 3, "minPassingTrials": 2},
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

// promoting is a valid EvaluationRun that promotes its SystemVersion.
func promoting() map[string]any {
	obj := evaluationRun()
	spec := obj["spec"].(map[string]any)
	delete(spec, "systemVersionId")
	spec["systemVersionRef"] = map[string]any{"name": "support-bot-7f9c"}
	spec["promote"] = true
	return obj
}

// againstProduction is a valid EvaluationRun compared with the last Passed
// run of its System's production version.
func againstProduction() map[string]any {
	obj := promoting()
	spec := obj["spec"].(map[string]any)
	delete(spec, "promote")
	spec["passCriteria"].(map[string]any)["baseline"] = map[string]any{"production": map[string]any{}, "margin": 0.05}
	return obj
}

const exactlyOneBaseline = "spec.passCriteria.baseline: Invalid value: set exactly one of baseline.runRef (a run by name) " +
	"and baseline.production (the last Passed run of the System's production version)"

// refs are n object references with distinct names.
func refs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("m-%d", i)}
	}
	return out
}

// ids are n distinct remote ids.
func ids(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("met_%d", i)
	}
	return out
}

// criteria are n per-Metric pass criteria, by name.
func criteria(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("m-%d", i), "minPassRate": 0.5}
	}
	return out
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
		Entry("more passing trials than trials", evaluationRun, set(4, "spec", "passCriteria", "minPassingTrials"),
			"spec.passCriteria.minPassingTrials: Invalid value: minPassingTrials cannot exceed trials (default 1)"),
		Entry("passing trials without trials", evaluationRun, unset("spec", "passCriteria", "trials"),
			"spec.passCriteria.minPassingTrials: Invalid value: minPassingTrials cannot exceed trials (default 1)"),
		Entry("a confidence level with no baseline and a minimum pass rate of 1", evaluationRun,
			set(map[string]any{"confidence": 0.95}, "spec", "passCriteria"),
			"spec.passCriteria.confidence: Invalid value: with a confidence level and no baseline, a minimum "+
				"pass rate of 1 can never be shown by a finite sample: set minPassRate and every metrics[].minPassRate below 1"),
		Entry("a confidence level with no baseline and one Metric's minimum of 1", evaluationRun,
			set(map[string]any{"confidence": 0.95, "minPassRate": 0.9, "metrics": []any{map[string]any{"name": "tone", "minPassRate": 1}}},
				"spec", "passCriteria"),
			"spec.passCriteria.confidence: Invalid value: with a confidence level and no baseline, a minimum "+
				"pass rate of 1 can never be shown by a finite sample: set minPassRate and every metrics[].minPassRate below 1"),
		Entry("a confidence level with no baseline below every minimum of 1 is valid", evaluationRun,
			unset("spec", "passCriteria", "baseline")),
		Entry("a confidence level under 0.5", evaluationRun, set(0.4, "spec", "passCriteria", "confidence"),
			"spec.passCriteria.confidence: Invalid value: 0.4: spec.passCriteria.confidence in body should be greater than or equal to 0.5"),
		Entry("a baseline without its run", evaluationRun, unset("spec", "passCriteria", "baseline", "runRef"),
			exactlyOneBaseline),
		Entry("promoting its SystemVersion is valid", promoting, unchanged),
		Entry("promote without a systemVersionRef", promoting, unset("spec", "systemVersionRef"),
			"spec: Invalid value: promote makes the run's SystemVersion its System's production version: "+
				"name that SystemVersion in systemVersionRef"),
		Entry("promote false needs no systemVersionRef", evaluationRun, set(false, "spec", "promote")),
		Entry("a production baseline is valid", againstProduction, unchanged),
		Entry("a production baseline without a systemVersionRef", againstProduction, unset("spec", "systemVersionRef"),
			"spec: Invalid value: passCriteria.baseline.production compares with the production version of the run's "+
				"System: name the run's SystemVersion in systemVersionRef"),
		Entry("a production baseline and a run", againstProduction,
			set(map[string]any{"name": "production"}, "spec", "passCriteria", "baseline", "runRef"), exactlyOneBaseline),
		Entry("a baseline margin over 0.5", evaluationRun, set(0.6, "spec", "passCriteria", "baseline", "margin"),
			"spec.passCriteria.baseline.margin: Invalid value: 0.6: spec.passCriteria.baseline.margin in body should be less than or equal to 0.5"),
		Entry("11 trials", evaluationRun, set(11, "spec", "passCriteria", "trials"),
			"spec.passCriteria.trials: Invalid value: 11: spec.passCriteria.trials in body should be less than or equal to 10"),
		Entry("an unknown humanScoring", evaluationRun, set("Maybe", "spec", "humanScoring"),
			`spec.humanScoring: Unsupported value: "Maybe": supported values: "Ignore", "Wait"`),
		Entry("a timeout that is not a duration", evaluationRun, set("soon", "spec", "timeout"),
			`spec.timeout: Invalid value: "soon": spec.timeout in body must be of type duration: "soon"`),
		Entry("no projectId", evaluationRun, unset("spec", "projectId"), required("projectId")),
		Entry("an executor template with more than metadata and spec", evaluationRun,
			set(map[string]any{}, "spec", "executor", "template", "status"),
			"spec.executor.template: Too many: 3: must have at most 2 items"),
		Entry("an executor spread over 4 Pods is valid", evaluationRun, set(4, "spec", "executor", "parallelism")),
		Entry("an executor spread over no Pod", evaluationRun, set(0, "spec", "executor", "parallelism"),
			"spec.executor.parallelism: Invalid value: 0: spec.executor.parallelism in body should be greater than or equal to 1"),
		Entry("an executor spread over more Pods than a run may have", evaluationRun, set(65, "spec", "executor", "parallelism"),
			"spec.executor.parallelism: Invalid value: 65: spec.executor.parallelism in body should be less than or equal to 64"),
	)

	// Every string and list a tenant writes is bounded: a run stays small in
	// etcd and in the manager's cache (docs/rest-api.md, "Budgets").
	DescribeTable("the bounds of an EvaluationRun",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectCreate(base, mutate, wantErrs)
		},
		Entry("a projectId of 128 bytes is valid", evaluationRun, set(strings.Repeat("p", 128), "spec", "projectId")),
		Entry("a projectId of 129 bytes", evaluationRun, set(strings.Repeat("p", 129), "spec", "projectId"),
			tooLong("projectId", "128")),
		Entry("a testsetRef name of 254 bytes", evaluationRun, set(strings.Repeat("t", 254), "spec", "testsetRef", "name"),
			tooLong("testsetRef.name", "253")),
		Entry("a testsetId of 129 bytes", byIDs, set(strings.Repeat("t", 129), "spec", "testsetId"),
			tooLong("testsetId", "128")),
		Entry("50 metricRefs are valid", evaluationRun, set(refs(50), "spec", "metricRefs")),
		Entry("51 metricRefs", evaluationRun, set(refs(51), "spec", "metricRefs"),
			"spec.metricRefs: Too many: 51: must have at most 50 items"),
		Entry("a metricRefs name of 254 bytes", evaluationRun,
			set([]any{map[string]any{"name": strings.Repeat("m", 254)}}, "spec", "metricRefs"),
			tooLong("metricRefs[0].name", "253")),
		Entry("51 metricIds", byIDs, set(ids(51), "spec", "metricIds"),
			"spec.metricIds: Too many: 51: must have at most 50 items"),
		Entry("a metricIds id of 129 bytes", byIDs, set([]any{strings.Repeat("m", 129)}, "spec", "metricIds"),
			tooLong("metricIds[0]", "128")),
		Entry("a systemVersionRef is valid", evaluationRun, func(obj map[string]any) {
			spec := obj["spec"].(map[string]any)
			delete(spec, "systemVersionId")
			spec["systemVersionRef"] = map[string]any{"name": "support-bot-7f9c"}
		}),
		Entry("both systemVersionRef and systemVersionId", evaluationRun,
			set(map[string]any{"name": "support-bot-7f9c"}, "spec", "systemVersionRef"),
			"spec: Invalid value: set at most one of systemVersionRef and systemVersionId"),
		Entry("a systemVersionId of 129 bytes", evaluationRun, set(strings.Repeat("v", 129), "spec", "systemVersionId"),
			tooLong("systemVersionId", "128")),
		Entry("51 per-Metric pass criteria", evaluationRun, set(criteria(51), "spec", "passCriteria", "metrics"),
			"spec.passCriteria.metrics: Too many: 51: must have at most 50 items"),
		Entry("a per-Metric criteria name of 254 bytes", evaluationRun,
			set([]any{map[string]any{"name": strings.Repeat("m", 254), "minPassRate": 0.5}}, "spec", "passCriteria", "metrics"),
			tooLong("passCriteria.metrics[0].name", "253")),
		Entry("a per-Metric criteria id of 129 bytes", byIDs,
			set([]any{map[string]any{"id": strings.Repeat("m", 129), "minPassRate": 0.5}}, "spec", "passCriteria", "metrics"),
			tooLong("passCriteria.metrics[0].id", "128")),
		Entry("a timeout of 33 bytes", evaluationRun, set(strings.Repeat("0", 31)+"1h", "spec", "timeout"),
			tooLong("timeout", "32")),
		Entry("an apiKeySecretRef name of 254 bytes", evaluationRun,
			set(strings.Repeat("k", 254), "spec", "apiKeySecretRef", "name"), tooLong("apiKeySecretRef.name", "253")),
		Entry("an apiKeySecretRef key of 254 bytes", evaluationRun,
			set(strings.Repeat("k", 254), "spec", "apiKeySecretRef", "key"), tooLong("apiKeySecretRef.key", "253")),
		Entry("a serviceRef name of 254 bytes", evaluationRun,
			set(strings.Repeat("s", 254), "spec", "serviceRef", "name"), tooLong("serviceRef.name", "253")),
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
