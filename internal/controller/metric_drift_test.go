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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

const driftInterval = 10 * time.Minute

var _ = Describe("Metric drift", func() {
	var (
		ns    string
		up    *upstream
		clock *clocktesting.FakeClock
		m     *v1alpha1.Metric
		id    string
	)
	BeforeEach(func() {
		ns, up = newFixture()
		clock = clocktesting.NewFakeClock(testStart)
		up.opts.Clock, up.opts.DriftInterval = clock, driftInterval
		startManager(up.opts)
		m = humanBoolean(ns, "drifting")
		id = readyMetric(m, v1alpha1.ReasonCreated)
	})

	// nextCheck moves the clock one interval on, past any Metric's next
	// check, and re-triggers the namespace's Metrics.
	nextCheck := func(label string) {
		GinkgoHelper()
		clock.Step(driftInterval)
		touchSecret(ns, label)
	}
	gets := func() int { return up.Calls(evalapitest.OpGetMetric) }

	It("reads a Ready Metric once per interval and costs no write when nothing drifted", func() {
		touchSecret(ns, "before")
		Consistently(gets, time.Second).Should(BeZero(), "the first check waits for its time")
		Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		version := m.ResourceVersion

		nextCheck("first")
		Eventually(gets).Should(Equal(1))
		touchSecret(ns, "same-interval")
		Consistently(func(g Gomega) {
			g.Expect(gets()).To(Equal(1))
			g.Expect(up.Calls(evalapitest.OpUpdateMetric)).To(BeZero())
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			g.Expect(m.ResourceVersion).To(Equal(version))
		}, 2*time.Second).Should(Succeed())

		nextCheck("second")
		Eventually(gets).Should(Equal(2))
	})

	It("puts back a remote edit of several fields with one update, a DriftCorrected event and a counter, and no more", func() {
		before := driftCorrections()
		Expect(up.EditMetric(id, func(r *evalapi.Metric) {
			r.Name, r.Description, r.Guidelines = "renamed in the UI", ptr.To("added in the UI"), "edited in the UI"
			r.OutputType, r.PassingThreshold = "int", ptr.To(2.0)
		})).To(BeTrue())
		nextCheck("drift")

		// m is human/boolean with nothing else set: the service's defaults.
		want := evalapi.Metric{ID: id, Name: "m", EvalType: "human", OutputType: "boolean"}
		Eventually(func() evalapi.Metric { return remoteOf(up, id) }).Should(Equal(want))
		Expect(gets()).To(Equal(1))
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
		Eventually(eventReasons(ns, m.Name, corev1.EventTypeNormal)).Should(ContainElement(v1alpha1.EventDriftCorrected))
		Expect(driftCorrections()).To(Equal(before + 1))
		Expect(readyCondition(m)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))

		// Two more intervals: each reads, none writes.
		for i, label := range []string{"after-1", "after-2"} {
			nextCheck(label)
			Eventually(gets).Should(Equal(2 + i))
		}
		Consistently(func() int { return up.Calls(evalapitest.OpUpdateMetric) }, time.Second).Should(Equal(1))
		Expect(remoteOf(up, id)).To(Equal(want))
		Expect(driftCorrections()).To(Equal(before + 1))
	})

	It("stops at RemoteNotFound when the remote Metric is gone, and creates it again only when a person allows it", func() {
		Expect(up.RemoveMetric(id)).To(BeTrue())
		nextCheck("gone")
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRemoteNotFound))
		Eventually(warningEvents(ns, m.Name)).Should(ContainElement(v1alpha1.ReasonRemoteNotFound))
		Consistently(up.Creates, time.Second).Should(Equal(1))

		// Naming another id allows nothing.
		setAnnotation(m, v1alpha1.RecreateAnnotation, ptr.To("met_other"))
		Consistently(up.Creates, 2*time.Second).Should(Equal(1))
		Expect(readyCondition(m)(Default)).To(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRemoteNotFound))

		setAnnotation(m, v1alpha1.RecreateAnnotation, &id)
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(m.Status.ID).NotTo(Or(BeEmpty(), Equal(id)))
		Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, m.Status.ID))
		Expect(m.Annotations).NotTo(HaveKey(v1alpha1.RecreateAnnotation))
		Consistently(up.Creates, time.Second).Should(Equal(2))
	})
})

// driftCorrections reads the operator's drift correction counter.
func driftCorrections() float64 {
	GinkgoHelper()
	return registrySum("evaloperator_drift_corrections_total", nil)
}

// metricReconciles counts the Metric reconciles of every manager the suite ran.
func metricReconciles() float64 {
	GinkgoHelper()
	return registrySum("controller_runtime_reconcile_total", map[string]string{"controller": "metric"})
}

// registrySum sums the series of name that carry labels in the process's
// metrics registry, where every manager of the suite counts.
func registrySum(name string, labels map[string]string) float64 {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	return framework.Sum(byName, name, labels)
}
