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
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// readyCondition is a Ready condition as the operator writes it.
var readyCondition = map[string]any{
	"type":               "Ready",
	"status":             "True",
	"reason":             "Created",
	"message":            "the remote Metric exists",
	"lastTransitionTime": "2025-01-01T00:00:00Z",
	"observedGeneration": 1,
}

// The spec rules, transition rules included, must not get in the way of the
// operator's status writes.
var _ = DescribeTable("updating status",
	func(base manifest, status map[string]any) {
		obj := object(base())
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		set(status, "status")(obj.Object)
		Expect(k8sClient.Status().Update(ctx, obj)).To(Succeed())
		conditions, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
		Expect(err).NotTo(HaveOccurred())
		Expect(conditions).To(HaveLen(1))
	},
	Entry("of a Metric", aiFloat, map[string]any{
		"id": "met_123", "evalModelName": "gpt-4o", "temperature": 0, "passingThreshold": 0.9,
		"observedGeneration": 1, "conditions": []any{readyCondition},
	}),
	Entry("of a TestsetDeletion", manifest(testsetDeletion), map[string]any{
		"success": true, "attempts": 2, "completionTime": "2025-01-01T00:00:00Z",
		"observedGeneration": 1, "conditions": []any{readyCondition},
	}),
	Entry("of a TestcaseDeletion", manifest(testcaseDeletion), map[string]any{
		"deleted": 3, "success": true, "attempts": 1,
		"observedGeneration": 1, "conditions": []any{readyCondition},
	}),
)
