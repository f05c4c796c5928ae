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
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// testset returns a valid Testset with inline testcases and every other
// optional field set.
func testset() map[string]any {
	obj := typeMeta("Testset")
	obj["spec"] = map[string]any{
		"projectId":   "proj-1",
		"name":        "Long Context Q&A",
		"description": "Q&A over long documents",
		"jsonSchema": map[string]any{"type": "object", "required": []any{"id", "question"},
			"properties": map[string]any{"id": map[string]any{"type": "string"}, "question": map[string]any{"type": "string"}}},
		"fieldMapping": map[string]any{"inputs": []any{"question"}, "expected": []any{"idealAnswer"}, "metadata": []any{"geo"}},
		"keyField":     "id",
		"inline": []any{
			map[string]any{"id": "q1", "question": "What is 2+2?", "idealAnswer": "4"},
			map[string]any{"id": "q2", "question": "Capital of France?", "idealAnswer": "Paris", "tags": []any{"geo"}},
		},
		"apiKeySecretRef":    map[string]any{"name": "eval-api-key"},
		"serviceRef":         map[string]any{"kind": "EvaluationService", "name": "default"},
		"deletionPolicy":     "Orphan",
		"managementPolicies": []any{"Observe", "Create"},
	}
	return obj
}

// fromConfigMap is a valid Testset whose testcases come from a ConfigMap.
func fromConfigMap() map[string]any {
	obj := testset()
	spec := obj["spec"].(map[string]any)
	delete(spec, "inline")
	spec["configMapRef"] = map[string]any{"name": "qa-testcases", "key": "qa.jsonl"}
	return obj
}

const exactlyOneSource = "spec: Invalid value: exactly one of inline, configMapRef and sourceRef must be set"

var _ = Describe("Testset validation", func() {
	DescribeTable("creating a Testset",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectCreate(base, mutate, wantErrs)
		},
		Entry("inline, with every field, is valid", testset, unchanged),
		Entry("from a ConfigMap is valid", fromConfigMap, unchanged),
		Entry("from a ConfigMap without a key is valid (testcases.jsonl)", fromConfigMap, unset("spec", "configMapRef", "key")),
		Entry("from a Flux source is valid", fromConfigMap, func(obj map[string]any) {
			spec := obj["spec"].(map[string]any)
			delete(spec, "configMapRef")
			spec["sourceRef"] = map[string]any{"kind": "GitRepository", "name": "evals", "path": "testsets/qa.jsonl"}
		}),
		Entry("no source", testset, unset("spec", "inline"), exactlyOneSource),
		Entry("two sources", testset, set(map[string]any{"name": "qa"}, "spec", "configMapRef"), exactlyOneSource),
		Entry("no keyField", testset, unset("spec", "keyField"), required("keyField")),
		Entry("a keyField with a control character", testset, set("i\x01d", "spec", "keyField"),
			`spec.keyField: must not contain control characters`),
		Entry("an inline testcase that is not an object", testset, set([]any{"q1"}, "spec", "inline"),
			`spec.inline[0]: Invalid value: "string": spec.inline[0] in body must be of type object: "string"`),
		Entry("an empty inline set is valid", testset, set([]any{}, "spec", "inline")),
		Entry("a Flux source of another kind", fromConfigMap, func(obj map[string]any) {
			spec := obj["spec"].(map[string]any)
			delete(spec, "configMapRef")
			spec["sourceRef"] = map[string]any{"kind": "HelmRepository", "name": "evals", "path": "qa.jsonl"}
		}, `spec.sourceRef.kind: Unsupported value: "HelmRepository": supported values: "GitRepository", "OCIRepository", "Bucket"`),
		Entry("a Flux source path that climbs out of the artifact", fromConfigMap, func(obj map[string]any) {
			spec := obj["spec"].(map[string]any)
			delete(spec, "configMapRef")
			spec["sourceRef"] = map[string]any{"kind": "Bucket", "name": "evals", "path": "testsets/../../etc/passwd"}
		}, `spec.sourceRef.path: path must be relative to the artifact's root and must not contain ..`),
		Entry("a jsonSchema that is not an object", testset, set("string", "spec", "jsonSchema"),
			`spec.jsonSchema: spec.jsonSchema in body must be of type object: "string"`),
		Entry("a name of 257 characters", testset, set(strings.Repeat("n", 257), "spec", "name"), tooLong("name", "256")),
		Entry("an input field listed twice", testset, set([]any{"question", "question"}, "spec", "fieldMapping", "inputs"),
			`spec.fieldMapping.inputs[1]: Duplicate value: "question"`),
	)

	DescribeTable("updating a Testset",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectUpdate(base, mutate, wantErrs)
		},
		Entry("its testcases changed", testset, set([]any{map[string]any{"id": "q3"}}, "spec", "inline")),
		Entry("its source moved to a ConfigMap", testset, func(obj map[string]any) {
			spec := obj["spec"].(map[string]any)
			delete(spec, "inline")
			spec["configMapRef"] = map[string]any{"name": "qa"}
		}),
		Entry("projectId changed", testset, set("proj-2", "spec", "projectId"),
			`spec.projectId: projectId is immutable: the service cannot move a Testset`),
	)
})
