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
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A new object must read as in progress before any operator has touched it,
// or Flux and `kubectl wait --for=jsonpath` would call it done at once. The
// CRDs default its status the way Gateway API's do.
var _ = DescribeTable("a new object's status, before any operator runs",
	func(base manifest) {
		obj := object(base())
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())

		read := &unstructured.Unstructured{}
		read.SetGroupVersionKind(obj.GroupVersionKind())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), read)).To(Succeed())

		res, err := status.Compute(read)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Status).To(Equal(status.InProgressStatus), res.Message)

		conditions, _, err := unstructured.NestedSlice(read.Object, "status", "conditions")
		Expect(err).NotTo(HaveOccurred())
		Expect(conditions).To(ConsistOf(
			HaveKeyWithValue("type", "Ready"),
			HaveKeyWithValue("type", "Reconciling"),
		))
		Expect(conditions).To(HaveEach(And(
			HaveKeyWithValue("reason", "Pending"),
			HaveKeyWithValue("message", "Waiting for the operator"),
		)))
		Expect(conditions[0]).To(HaveKeyWithValue("status", "Unknown"))
	},
	Entry("Metric", aiFloat),
	Entry("TestsetDeletion", manifest(testsetDeletion)),
	Entry("TestcaseDeletion", manifest(testcaseDeletion)),
)
