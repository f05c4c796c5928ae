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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

// allOps are every operation of the fake service.
var allOps = []string{
	evalapitest.OpCreateMetric, evalapitest.OpGetMetric, evalapitest.OpUpdateMetric, evalapitest.OpDeleteMetric,
	evalapitest.OpListMetrics, evalapitest.OpDeleteTestset, evalapitest.OpBulkDeleteTestcases,
}

// allCalls counts the requests the fake service received, of any operation.
func allCalls(up *upstream) int {
	n := 0
	for _, op := range allOps {
		n += up.Calls(op)
	}
	return n
}

// reconciles counts the finished reconciles of obj whose outcome had reason,
// from the managers' logs. Waiting for it to grow is how a test knows that a
// reconcile it triggered has run, without waiting on the clock.
func reconciles(obj client.Object, reason string) func() int {
	return func() int {
		n := 0
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, "\tReconciled\t") &&
				strings.Contains(line, fmt.Sprintf(`"namespace": %q, "name": %q`, obj.GetNamespace(), obj.GetName())) &&
				strings.Contains(line, fmt.Sprintf(`"reason": %q`, reason)) {
				n++
			}
		}
		return n
	}
}

// setAnnotation sets key to value on obj, or removes it when value is nil.
func setAnnotation(obj client.Object, key string, value *string) {
	GinkgoHelper()
	v := any(nil)
	if value != nil {
		v = *value
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, key, jsonOf(v))
	Expect(k8s.Patch(rootCtx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

func jsonOf(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%q", v)
}

func ptrTo(s string) *string { return &s }

// kstatusOf computes obj's kstatus as Flux and kubectl wait would.
func kstatusOf(obj client.Object) status.Status {
	GinkgoHelper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	gvk, err := apiutil.GVKForObject(obj, k8s.Scheme())
	Expect(err).NotTo(HaveOccurred())
	read := &unstructured.Unstructured{Object: u}
	read.SetGroupVersionKind(gvk)
	res, err := status.Compute(read)
	Expect(err).NotTo(HaveOccurred())
	return res.Status
}

// touchSecret changes the key Secret's labels, which re-triggers every
// object that references it.
func touchSecret(ns, value string) {
	GinkgoHelper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secretName}}
	patch := fmt.Sprintf(`{"metadata":{"labels":{"touched":%q}}}`, value)
	Expect(k8s.Patch(rootCtx, s, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// expectPaused checks the status a paused object must show: Ready with
// reason Paused at the current generation, True if its goal was reached
// before, and neither Reconciling nor Stalled. kstatus then calls it Current
// if Ready is True, and in progress (never failed) if not.
func expectPaused(obj v1alpha1.Object, ready metav1.ConditionStatus) {
	GinkgoHelper()
	Eventually(readyCondition(obj)).Should(haveReason(ready, v1alpha1.ReasonPaused))
	conds := *obj.GetConditions()
	Expect(meta.FindStatusCondition(conds, v1alpha1.ConditionReady).Message).To(ContainSubstring(v1alpha1.PausedAnnotation))
	Expect(meta.FindStatusCondition(conds, v1alpha1.ConditionReconciling)).To(BeNil())
	Expect(meta.FindStatusCondition(conds, v1alpha1.ConditionStalled)).To(BeNil())
	Expect(meta.FindStatusCondition(conds, v1alpha1.ConditionReady).ObservedGeneration).To(Equal(obj.GetGeneration()))
	if ready == metav1.ConditionTrue {
		Expect(kstatusOf(obj)).To(Equal(status.CurrentStatus))
	} else {
		Expect(kstatusOf(obj)).To(Equal(status.InProgressStatus))
	}
}

var _ = Describe("Pause and retry annotations", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	It("pauses a Ready Metric with one write, then calls and writes nothing, and resumes it as it stood", func() {
		mgr := startManager(up.opts)
		m := humanBoolean(ns, "paused")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		before := *meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady)
		calls := allCalls(up)

		setAnnotation(m, v1alpha1.PausedAnnotation, ptrTo("true"))
		expectPaused(m, metav1.ConditionTrue)
		paused := m.ResourceVersion

		// A Secret change and a manager restart each reconcile it again.
		seen := reconciles(m, v1alpha1.ReasonPaused)()
		touchSecret(ns, "1")
		Eventually(reconciles(m, v1alpha1.ReasonPaused)).Should(BeNumerically(">", seen))
		mgr.stop()
		seen = reconciles(m, v1alpha1.ReasonPaused)()
		startManager(up.opts)
		Eventually(reconciles(m, v1alpha1.ReasonPaused)).Should(BeNumerically(">", seen))
		Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		Expect(m.ResourceVersion).To(Equal(paused), "no write while paused")
		Expect(allCalls(up)).To(Equal(calls), "no call while paused")

		setAnnotation(m, v1alpha1.PausedAnnotation, nil)
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(*meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady)).To(Equal(before))
		Expect(m.Status.Conditions).To(HaveLen(2), "nothing of the pause is left: Ready and Synced")
		Expect(allCalls(up)).To(Equal(calls), "resuming a Ready Metric calls nothing")
	})

	It("keeps an adopted Metric's reason and a Rejected Metric stalled across a pause", func() {
		up.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Status(http.StatusBadRequest))
		startManager(up.opts)
		rejected := humanBoolean(ns, "rejected")
		Expect(k8s.Create(rootCtx, rejected)).To(Succeed())
		Eventually(readyCondition(rejected)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))
		// Adopted: made in the service by someone else.
		adopted := humanBoolean(ns, "adopted")
		remote, err := up.opts.Service.CreateMetric(rootCtx, testKey, "proj-1", convert.RequestFor(&adopted.Spec))
		Expect(err).NotTo(HaveOccurred())
		adopted.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: remote.ID}
		Expect(k8s.Create(rootCtx, adopted)).To(Succeed())
		Eventually(readyCondition(adopted)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonAdopted))
		calls := allCalls(up)

		setAnnotation(rejected, v1alpha1.PausedAnnotation, ptrTo("true"))
		expectPaused(rejected, metav1.ConditionFalse)
		setAnnotation(adopted, v1alpha1.PausedAnnotation, ptrTo("true"))
		expectPaused(adopted, metav1.ConditionTrue)
		for _, m := range []*v1alpha1.Metric{rejected, adopted} {
			setAnnotation(m, v1alpha1.PausedAnnotation, nil)
		}
		Eventually(readyCondition(adopted)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonAdopted))
		Eventually(readyCondition(rejected)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))
		Expect(meta.IsStatusConditionTrue(rejected.Status.Conditions, v1alpha1.ConditionStalled)).To(BeTrue())
		Expect(allCalls(up)).To(Equal(calls))
	})

	It("holds a deletion created paused, and runs it once resumed", func() {
		startManager(up.opts)
		ts := testsetDeletion(ns, "paused-ts", "testset-1")
		tc := testcaseDeletion(ns, "paused-tc", 3)
		for _, d := range []v1alpha1.Object{ts, tc} {
			d.SetAnnotations(map[string]string{v1alpha1.PausedAnnotation: "true"})
			Expect(k8s.Create(rootCtx, d)).To(Succeed())
			expectPaused(d, metav1.ConditionFalse)
			// The CRD's default status is kept for the resume.
			Expect(meta.FindStatusCondition(*d.GetConditions(), "ReadyBeforePause")).To(HaveField("Reason", v1alpha1.ReasonPending))
		}
		Expect(allCalls(up)).To(BeZero())

		for _, d := range []v1alpha1.Object{ts, tc} {
			setAnnotation(d, v1alpha1.PausedAnnotation, nil)
			Eventually(readyCondition(d)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted))
			Expect(meta.FindStatusCondition(*d.GetConditions(), "ReadyBeforePause")).To(BeNil())
		}
		Expect(up.Calls(evalapitest.OpDeleteTestset)).To(Equal(1))
		Expect(up.Calls(evalapitest.OpBulkDeleteTestcases)).To(Equal(1))
	})

	It("retries a Rejected Metric once per new retry value", func() {
		up.InjectFaults(evalapitest.OpCreateMetric,
			evalapitest.Status(http.StatusBadRequest), evalapitest.Status(http.StatusBadRequest))
		mgr := startManager(up.opts)
		m := humanBoolean(ns, "retry")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))
		Expect(up.Creates()).To(Equal(0))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(1))

		// The service is still broken: one more create, rejected again.
		seen := reconciles(m, v1alpha1.ReasonRejected)()
		setAnnotation(m, v1alpha1.RetryAnnotation, ptrTo("1"))
		Eventually(reconciles(m, v1alpha1.ReasonRejected)).Should(BeNumerically(">", seen))
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return m.Status.ObservedRetry
		}).Should(Equal("1"))
		// observedRetry is recorded before the create is sent again.
		Eventually(func() int { return up.Calls(evalapitest.OpCreateMetric) }).Should(Equal(2))
		// The refused create's reconcile has finished: its pending mark is
		// gone. Stopping before that would leave a cut-off create, which a
		// restart rightly settles from the list and creates again.
		Eventually(func(g Gomega) map[string]string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return m.Annotations
		}).ShouldNot(HaveKey(v1alpha1.CreatePendingAnnotation))

		// The same value does nothing, whatever reconciles the Metric.
		mgr.stop()
		seen = reconciles(m, v1alpha1.ReasonRejected)()
		startManager(up.opts)
		Eventually(reconciles(m, v1alpha1.ReasonRejected)).Should(BeNumerically(">", seen))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(2))

		// Fixed: a new value creates it.
		setAnnotation(m, v1alpha1.RetryAnnotation, ptrTo("2"))
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(m.Status.ObservedRetry).To(Equal("2"))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(3))
		Expect(up.Creates()).To(Equal(1))
	})

	It("retries a deletion the service rejected", func() {
		up.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Status(http.StatusBadRequest))
		up.InjectFaults(evalapitest.OpBulkDeleteTestcases, evalapitest.Status(http.StatusBadRequest))
		startManager(up.opts)
		ts := testsetDeletion(ns, "retry-ts", "testset-1")
		tc := testcaseDeletion(ns, "retry-tc", 3)
		for _, d := range []v1alpha1.Object{ts, tc} {
			Expect(k8s.Create(rootCtx, d)).To(Succeed())
			Eventually(readyCondition(d)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))
		}

		// A Secret change alone does not resend a rejected request.
		seen := reconciles(ts, v1alpha1.ReasonRejected)()
		touchSecret(ns, "1")
		Eventually(reconciles(ts, v1alpha1.ReasonRejected)).Should(BeNumerically(">", seen))
		Expect(up.Calls(evalapitest.OpDeleteTestset)).To(Equal(1))

		for _, d := range []v1alpha1.Object{ts, tc} {
			setAnnotation(d, v1alpha1.RetryAnnotation, ptrTo("fixed"))
			Eventually(readyCondition(d)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted))
			Expect(d.GetObservedRetry()).To(Equal("fixed"))
		}
		Expect(up.Calls(evalapitest.OpDeleteTestset)).To(Equal(2))
		Expect(up.Calls(evalapitest.OpBulkDeleteTestcases)).To(Equal(2))
	})
})
