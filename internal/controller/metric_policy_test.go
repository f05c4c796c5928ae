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
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var readOnly = []v1alpha1.ManagementAction{v1alpha1.ManagementObserve}

var _ = Describe("Metric management policies", func() {
	var (
		ns    string
		up    *upstream
		clock *clocktesting.FakeClock
	)
	BeforeEach(func() {
		ns, up = newFixture()
		clock = clocktesting.NewFakeClock(testStart)
		up.opts.Clock, up.opts.DriftInterval = clock, driftInterval
	})

	// writes counts the requests that change the service, the test's own included.
	writes := func() int {
		return up.Calls(evalapitest.OpCreateMetric) + up.Calls(evalapitest.OpUpdateMetric) + up.Calls(evalapitest.OpDeleteMetric)
	}
	// seed creates a Metric in the service directly, as another cluster or the UI would.
	seed := func(req evalapi.MetricRequest) string {
		GinkgoHelper()
		remote, err := up.opts.Service.CreateMetric(rootCtx, testKey, "proj-1", req)
		Expect(err).NotTo(HaveOccurred())
		return remote.ID
	}
	nextCheck := func(label string) {
		GinkgoHelper()
		clock.Step(driftInterval)
		touchSecret(ns, label)
	}
	withPolicies := func(m *v1alpha1.Metric, p ...v1alpha1.ManagementAction) *v1alpha1.Metric {
		m.Spec.ManagementPolicies = p
		return m
	}

	Describe(`a read-only Metric (["Observe"])`, func() {
		var (
			m  *v1alpha1.Metric
			id string
		)
		BeforeEach(func() {
			id = seed(evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "boolean", Guidelines: ptr.To("from the UI")})
			m = withPolicies(humanBoolean(ns, "mirror"), readOnly...)
			m.Spec.Guidelines = ptr.To[v1alpha1.Text]("from the UI")
			m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: id}
			startManager(up.opts)
			readyMetric(m, v1alpha1.ReasonObserved)
			DeferCleanup(func() { Expect(writes()).To(Equal(1), "a read-only Metric wrote to the service (1: the seed)") })
		})

		It("mirrors the remote Metric, Synced, and never writes to it, nor keeps the object on deletion", func() {
			Expect(syncedCondition(m)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonUpToDate))
			expectStatusOf(m, remoteOf(up, id))
			Expect(m.Finalizers).To(BeEmpty())

			Expect(k8s.Delete(rootCtx, m)).To(Succeed())
			Eventually(gone(m)).Should(BeTrue())
			_, kept := up.Metric(id)
			Expect(kept).To(BeTrue())
		})

		It("reports a remote edit as Drifted, naming the fields, with one Warning event per new difference", func() {
			Expect(up.EditMetric(id, func(r *evalapi.Metric) {
				r.Guidelines, r.Description = "edited in the UI", ptr.To("secret words")
			})).To(BeTrue())
			nextCheck("drift")
			Eventually(syncedCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonDrifted),
				HaveField("Message", And(ContainSubstring("description, guidelines"), Not(ContainSubstring("secret words"))))))
			Expect(m.Status.Guidelines).To(Equal(ptr.To[v1alpha1.Text]("edited in the UI")), "status is what the service holds")
			Expect(readyCondition(m)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonObserved))
			Expect(kstatusOf(m)).To(Equal(kstatus.CurrentStatus), "kstatus ignores Synced: Flux and kubectl wait see it Ready")
			Eventually(driftedEvents(ns, m.Name)).Should(Equal(1))

			// The same difference at the next check is no news, and writes nothing.
			Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			version := m.ResourceVersion
			nextCheck("same-drift")
			Eventually(func() int { return up.Calls(evalapitest.OpGetMetric) }).Should(Equal(3))
			Consistently(driftedEvents(ns, m.Name), time.Second).Should(Equal(1))
			Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			Expect(m.ResourceVersion).To(Equal(version))

			// A new difference is.
			Expect(up.EditMetric(id, func(r *evalapi.Metric) { r.Name = "renamed" })).To(BeTrue())
			nextCheck("more-drift")
			Eventually(syncedCondition(m)).Should(HaveField("Message", ContainSubstring("name, description, guidelines")))
			Eventually(driftedEvents(ns, m.Name)).Should(Equal(2))
		})

		It("does not send a spec edit, and reports it", func() {
			editSpec(m, func(s *v1alpha1.MetricSpec) { s.Guidelines = ptr.To[v1alpha1.Text]("edited in Git") })
			Eventually(syncedCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonDrifted),
				HaveField("ObservedGeneration", m.Generation), HaveField("Message", ContainSubstring("guidelines"))))
			Expect(readyCondition(m)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonObserved))
			Expect(remoteOf(up, id).Guidelines).To(Equal("from the UI"))
		})
	})

	It(`waits, Stalled CreateNotAllowed, with no id and no adoption, and calls nothing`, func() {
		m := withPolicies(humanBoolean(ns, "nothing-to-observe"), readOnly...)
		startManager(up.opts)
		createMetric(m)
		Eventually(readyCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateNotAllowed),
			HaveField("Message", ContainSubstring(`spec.managementPolicies ["Observe"] do not allow Create`))))
		Consistently(func() int { return allCalls(up) }, time.Second).Should(BeZero())
		Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
	})

	It("without Update creates, but reports a spec edit instead of sending it", func() {
		m := withPolicies(humanBoolean(ns, "no-update"), v1alpha1.ManagementCreate, v1alpha1.ManagementDelete)
		startManager(up.opts)
		id := readyMetric(m, v1alpha1.ReasonCreated)
		Expect(syncedCondition(m)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonUpToDate))

		editSpec(m, func(s *v1alpha1.MetricSpec) { s.Description = ptr.To[v1alpha1.Text]("edited in Git") })
		Eventually(syncedCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonDrifted),
			HaveField("Message", ContainSubstring("differs from the spec in description"))))
		Expect(readyCondition(m)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonObserved))
		Consistently(func() int { return up.Calls(evalapitest.OpUpdateMetric) }, time.Second).Should(BeZero())
		Expect(remoteOf(up, id).Description).To(BeNil())

		// Allowing Update sends it, once.
		editSpec(m, func(s *v1alpha1.MetricSpec) {
			s.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementAll}
		})
		Eventually(syncedCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonUpToDate))
		Expect(remoteOf(up, id).Description).To(Equal(ptr.To("edited in Git")))
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
	})

	It("with Update allowed corrects drift as before, and Synced stays True", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "corrected")
		id := readyMetric(m, v1alpha1.ReasonCreated)
		Expect(up.EditMetric(id, func(r *evalapi.Metric) { r.Guidelines = "edited in the UI" })).To(BeTrue())
		nextCheck("drift")
		Eventually(func() string { return remoteOf(up, id).Guidelines }).Should(BeEmpty())
		Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
		Eventually(eventReasons(ns, m.Name, corev1.EventTypeNormal)).Should(ContainElement(v1alpha1.EventDriftCorrected))
		Expect(syncedCondition(m)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonUpToDate))
		Expect(driftedEvents(ns, m.Name)()).To(BeZero())
	})

	It("without Delete keeps the remote Metric whatever deletionPolicy says", func() {
		m := withPolicies(humanBoolean(ns, "kept"), v1alpha1.ManagementCreate, v1alpha1.ManagementUpdate)
		m.Spec.DeletionPolicy = v1alpha1.DeletionPolicyDelete
		startManager(up.opts)
		id := readyMetric(m, v1alpha1.ReasonCreated)
		Expect(m.Finalizers).To(BeEmpty())
		Expect(k8s.Delete(rootCtx, m)).To(Succeed())
		Eventually(gone(m)).Should(BeTrue())
		Consistently(func() int { return up.Calls(evalapitest.OpDeleteMetric) }, time.Second).Should(BeZero())
		_, kept := up.Metric(id)
		Expect(kept).To(BeTrue())
	})

	Describe("adoption by name", func() {
		byName := func(name string, p ...v1alpha1.ManagementAction) *v1alpha1.Metric {
			m := withPolicies(humanBoolean(ns, name), p...)
			m.Spec.AdoptionPolicy = v1alpha1.AdoptionByName
			return m
		}

		It("adopts the one remote Metric with its name, records its id, and puts the spec in place", func() {
			seed(evalapi.MetricRequest{Name: "other", EvalType: "human", OutputType: "boolean"})
			id := seed(evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "boolean", Guidelines: ptr.To("from the UI")})
			m := byName("adopter")
			startManager(up.opts)
			Expect(readyMetric(m, v1alpha1.ReasonAdopted)).To(Equal(id))
			Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, id))
			Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
			Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(2), "the test's own two")
			Expect(up.Calls(evalapitest.OpGetMetric)).To(Equal(1))
			Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
			Expect(remoteOf(up, id).Guidelines).To(BeEmpty())
			Expect(syncedCondition(m)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonUpToDate))
		})

		It("read-only, adopts by name and writes nothing", func() {
			id := seed(evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "boolean"})
			m := byName("observer", readOnly...)
			startManager(up.opts)
			Expect(readyMetric(m, v1alpha1.ReasonObserved)).To(Equal(id))
			Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
			Consistently(writes, time.Second).Should(Equal(1), "the seed only")
		})

		It("stops at AmbiguousName with the ids when two remote Metrics have its name, and calls nothing after the list", func() {
			a := seed(evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "boolean"})
			b := seed(evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "int"})
			m := byName("ambiguous")
			startManager(up.opts)
			createMetric(m)
			Eventually(readyCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonAmbiguousName),
				HaveField("Message", And(ContainSubstring(a), ContainSubstring(b)))))
			Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
			Consistently(func() int { return allCalls(up) - up.Calls(evalapitest.OpListMetrics) }, time.Second).
				Should(Equal(2), "the test's own two creates")
		})

		It("creates when no remote Metric has its name, with the pending mark written before the list", func() {
			seed(evalapi.MetricRequest{Name: "other", EvalType: "human", OutputType: "boolean"})
			up.InjectFaults(evalapitest.OpListMetrics, evalapitest.Slow(2*time.Second))
			m := byName("creator")
			startManager(up.opts)
			createMetric(m)
			Eventually(func(g Gomega) map[string]string {
				g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
				return m.Annotations
			}).Should(HaveKey(v1alpha1.CreatePendingAnnotation))
			Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(1), "only the seed: the list is still under way")
			Eventually(readyCondition(m), 5*time.Second).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
			Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(2))
			Expect(remoteNamed(up, string(m.Spec.Name))).To(ConsistOf(m.Status.ID))
		})

		It("finds a copy another cluster created at the same instant, and holds at AmbiguousName until it is gone", func() {
			up.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Slow(time.Second))
			m := byName("raced")
			startManager(up.opts)
			createMetric(m)
			// While its create is under way, another cluster creates the same name.
			Eventually(func() int { return up.Calls(evalapitest.OpCreateMetric) }).Should(Equal(1))
			other := seed(evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "boolean"})
			Eventually(readyCondition(m), 5*time.Second).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonAmbiguousName),
				HaveField("Message", ContainSubstring(other))))
			own := m.Annotations[v1alpha1.MetricIDAnnotation]
			Expect(own).NotTo(Or(BeEmpty(), Equal(other)), "its own id stays recorded: it never creates again")
			updates := up.Calls(evalapitest.OpUpdateMetric)

			Expect(up.RemoveMetric(other)).To(BeTrue())
			touchSecret(ns, "copy-removed")
			Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonAdopted))
			Expect(m.Status.ID).To(Equal(own))
			Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(2), "its own create and the other cluster's")
			Expect(up.Calls(evalapitest.OpUpdateMetric)).To(Equal(updates))
		})

		It("without Create waits, RemoteNotFound, until a remote Metric has its name", func() {
			m := byName("waiting", readOnly...)
			startManager(up.opts)
			createMetric(m)
			Eventually(readyCondition(m)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRemoteNotFound),
				HaveField("Message", ContainSubstring(`holds no Metric named "m"`))))

			id := seed(evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "boolean"})
			touchSecret(ns, "created-elsewhere")
			Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonObserved))
			Expect(m.Status.ID).To(Equal(id))
			Expect(writes()).To(Equal(1), "the test's own create")
		})

		Describe("after a crash between the pending mark and the create", func() {
			// crashed is m as a crash after its pending mark, written at
			// testStart, left it; the manager starts once that create is over.
			crashed := func(m *v1alpha1.Metric) *v1alpha1.Metric {
				m.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: "2026-11-21T10:00:00Z"}
				clock.SetTime(testStart.Add(time.Minute))
				return m
			}

			It("adopts the Metric of its name it listed, and creates none", func() {
				id := seed(evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "boolean", Guidelines: ptr.To("from the UI")})
				m := crashed(byName("crashed-adopts"))
				startManager(up.opts)
				Expect(readyMetric(m, v1alpha1.ReasonAdopted)).To(Equal(id))
				Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
				Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(1), "the seed only")
			})

			It("creates once when no Metric has its name", func() {
				m := crashed(byName("crashed-creates"))
				startManager(up.opts)
				id := readyMetric(m, v1alpha1.ReasonCreated)
				Expect(remoteNamed(up, string(m.Spec.Name))).To(ConsistOf(id))
				Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, time.Second).Should(Equal(1))
			})
		})

		It("leaves a remote Metric another object holds to it, and creates its own", func() {
			startManager(up.opts)
			holder := humanBoolean(ns, "holder")
			held := readyMetric(holder, v1alpha1.ReasonCreated)
			m := byName("second")
			Expect(readyMetric(m, v1alpha1.ReasonCreated)).NotTo(Equal(held))
			Expect(remoteNamed(up, string(m.Spec.Name))).To(HaveLen(2))
		})
	})
})

// driftedEvents counts the Drifted events about an object, repeats folded
// into an event series included.
func driftedEvents(ns, name string) func() int {
	return func() int {
		var events eventsv1.EventList
		Expect(k8s.List(rootCtx, &events, client.InNamespace(ns))).To(Succeed())
		n := 0
		for _, e := range events.Items {
			if e.Regarding.Name != name || e.Reason != v1alpha1.ReasonDrifted {
				continue
			}
			n++
			if e.Series != nil {
				n += int(e.Series.Count) - 1
			}
		}
		return n
	}
}
