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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func policies(actions ...any) mutation { return set(actions, "spec", "managementPolicies") }

var _ = Describe("Metric management and adoption policies", func() {
	DescribeTable("creating a Metric",
		func(base manifest, mutate mutation, wantErrs ...string) {
			expectCreate(base, mutate, wantErrs)
		},
		Entry("read-only", humanInt, policies("Observe")),
		Entry("every action named", humanInt, policies("Observe", "Create", "Update", "Delete")),
		Entry("no Update", humanInt, policies("Create", "Delete")),
		Entry("the default written out", humanInt, policies("*")),
		Entry("adoptionPolicy ByName", humanInt, set("ByName", "spec", "adoptionPolicy")),

		Entry("* with another action", humanInt, policies("*", "Observe"),
			`spec.managementPolicies: Invalid value: managementPolicies: "*" already means every action and cannot be listed with others`),
		Entry("a repeated action", humanInt, policies("Observe", "Create", "Observe"),
			`spec.managementPolicies: Invalid value: managementPolicies must not repeat an action`),
		Entry("an unknown action", humanInt, policies("Observe", "Read"),
			`spec.managementPolicies[1]: Unsupported value: "Read": supported values: "Observe", "Create", "Update", "Delete", "*"`),
		Entry("an empty list", humanInt, set([]any{}, "spec", "managementPolicies"),
			`spec.managementPolicies: Invalid value: 0: spec.managementPolicies in body should have at least 1 items`),
		Entry("an unknown adoptionPolicy", humanInt, set("ByLabel", "spec", "adoptionPolicy"),
			`spec.adoptionPolicy: Unsupported value: "ByLabel": supported values: "None", "ByName"`),
	)

	It("defaults to every action and no adoption, today's behaviour", func() {
		obj := object(humanInt())
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		read := &unstructured.Unstructured{}
		read.SetGroupVersionKind(obj.GroupVersionKind())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), read)).To(Succeed())
		Expect(read.Object["spec"]).To(And(
			HaveKeyWithValue("managementPolicies", ConsistOf("*")),
			HaveKeyWithValue("adoptionPolicy", "None"),
		))
	})
})
