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

package main

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("kubectl eval gate --promote", func() {
	It("asks the operator to promote the run's SystemVersion once it Passed, and the API server refuses it without one", func(ctx SpecContext) {
		ns, err := framework.NewNamespace(ctx, k8s, "gate-promote-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		dir := GinkgoT().TempDir()
		versioned := filepath.Join(dir, "versioned.yaml")
		Expect(os.WriteFile(versioned, []byte(gateTemplate+"  systemVersionRef: {name: support-assistant-v42}\n"), 0o600)).To(Succeed())
		go judge(ctx, ns, verdictStatus("Passed", metav1.ConditionTrue, "every judged Metric reached its minimum pass rate"))
		_, _, err = run(ctx, nil, "gate", "-n", ns, "-f", versioned, "--promote", "--poll-interval", "100ms")
		Expect(err).NotTo(HaveOccurred())
		var l v1alpha1.EvaluationRunList
		Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
		Expect(l.Items[0].Spec.Promote).To(HaveValue(BeTrue()))

		unversioned := filepath.Join(dir, "unversioned.yaml")
		Expect(os.WriteFile(unversioned, []byte(gateTemplate), 0o600)).To(Succeed())
		_, _, err = run(ctx, nil, "gate", "-n", ns, "-f", unversioned, "--promote")
		Expect(exitCode(err)).To(Equal(2))
		Expect(err).To(MatchError(ContainSubstring("name that SystemVersion in systemVersionRef")))
	})
})
