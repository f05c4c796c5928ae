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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var _ = Describe("Messages that quote what a tenant wrote", func() {
	It("gives a Testset whose duplicate key is 200,000 characters a readable DuplicateKey status and event", func() {
		ns, up := newFixture()
		startManager(up.opts)
		// Under the limit of one testcase (256 KiB), far over a condition
		// message's (32 KiB).
		key := strings.Repeat("K", 200_000)
		line := `{"i":"` + key + `"}` + "\n"
		Expect(k8s.Create(rootCtx, testcasesConfigMap(ns, "long", line+line))).To(Succeed())
		t := newTestset(ns, "long", fromConfigMap("long"))
		t.Spec.KeyField = "i"
		Expect(k8s.Create(rootCtx, t)).To(Succeed())

		Eventually(readyCondition(t)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonDuplicateKey),
			HaveField("Message", And(
				ContainSubstring(`line 1 and 2 have the same i "KKKKKKKK`),
				ContainSubstring("(200000 bytes)"),
				WithTransform(func(s string) int { return len(s) }, BeNumerically("<", 300)))),
		))
		for _, c := range t.Status.Conditions {
			Expect(len(c.Message)).To(BeNumerically("<=", kit.MaxConditionMessage), c.Type)
		}
		Eventually(warningEvents(ns, t.Name)).Should(ContainElement(v1alpha1.ReasonDuplicateKey))
		Expect(up.Calls(evalapitest.OpCreateTestset)).To(BeZero())
	})
})
