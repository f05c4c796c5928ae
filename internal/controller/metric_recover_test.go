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
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var _ = Describe("Metric reconciler settling a create whose outcome is unknown", func() {
	// settled is a time when a create marked at testStart is over: past the
	// 2s request timeout and the margin.
	settled := testStart.Add(time.Minute)
	var (
		ns  string
		up  *upstream
		clk *clocktesting.FakePassiveClock
	)
	BeforeEach(func() {
		ns, up = newFixture()
		clk = clocktesting.NewFakePassiveClock(testStart)
		up.opts.Clock = clk
	})

	// create creates m, and deletes it after the spec: a Metric left pending
	// would be settled against the next spec's fake service.
	create := func(m *v1alpha1.Metric) {
		GinkgoHelper()
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(rootCtx, m))).To(Succeed()) })
	}

	// cutOff creates m while the fake plays fault on its create, and waits
	// for CreateOutcomeUnknown with no list sent: the request may still be
	// in flight. It returns the manager.
	cutOff := func(m *v1alpha1.Metric, fault evalapitest.Fault) *manager {
		GinkgoHelper()
		up.InjectFaults(evalapitest.OpCreateMetric, fault)
		mgr := startManager(up.opts)
		create(m)
		Eventually(readyCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown),
			HaveField("Message", ContainSubstring("at 2026-11-21T10:00:12Z, when the request can no longer be in flight"))))
		Expect(up.Calls(evalapitest.OpListMetrics)).To(BeZero())
		return mgr
	}

	// seed creates a remote Metric of spec, as someone else would, and returns its id.
	seed := func(spec v1alpha1.MetricSpec) string {
		GinkgoHelper()
		remote, err := up.opts.Service.CreateMetric(rootCtx, testKey, string(spec.ProjectID), convert.RequestFor(&spec))
		Expect(err).NotTo(HaveOccurred())
		return remote.ID
	}

	// crashed is m as a crash between its pending mark and its id leaves it.
	crashed := func(m *v1alpha1.Metric) *v1alpha1.Metric {
		m.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: "2026-11-21T10:00:00Z"}
		return m
	}

	DescribeTable("stops at CreateOutcomeUnknown on a gateway's answer to a create, and never posts again",
		func(fault evalapitest.Fault) {
			m := humanBoolean(ns, "gateway")
			cutOff(m, fault)
			Eventually(warningEvents(ns, m.Name)).Should(ContainElement(v1alpha1.ReasonCreateOutcomeUnknown))
			Consistently(func(g Gomega) {
				g.Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
				g.Expect(readyCondition(m)(g)).To(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))
			}, 2*time.Second).Should(Succeed())
			Expect(m.Annotations).To(HaveKey(v1alpha1.CreatePendingAnnotation))
			Expect(m.Status.ID).To(BeEmpty())
		},
		Entry("502 with a proxy's page", evalapitest.Status502Gateway),
		Entry("504 with a proxy's page", evalapitest.Status504Gateway),
		Entry("502 with an ApiError", evalapitest.Status(http.StatusBadGateway)),
		Entry("504 with an ApiError", evalapitest.Status(http.StatusGatewayTimeout)),
	)

	It("adopts the Metric a cut-off create committed, found in the service's list, as Recovered", func() {
		m := humanBoolean(ns, "committed")
		mgr := cutOff(m, evalapitest.CommitThenReset)
		id := up.CreatedMetrics()[0].Metric.ID
		// Newer Metrics push it to the list's second page; the first list fails.
		for i := range 150 {
			other := humanBoolean(ns, "other").Spec
			other.Name = v1alpha1.LineText(fmt.Sprintf("other-%03d", i))
			seed(other)
		}
		up.InjectFaults(evalapitest.OpListMetrics, evalapitest.Status500)

		mgr.stop()
		clk.SetTime(settled)
		startManager(up.opts)
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonRecovered))
		Expect(m.Status.ID).To(Equal(id))
		Expect(m.Status.PassingThreshold).To(BeNil())
		Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, id))
		Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
		Expect(remoteNamed(up, "m")).To(ConsistOf(id))
		Expect(up.Calls(evalapitest.OpListMetrics)).To(Equal(3))
		Eventually(eventReasons(ns, m.Name, corev1.EventTypeNormal)).Should(ContainElement(v1alpha1.ReasonRecovered))
	})

	It("creates again when the cut-off create never committed", func() {
		m := humanBoolean(ns, "never-committed")
		mgr := cutOff(m, evalapitest.Reset)
		Expect(up.Creates()).To(BeZero())

		mgr.stop()
		clk.SetTime(settled)
		startManager(up.opts)
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(2))
		Expect(up.Metrics()).To(HaveLen(1))
		Expect(m.Status.ID).To(Equal(up.Metrics()[0].Metric.ID))
	})

	It("waits for a person when the service holds two equal candidates", func() {
		m := crashed(humanBoolean(ns, "ambiguous"))
		seed(m.Spec)
		seed(m.Spec)
		clk.SetTime(settled)
		create(m)
		startManager(up.opts)
		Eventually(readyCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown),
			HaveField("Message", ContainSubstring("holds 2 Metrics equal to its spec"))))
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, time.Second).Should(Equal(2))
		Expect(m.Annotations).NotTo(HaveKey(v1alpha1.MetricIDAnnotation))
	})

	It("does not adopt a candidate another Metric object claims", func() {
		owned := seed(humanBoolean(ns, "x").Spec)
		owner := humanBoolean(ns, "owner")
		owner.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: owned}
		create(owner)
		m := crashed(humanBoolean(ns, "claimant"))
		clk.SetTime(settled)
		create(m)
		startManager(up.opts)
		Eventually(readyCondition(owner)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonAdopted))
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(m.Status.ID).NotTo(Equal(owned))
		Expect(remoteNamed(up, "m")).To(ConsistOf(owned, m.Status.ID))
	})

	It("waits for a person, without listing, when the pending mark is unreadable", func() {
		m := humanBoolean(ns, "unreadable")
		m.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: "yesterday"}
		clk.SetTime(settled)
		create(m)
		startManager(up.opts)
		Eventually(readyCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown),
			HaveField("Message", ContainSubstring("is unreadable"))))
		Consistently(func() int { return up.Calls(evalapitest.OpListMetrics) + up.Calls(evalapitest.OpCreateMetric) },
			time.Second).Should(BeZero())
	})
})

var _ = Describe("Metric reconciler against a service without the list operation", func() {
	It("stays at CreateOutcomeUnknown for a person, as it did before the service could list", func() {
		ns := newNamespace()
		Expect(k8s.Create(rootCtx, apiKeySecret(ns, testKey))).To(Succeed())
		up := newUpstream(evalapitest.WithoutMetricLifecycle())
		clk := clocktesting.NewFakePassiveClock(testStart)
		up.opts.Clock = clk
		up.InjectFaults(evalapitest.OpCreateMetric, evalapitest.CommitThenReset)
		mgr := startManager(up.opts)
		m := humanBoolean(ns, "old-service")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		DeferCleanup(func() { Expect(k8s.Delete(rootCtx, m)).To(Succeed()) })
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))

		mgr.stop()
		clk.SetTime(testStart.Add(time.Minute))
		startManager(up.opts)
		Eventually(readyCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown),
			HaveField("Message", ContainSubstring("listing the project's Metrics failed"))))
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) + up.Calls(evalapitest.OpListMetrics) },
			time.Second).Should(Equal(2))
		Expect(up.Creates()).To(Equal(1))
		Expect(m.Annotations).NotTo(HaveKey(v1alpha1.MetricIDAnnotation))
	})
})

// remoteNamed returns the ids of the service's Metrics named name.
func remoteNamed(up *upstream, name string) []string {
	var ids []string
	for _, r := range up.Metrics() {
		if r.Metric.Name == name {
			ids = append(ids, r.Metric.ID)
		}
	}
	return ids
}
