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
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// metric returns a valid Metric of one variant that sets every optional field
// the variant allows, so a case can remove or break any of them.
func metric(evalType, outputType string) manifest {
	return func() map[string]any {
		spec := map[string]any{
			"projectId":       "proj-42",
			"name":            "Faithfulness",
			"description":     "Is the answer supported by the retrieved context?",
			"evalType":        evalType,
			"outputType":      outputType,
			"guidelines":      "Penalise claims that the context does not support.",
			"apiKeySecretRef": map[string]any{"name": "eval-api-key", "key": "apiKey"},
		}
		if evalType == "ai" {
			spec["promptTemplate"] = "Context: {{inputs.context}}\nAnswer: {{outputs.response}}\nIs the answer faithful?"
			spec["evalModelName"] = "gpt-4o"
			spec["temperature"] = 0.5
		}
		switch outputType {
		case "int":
			spec["passingThreshold"] = int64(4)
		case "float":
			spec["passingThreshold"] = 0.75
		}
		obj := typeMeta("Metric")
		obj["spec"] = spec
		return obj
	}
}

var (
	aiInt            = metric("ai", "int")
	aiFloat          = metric("ai", "float")
	aiBoolean        = metric("ai", "boolean")
	humanInt         = metric("human", "int")
	humanFloat       = metric("human", "float")
	humanBoolean     = metric("human", "boolean")
	heuristicInt     = metric("heuristic", "int")
	heuristicFloat   = metric("heuristic", "float")
	heuristicBoolean = metric("heuristic", "boolean")
)

// Messages of the Metric rules, built from the field so each case states
// only what differs.

func aiOnly(field string) string {
	return "spec." + field + ": Forbidden: " + field + " is only allowed when evalType is ai"
}

const (
	modelPattern = `^[A-Za-z0-9][A-Za-z0-9._:/@-]*$`

	promptRequired  = "spec.promptTemplate: Required value: promptTemplate is required when evalType is ai"
	booleanNoThresh = "spec.passingThreshold: Forbidden: passingThreshold is not allowed when outputType is boolean"
	intThreshold    = "spec.passingThreshold: passingThreshold must be a whole number from 1 to 5 when outputType is int"
	floatThreshold  = "spec.passingThreshold: passingThreshold must be from 0 to 1 when outputType is float"
)

var _ = Describe("Metric validation", func() {
	It("gives a percentage on a float Metric one error, the float rule, and no bound of 5 to contradict it", func() {
		content := humanFloat()
		set(80, "spec", "passingThreshold")(content)
		err := k8sClient.Create(ctx, object(content))
		Expect(causes(err)).To(ConsistOf(SatisfyAll(HaveField("Field", "spec.passingThreshold"),
			HaveField("Message", ContainSubstring("passingThreshold must be from 0 to 1 when outputType is float")))))
	})

	DescribeTable("creating a Metric",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectCreate(base, mutate, wantErrs)
		},

		// The nine variants, each with every optional field it allows.
		Entry("ai/int is valid", aiInt, unchanged),
		Entry("ai/float is valid", aiFloat, unchanged),
		Entry("ai/boolean is valid", aiBoolean, unchanged),
		Entry("human/int is valid", humanInt, unchanged),
		Entry("human/float is valid", humanFloat, unchanged),
		Entry("human/boolean is valid", humanBoolean, unchanged),
		Entry("heuristic/int is valid", heuristicInt, unchanged),
		Entry("heuristic/float is valid", heuristicFloat, unchanged),
		Entry("heuristic/boolean is valid", heuristicBoolean, unchanged),
		Entry("ai with only the required fields is valid", aiBoolean, set(map[string]any{
			"projectId": "p", "name": "n", "evalType": "ai", "outputType": "boolean",
			"promptTemplate": "{{outputs.response}}",
		}, "spec")),

		// Numbers: `4` and `4.0` are the same JSON number; bounds are inclusive.
		Entry("int passingThreshold written as 4", heuristicInt, set(json.Number("4"), "spec", "passingThreshold")),
		Entry("int passingThreshold written as 4.0", heuristicInt, set(json.Number("4.0"), "spec", "passingThreshold")),
		Entry("int passingThreshold 1", aiInt, set(1, "spec", "passingThreshold")),
		Entry("int passingThreshold 5", aiInt, set(5, "spec", "passingThreshold")),
		Entry("float passingThreshold 0", aiFloat, set(0, "spec", "passingThreshold")),
		Entry("float passingThreshold 1", aiFloat, set(1, "spec", "passingThreshold")),
		Entry("temperature 0", aiFloat, set(0, "spec", "temperature")),
		Entry("temperature 2", aiFloat, set(2, "spec", "temperature")),
		Entry("empty description", humanBoolean, set("", "spec", "description")),

		// Fields required or forbidden by evalType and outputType.
		Entry("ai without promptTemplate", aiFloat, unset("spec", "promptTemplate"), promptRequired),
		Entry("human with promptTemplate", humanInt, set("{{outputs.response}}", "spec", "promptTemplate"), aiOnly("promptTemplate")),
		Entry("human with evalModelName", humanInt, set("gpt-4o", "spec", "evalModelName"), aiOnly("evalModelName")),
		Entry("human with temperature", humanInt, set(0, "spec", "temperature"), aiOnly("temperature")),
		Entry("heuristic with promptTemplate", heuristicFloat, set("{{outputs.response}}", "spec", "promptTemplate"), aiOnly("promptTemplate")),
		Entry("heuristic with evalModelName", heuristicFloat, set("gpt-4o", "spec", "evalModelName"), aiOnly("evalModelName")),
		Entry("heuristic with temperature", heuristicFloat, set(0.2, "spec", "temperature"), aiOnly("temperature")),
		Entry("boolean with passingThreshold", aiBoolean, set(1, "spec", "passingThreshold"), booleanNoThresh),

		// passingThreshold and temperature ranges.
		Entry("int passingThreshold 4.5", aiInt, set(4.5, "spec", "passingThreshold"), intThreshold),
		Entry("int passingThreshold 0", aiInt, set(0, "spec", "passingThreshold"), intThreshold),
		Entry("int passingThreshold 6", humanInt, set(6, "spec", "passingThreshold"), intThreshold),
		Entry("int passingThreshold 1e300 (beyond int64, the CEL rule must not fail to evaluate)", humanInt,
			set(json.Number("1e300"), "spec", "passingThreshold"), intThreshold),
		Entry("float passingThreshold 1.5", humanFloat, set(1.5, "spec", "passingThreshold"), floatThreshold),
		// A percentage on a float Metric: the float rule alone, not also an
		// int's bound of 5 that would contradict it.
		Entry("float passingThreshold 80", humanFloat, set(80, "spec", "passingThreshold"), floatThreshold),
		Entry("float passingThreshold -0.1", humanFloat, set(-0.1, "spec", "passingThreshold"),
			"spec.passingThreshold: Invalid value: -0.1: spec.passingThreshold in body should be greater than or equal to 0"),
		Entry("temperature 2.5", aiInt, set(2.5, "spec", "temperature"),
			"spec.temperature: Invalid value: 2.5: spec.temperature in body should be less than or equal to 2"),
		Entry("temperature -1", aiInt, set(-1, "spec", "temperature"),
			"spec.temperature: Invalid value: -1: spec.temperature in body should be greater than or equal to 0"),
		Entry("temperature as a string", aiInt, set("0.5", "spec", "temperature"),
			`spec.temperature: Invalid value: "string": spec.temperature in body must be of type number: "string"`),

		// Enums.
		Entry("unknown evalType", humanInt, set("robot", "spec", "evalType"),
			`spec.evalType: Unsupported value: "robot": supported values: "ai", "human", "heuristic"`),
		Entry("unknown outputType", humanInt, set("percent", "spec", "outputType"),
			`spec.outputType: Unsupported value: "percent": supported values: "int", "float", "boolean"`),

		// Required fields.
		Entry("no spec", aiInt, unset("spec"), "spec: Required value"),
		Entry("no projectId", aiInt, unset("spec", "projectId"), required("projectId")),
		Entry("no name", aiInt, unset("spec", "name"), required("name")),
		Entry("no evalType", aiInt, unset("spec", "evalType"), required("evalType")),
		Entry("no outputType", aiInt, unset("spec", "outputType"), required("outputType")),
		Entry("no apiKeySecretRef.name", aiInt, unset("spec", "apiKeySecretRef", "name"), required("apiKeySecretRef.name")),

		// Patterns.
		Entry("projectId with spaces", aiInt, set("my project", "spec", "projectId"), mismatch("projectId", "my project", idPattern)),
		Entry("projectId with a leading '-'", aiInt, set("-proj", "spec", "projectId"), mismatch("projectId", "-proj", idPattern)),
		Entry("evalModelName with bad characters", aiInt, set("gpt 4o!", "spec", "evalModelName"), mismatch("evalModelName", "gpt 4o!", modelPattern)),
		Entry("apiKeySecretRef.name in upper case", aiInt, set("Eval-Key", "spec", "apiKeySecretRef", "name"),
			mismatch("apiKeySecretRef.name", "Eval-Key", secretPattern)),
		Entry("apiKeySecretRef.key with bad characters", aiInt, set("api key", "spec", "apiKeySecretRef", "key"),
			mismatch("apiKeySecretRef.key", "api key", secretKeyPattern)),

		// Length limits.
		Entry("name of 257 bytes", aiInt, set(strings.Repeat("n", 257), "spec", "name"), tooLong("name", "256")),
		Entry("projectId of 129 bytes", aiInt, set(strings.Repeat("p", 129), "spec", "projectId"), tooLong("projectId", "128")),
		Entry("description of 4097 bytes", aiInt, set(strings.Repeat("d", 4097), "spec", "description"), tooLong("description", "4096")),
		Entry("guidelines of 16385 bytes", aiInt, set(strings.Repeat("g", 16385), "spec", "guidelines"), tooLong("guidelines", "16384")),
		Entry("promptTemplate of 32769 bytes", aiInt, set(strings.Repeat("t", 32769), "spec", "promptTemplate"), tooLong("promptTemplate", "32768")),
		Entry("evalModelName of 129 bytes", aiInt, set(strings.Repeat("m", 129), "spec", "evalModelName"), tooLong("evalModelName", "128")),
		Entry("apiKeySecretRef.name of 254 bytes", aiInt, set(strings.Repeat("s", 254), "spec", "apiKeySecretRef", "name"),
			tooLong("apiKeySecretRef.name", "253")),
		Entry("apiKeySecretRef.key of 254 bytes", aiInt, set(strings.Repeat("k", 254), "spec", "apiKeySecretRef", "key"),
			tooLong("apiKeySecretRef.key", "253")),

		// Empty strings where a value is required to be non-empty.
		Entry("empty projectId", aiInt, set("", "spec", "projectId"), empty("projectId")),
		Entry("empty name", aiInt, set("", "spec", "name"), empty("name")),
		Entry("empty promptTemplate", aiInt, set("", "spec", "promptTemplate"), empty("promptTemplate")),
		Entry("empty evalModelName", aiInt, set("", "spec", "evalModelName"), empty("evalModelName")),
		Entry("empty apiKeySecretRef.name", aiInt, set("", "spec", "apiKeySecretRef", "name"), empty("apiKeySecretRef.name")),
		Entry("empty apiKeySecretRef.key", aiInt, set("", "spec", "apiKeySecretRef", "key"), empty("apiKeySecretRef.key")),
	)

	It("defaults apiKeySecretRef.key to apiKey", func() {
		obj := object(with(humanBoolean, unset("spec", "apiKeySecretRef", "key"))())
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		key, _, err := unstructured.NestedString(obj.Object, "spec", "apiKeySecretRef", "key")
		Expect(err).NotTo(HaveOccurred())
		Expect(key).To(Equal("apiKey"))

		stored, err := offline.Create(ctx, offlineObject(with(humanBoolean, unset("spec", "apiKeySecretRef", "key"))()))
		Expect(err).NotTo(HaveOccurred())
		Expect(stored.Object["spec"]).To(HaveKeyWithValue("apiKeySecretRef", HaveKeyWithValue("key", "apiKey")))
	})

	DescribeTable("updating a Metric",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectUpdate(base, mutate, wantErrs)
		},

		// projectId is the one field that cannot change: the service cannot move a Metric.
		Entry("projectId changed", aiInt, set("proj-43", "spec", "projectId"),
			`spec.projectId: projectId is immutable: the service cannot move a Metric`),

		// A change of variant must make a valid Metric of the new variant.
		Entry("evalType changed from ai, promptTemplate kept", aiInt, set("human", "spec", "evalType"),
			aiOnly("promptTemplate"), aiOnly("evalModelName"), aiOnly("temperature")),
		Entry("evalType changed to ai without a promptTemplate", humanInt, set("ai", "spec", "evalType"),
			"spec.promptTemplate: Required value: promptTemplate is required when evalType is ai"),
		Entry("outputType changed to float, threshold 4 kept", humanInt, set("float", "spec", "outputType"),
			"spec.passingThreshold: Invalid value: passingThreshold must be from 0 to 1 when outputType is float"),
		Entry("outputType changed to boolean, threshold kept", humanInt, set("boolean", "spec", "outputType"),
			"spec.passingThreshold: Forbidden: passingThreshold is not allowed when outputType is boolean"),
		Entry("passingThreshold changed out of range", aiInt, set(6, "spec", "passingThreshold"), intThreshold),

		// What may change: every field but projectId, within the rules.
		Entry("name changed", aiInt, set("Groundedness", "spec", "name")),
		Entry("description changed", aiInt, set("changed", "spec", "description")),
		Entry("description removed", aiInt, unset("spec", "description")),
		Entry("guidelines removed", aiInt, unset("spec", "guidelines")),
		Entry("promptTemplate changed", aiInt, set("{{outputs.answer}}", "spec", "promptTemplate")),
		Entry("evalModelName removed", aiInt, unset("spec", "evalModelName")),
		Entry("temperature changed", aiInt, set(1, "spec", "temperature")),
		Entry("passingThreshold changed", aiInt, set(3, "spec", "passingThreshold")),
		Entry("passingThreshold added", with(aiInt, unset("spec", "passingThreshold")), set(4, "spec", "passingThreshold")),
		Entry("evalType changed from human to heuristic", humanInt, set("heuristic", "spec", "evalType")),
		Entry("variant changed from ai int to human boolean", aiInt, func(obj map[string]any) {
			for _, f := range []string{"promptTemplate", "evalModelName", "temperature", "passingThreshold"} {
				unset("spec", f)(obj)
			}
			set("human", "spec", "evalType")(obj)
			set("boolean", "spec", "outputType")(obj)
		}),
		Entry("deletionPolicy changed to Orphan", aiInt, set("Orphan", "spec", "deletionPolicy")),
		Entry("passingThreshold rewritten from 4 to 4.0", aiInt, set(json.Number("4.0"), "spec", "passingThreshold")),
		Entry("apiKeySecretRef.name changed", aiInt, set("rotated-key", "spec", "apiKeySecretRef", "name")),
		Entry("apiKeySecretRef.key changed", aiInt, set("apiKeyV2", "spec", "apiKeySecretRef", "key")),
		Entry("apiKeySecretRef removed", aiInt, unset("spec", "apiKeySecretRef")),
		Entry("apiKeySecretRef added", with(humanFloat, unset("spec", "apiKeySecretRef")),
			set(map[string]any{"name": "eval-api-key"}, "spec", "apiKeySecretRef")),
		Entry("labels changed", heuristicBoolean, set(map[string]any{"team": "search"}, "metadata", "labels")),
		Entry("metric-id annotation added", heuristicBoolean,
			set(map[string]any{"evaluation.eval-operator.dev/metric-id": "met_123"}, "metadata", "annotations")),
	)
})
