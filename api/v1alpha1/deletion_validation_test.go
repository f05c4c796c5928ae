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

// testsetDeletion returns a valid TestsetDeletion with every optional field set.
func testsetDeletion() map[string]any {
	obj := typeMeta("TestsetDeletion")
	obj["spec"] = map[string]any{
		"testsetId":               "ts_2024-q3.regression",
		"apiKeySecretRef":         map[string]any{"name": "eval-api-key"},
		"ttlSecondsAfterFinished": int64(3600),
	}
	return obj
}

// testcaseDeletion returns a valid TestcaseDeletion with every optional field set.
func testcaseDeletion() map[string]any {
	obj := typeMeta("TestcaseDeletion")
	obj["spec"] = map[string]any{
		"testcaseIds":             []any{"tc-1", "tc-2", "tc-3"},
		"apiKeySecretRef":         map[string]any{"name": "eval-api-key"},
		"ttlSecondsAfterFinished": int64(3600),
	}
	return obj
}

// testcaseIDs returns n distinct, valid testcase ids.
func testcaseIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("tc-%05d", i)
	}
	return ids
}

const (
	ttlTooLarge          = "spec.ttlSecondsAfterFinished: Invalid value: 31536001: spec.ttlSecondsAfterFinished in body should be less than or equal to 31536000"
	ttlNegative          = "spec.ttlSecondsAfterFinished: Invalid value: -1: spec.ttlSecondsAfterFinished in body should be greater than or equal to 0"
	testcaseIDsImmutable = "spec.testcaseIds: testcaseIds is immutable, order included: create a new TestcaseDeletion instead"
	ttlChanged           = `spec.ttlSecondsAfterFinished: ttlSecondsAfterFinished is immutable`
	ttlAddedOrRemoved    = `spec.ttlSecondsAfterFinished: ttlSecondsAfterFinished cannot be added or removed after creation`
)

var _ = Describe("TestsetDeletion validation", func() {
	DescribeTable("creating a TestsetDeletion",
		func(mutate mutation, wantErrs ...string) {
			expectCreate(testsetDeletion, mutate, wantErrs)
		},
		Entry("with every field is valid", unchanged),
		Entry("with only testsetId is valid", set(map[string]any{"testsetId": "ts-1"}, "spec")),
		Entry("ttl 0 is valid", set(0, "spec", "ttlSecondsAfterFinished")),
		Entry("ttl of a year is valid", set(31536000, "spec", "ttlSecondsAfterFinished")),
		Entry("no testsetId", unset("spec", "testsetId"), required("testsetId")),
		Entry("empty testsetId", set("", "spec", "testsetId"), empty("testsetId")),
		Entry("testsetId with a slash", set("ts/1", "spec", "testsetId"), mismatch("testsetId", "ts/1", idPattern)),
		Entry("testsetId with a leading '.'", set(".ts", "spec", "testsetId"), mismatch("testsetId", ".ts", idPattern)),
		Entry("testsetId of 129 bytes", set(strings.Repeat("t", 129), "spec", "testsetId"), tooLong("testsetId", "128")),
		Entry("negative ttl", set(-1, "spec", "ttlSecondsAfterFinished"), ttlNegative),
		Entry("ttl above a year", set(31536001, "spec", "ttlSecondsAfterFinished"), ttlTooLarge),
		Entry("apiKeySecretRef.name in upper case", set("Key", "spec", "apiKeySecretRef", "name"),
			mismatch("apiKeySecretRef.name", "Key", secretPattern)),
	)

	DescribeTable("updating a TestsetDeletion",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectUpdate(base, mutate, wantErrs)
		},
		Entry("testsetId changed", testsetDeletion, set("ts-2", "spec", "testsetId"),
			`spec.testsetId: testsetId is immutable: create a new TestsetDeletion instead`),
		Entry("ttl changed", testsetDeletion, set(60, "spec", "ttlSecondsAfterFinished"), ttlChanged),
		Entry("ttl removed", testsetDeletion, unset("spec", "ttlSecondsAfterFinished"), ttlAddedOrRemoved),
		Entry("ttl added", with(testsetDeletion, unset("spec", "ttlSecondsAfterFinished")),
			set(60, "spec", "ttlSecondsAfterFinished"), ttlAddedOrRemoved),
		Entry("apiKeySecretRef changed", testsetDeletion, set("rotated-key", "spec", "apiKeySecretRef", "name")),
	)
})

var _ = Describe("TestcaseDeletion validation", func() {
	DescribeTable("creating a TestcaseDeletion",
		func(mutate mutation, wantErrs ...string) {
			expectCreate(testcaseDeletion, mutate, wantErrs)
		},
		Entry("with every field is valid", unchanged),
		Entry("with one testcase and nothing else is valid", set(map[string]any{"testcaseIds": []string{"tc-1"}}, "spec")),
		Entry("with 10000 testcases is valid", set(testcaseIDs(10000), "spec", "testcaseIds")),
		Entry("no testcaseIds", unset("spec", "testcaseIds"), required("testcaseIds")),
		Entry("empty testcaseIds", set([]string{}, "spec", "testcaseIds"),
			"spec.testcaseIds: Invalid value: 0: spec.testcaseIds in body should have at least 1 items"),
		Entry("10001 testcaseIds", set(testcaseIDs(10001), "spec", "testcaseIds"),
			"spec.testcaseIds: Too many: 10001: must have at most 10000 items"),
		Entry("a duplicate testcase id", set([]string{"tc-1", "tc-2", "tc-1"}, "spec", "testcaseIds"),
			`spec.testcaseIds[2]: Duplicate value: "tc-1"`),
		Entry("a testcase id with a space", set([]string{"tc-1", "tc 2"}, "spec", "testcaseIds"),
			mismatch("testcaseIds[1]", "tc 2", idPattern)),
		Entry("an empty testcase id", set([]string{""}, "spec", "testcaseIds"), empty("testcaseIds[0]")),
		Entry("a testcase id of 129 bytes", set([]string{strings.Repeat("t", 129)}, "spec", "testcaseIds"),
			tooLong("testcaseIds[0]", "128")),
		Entry("negative ttl", set(-1, "spec", "ttlSecondsAfterFinished"), ttlNegative),
		Entry("ttl above a year", set(31536001, "spec", "ttlSecondsAfterFinished"), ttlTooLarge),
	)

	DescribeTable("updating a TestcaseDeletion",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectUpdate(base, mutate, wantErrs)
		},
		Entry("a testcase id added", testcaseDeletion, set([]string{"tc-1", "tc-2", "tc-3", "tc-4"}, "spec", "testcaseIds"),
			testcaseIDsImmutable),
		Entry("a testcase id removed", testcaseDeletion, set([]string{"tc-1", "tc-2"}, "spec", "testcaseIds"),
			testcaseIDsImmutable),
		Entry("testcase ids reordered", testcaseDeletion, set([]string{"tc-3", "tc-2", "tc-1"}, "spec", "testcaseIds"),
			testcaseIDsImmutable),
		Entry("the last of 10000 testcase ids changed", with(testcaseDeletion, set(testcaseIDs(10000), "spec", "testcaseIds")),
			set(append(testcaseIDs(9999), "tc-x"), "spec", "testcaseIds"), testcaseIDsImmutable),
		Entry("labels changed on 10000 testcase ids", with(testcaseDeletion, set(testcaseIDs(10000), "spec", "testcaseIds")),
			set(map[string]any{"team": "search"}, "metadata", "labels")),
		Entry("ttl changed", testcaseDeletion, set(60, "spec", "ttlSecondsAfterFinished"), ttlChanged),
		Entry("ttl removed", testcaseDeletion, unset("spec", "ttlSecondsAfterFinished"), ttlAddedOrRemoved),
		Entry("ttl added", with(testcaseDeletion, unset("spec", "ttlSecondsAfterFinished")),
			set(60, "spec", "ttlSecondsAfterFinished"), ttlAddedOrRemoved),
		Entry("apiKeySecretRef changed", testcaseDeletion, set("rotated-key", "spec", "apiKeySecretRef", "name")),
	)
})
