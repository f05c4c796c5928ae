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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var _ = Describe("Refused metric-id claims", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	// resourceVersion reads m's current resourceVersion.
	resourceVersion := func(m *v1alpha1.Metric) func(Gomega) string {
		return func(g Gomega) string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return m.ResourceVersion
		}
	}

	It("stalls a Metric whose metric-id annotation is not a valid id, once, with no call and no retry loop", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "long-id")
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: strings.Repeat("x", 300)}
		createMetric(m)
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonInvalidMetricID))
		Expect(readyCondition(m)(Default).Message).To(And(ContainSubstring("not a valid id"), ContainSubstring("(300 bytes)")))
		Expect(m.Status.ID).To(BeEmpty(), "an invalid id is never recorded in status")
		rv := m.ResourceVersion
		Consistently(resourceVersion(m), 2*time.Second).Should(Equal(rv), "no further writes")
		Expect(up.Calls(evalapitest.OpGetMetric)).To(BeZero())
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(BeZero())
	})

	It("stalls the later of two Metrics claiming one remote id, naming the holder, and leaves the holder alone", func() {
		startManager(up.opts)
		holder := humanBoolean(ns, "holder")
		id := readyMetric(holder, v1alpha1.ReasonCreated)
		copied := humanBoolean(ns, "copied")
		copied.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: id}
		createMetric(copied)

		Eventually(readyCondition(copied)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonMetricIDClaimed))
		Expect(readyCondition(copied)(Default).Message).To(ContainSubstring("Metric holder "))
		Expect(copied.Status.ID).To(BeEmpty())
		Expect(up.Calls(evalapitest.OpGetMetric)).To(BeZero(), "the copy never reads the remote Metric")
		Expect(readyCondition(holder)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))

		// Deleting the copy must not delete the holder's remote Metric.
		Expect(k8s.Delete(rootCtx, copied)).To(Succeed())
		Eventually(func() error { return k8s.Get(rootCtx, client.ObjectKeyFromObject(copied), &v1alpha1.Metric{}) }).
			Should(Satisfy(apierrors.IsNotFound))
		Expect(up.Calls(evalapitest.OpDeleteMetric)).To(BeZero())
		remoteOf(up, id)
	})
})
