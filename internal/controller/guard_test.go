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

package controller_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

// createAsManifest creates obj as kubectl would from a manifest that leaves
// out the spec fields named by omit (and every empty one), so that the API
// server's defaults fill them in, and reads the stored object back into obj.
func createAsManifest(obj client.Object, omit ...string) {
	GinkgoHelper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: content}
	gvk, err := apiutil.GVKForObject(obj, framework.Scheme())
	Expect(err).NotTo(HaveOccurred())
	u.SetGroupVersionKind(gvk)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	for _, field := range omit {
		unstructured.RemoveNestedField(u.Object, "spec", field)
	}
	Expect(k8s.Create(rootCtx, u)).To(Succeed())
	Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

// The create guard records the pending create before the one create: a
// write that must touch nothing but metadata, whatever the API server
// defaulted, or an immutable spec refuses it and the object never starts.
var _ = Describe("The create guard of each kind", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() {
		ns, up = newFixture()
		startManager(up.opts)
	})

	// unchangedSpec asserts that obj's spec was never written after its create.
	unchangedSpec := func(obj client.Object) {
		GinkgoHelper()
		Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		Expect(obj.GetGeneration()).To(BeEquivalentTo(1), "the guard writes metadata only")
		Expect(obj.GetAnnotations()).To(HaveKey(v1alpha1.ServiceAnnotation), "it went through the guard")
	}

	It("creates a Metric that relies on the defaults of its policies", func() {
		m := humanBoolean(ns, "defaults")
		createAsManifest(m, "deletionPolicy", "managementPolicies", "adoptionPolicy")
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		unchangedSpec(m)
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
	})

	It("creates a Testset that leaves out its field mapping and policies", func() {
		t := newTestset(ns, "defaults", inline(`{"id":"a","question":"q0"}`))
		t.Spec.FieldMapping = v1alpha1.TestsetFieldMapping{}
		createAsManifest(t, "fieldMapping", "deletionPolicy", "managementPolicies")
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		unchangedSpec(t)
		Expect(up.Calls(evalapitest.OpCreateTestset)).To(Equal(1))
	})

	It("creates an EvaluationRun that leaves out passCriteria, humanScoring and timeout", func() {
		Expect(k8s.Create(rootCtx, newTestset(ns, "qa", inline(`{"id":"a","question":"q0"}`)))).To(Succeed())
		Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		e := newRun(ns, "defaults", "exact")
		createAsManifest(e, "passCriteria", "humanScoring", "timeout")
		Expect(e.Spec.PassCriteria.MinPassRate).To(BeNil(), "the API server leaves an absent passCriteria absent")
		runID(e)
		unchangedSpec(e)
		Expect(up.Calls(evalapitest.OpCreateRun)).To(Equal(1))
	})
})
