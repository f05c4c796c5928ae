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
	. "github.com/onsi/gomega"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
)

// system returns a valid System with every optional field set.
func system() map[string]any {
	obj := typeMeta("System")
	obj["spec"] = map[string]any{
		"projectId":          "proj-1",
		"name":               "Support bot",
		"description":        "The support chatbot",
		"config":             map[string]any{"model": "gpt-4o", "temperature": 0.1, "images": map[string]any{"api": "sha256:ab"}},
		"apiKeySecretRef":    map[string]any{"name": "eval-api-key"},
		"serviceRef":         map[string]any{"kind": "EvaluationService", "name": "default"},
		"deletionPolicy":     "Orphan",
		"managementPolicies": []any{"Observe", "Create"},
	}
	return obj
}

// systemVersion returns a valid SystemVersion with every optional field set.
func systemVersion() map[string]any {
	obj := typeMeta("SystemVersion")
	obj["spec"] = map[string]any{
		"systemRef":          map[string]any{"name": "support-bot"},
		"name":               "canary 7f9c",
		"config":             map[string]any{"model": "gpt-4o", "images": map[string]any{"api": "sha256:cd"}},
		"managementPolicies": []any{"*"},
	}
	return obj
}

// manyKeys is a config object of n top-level keys.
func manyKeys(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[strings.Repeat("k", i+1)] = i
	}
	return m
}

var _ = Describe("System validation", func() {
	DescribeTable("creating a System",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectCreate(base, mutate, wantErrs)
		},
		Entry("with every field is valid", system, unchanged),
		Entry("with an empty config is valid", system, set(map[string]any{}, "spec", "config")),
		Entry("no config", system, unset("spec", "config"), required("config")),
		Entry("a config that is not an object", system, set("gpt-4o", "spec", "config"),
			`spec.config: Invalid value: "string": spec.config in body must be of type object: "string"`),
		Entry("a config of 65 keys", system, set(manyKeys(65), "spec", "config"),
			`spec.config: Too many: 65: must have at most 64 items`),
		Entry("no name", system, unset("spec", "name"), required("name")),
		Entry("a name with a line break", system, set("a\nb", "spec", "name"), `spec.name: must not contain control characters`),
		Entry("a name of 257 characters", system, set(strings.Repeat("n", 257), "spec", "name"), tooLong("name", "256")),
		Entry("managementPolicies with * and another", system, set([]any{"*", "Create"}, "spec", "managementPolicies"),
			`spec.managementPolicies: Invalid value: managementPolicies: "*" already means every action and cannot be listed with others`),
	)

	DescribeTable("updating a System",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectUpdate(base, mutate, wantErrs)
		},
		Entry("its name and config changed", system, func(obj map[string]any) {
			spec := obj["spec"].(map[string]any)
			spec["name"] = "Support bot 2"
			spec["config"] = map[string]any{"model": "gpt-5"}
		}),
		Entry("projectId changed", system, set("proj-2", "spec", "projectId"),
			`spec.projectId: projectId is immutable: the service cannot move a System`),
	)
})

var _ = Describe("SystemVersion validation", func() {
	DescribeTable("creating a SystemVersion",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectCreate(base, mutate, wantErrs)
		},
		Entry("with every field is valid", systemVersion, unchanged),
		Entry("without a name is valid (the service names it)", systemVersion, unset("spec", "name")),
		Entry("no systemRef", systemVersion, unset("spec", "systemRef"), required("systemRef")),
		Entry("no config", systemVersion, unset("spec", "config"), required("config")),
		Entry("a config that is a list", systemVersion, set([]any{"a"}, "spec", "config"),
			`spec.config: Invalid value: "array": spec.config in body must be of type object: "array"`),
		Entry("an empty name", systemVersion, set("", "spec", "name"), empty("name")),
	)

	DescribeTable("updating a SystemVersion",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectUpdate(base, mutate, wantErrs)
		},
		Entry("its name changed", systemVersion, set("canary 7f9c (promoted)", "spec", "name")),
		Entry("its config changed", systemVersion, set(map[string]any{"model": "gpt-5"}, "spec", "config"),
			`spec.config: Invalid value: config is immutable: a new config is a new SystemVersion`),
		Entry("a config value deep inside changed", systemVersion,
			set(map[string]any{"model": "gpt-4o", "images": map[string]any{"api": "sha256:ef"}}, "spec", "config"),
			`spec.config: Invalid value: config is immutable: a new config is a new SystemVersion`),
		Entry("its System changed", systemVersion, set(map[string]any{"name": "other"}, "spec", "systemRef"),
			`spec.systemRef: Invalid value: systemRef is immutable: a version belongs to one System`),
	)
})

var _ = Describe("UUIDs", func() {
	It("accepts the service's ids and nothing else", func() {
		Expect(evaluationv1alpha1.ValidUUID("87654321-4d3b-4ae4-8c7a-4b6e2a19ccf0")).To(BeTrue())
		Expect(evaluationv1alpha1.ValidUUID("87654321-4D3B-4AE4-8C7A-4B6E2A19CCF0")).To(BeTrue())
		for _, bad := range []string{"", "rev-abc123", "87654321-4d3b-4ae4-8c7a-4b6e2a19ccf", "87654321-4d3b-4ae4-8c7a-4b6e2a19ccf0x",
			"87654321x4d3b-4ae4-8c7a-4b6e2a19ccf0", "g7654321-4d3b-4ae4-8c7a-4b6e2a19ccf0"} {
			Expect(evaluationv1alpha1.ValidUUID(bad)).To(BeFalse(), bad)
		}
	})
})
