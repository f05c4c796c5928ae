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
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

// expectAlreadyDeleted checks a deletion completed because the service
// found the thing gone: Ready True, success and completionTime recorded,
// never Stalled.
func expectAlreadyDeleted(d v1alpha1.Object, st *v1alpha1.DeletionStatus) {
	GinkgoHelper()
	Eventually(readyCondition(d)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonAlreadyDeleted))
	Expect(st.Success).To(HaveValue(BeTrue()))
	Expect(st.CompletionTime).NotTo(BeNil())
	Expect(meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionStalled)).To(BeNil())
}

var _ = Describe("Deletions of things already gone", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	It("completes a testset deletion the service answers 404 NOT_FOUND, and keeps that outcome", func() {
		up.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Status(http.StatusNotFound))
		mgr := startManager(up.opts)
		d := testsetDeletion(ns, "gone", "testset-gone")
		Expect(k8s.Create(rootCtx, d)).To(Succeed())
		expectAlreadyDeleted(d, &d.Status)
		Expect(d.Status.Attempts).To(BeEquivalentTo(1))

		// A later reconcile, here a restart's, keeps the reason and sends nothing.
		mgr.stop()
		seen := reconciles(d, v1alpha1.ReasonAlreadyDeleted)()
		startManager(up.opts)
		Eventually(reconciles(d, v1alpha1.ReasonAlreadyDeleted)).Should(BeNumerically(">", seen))
		expectAlreadyDeleted(d, &d.Status)
		Expect(up.Calls(evalapitest.OpDeleteTestset)).To(Equal(1))
	})

	It("completes at once, with one call, a deletion GitOps recreated after ttlSecondsAfterFinished removed it", func() {
		fakeClock := clocktesting.NewFakePassiveClock(testStart)
		up.opts.Clock = fakeClock
		mgr := startManager(up.opts)
		manifest := func() *v1alpha1.TestsetDeletion {
			d := testsetDeletion(ns, "ttl", "testset-ttl")
			d.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
			return d
		}
		d := manifest()
		Expect(k8s.Create(rootCtx, d)).To(Succeed())
		Eventually(readyCondition(d)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted))

		mgr.stop()
		fakeClock.SetTime(testStart.Add(time.Minute))
		startManager(up.opts)
		Eventually(func() error {
			return k8s.Get(rootCtx, client.ObjectKeyFromObject(d), d)
		}).Should(Satisfy(apierrors.IsNotFound))

		// Self-heal applies the manifest again; the testset is gone upstream.
		up.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Status(http.StatusNotFound))
		again := manifest()
		Expect(k8s.Create(rootCtx, again)).To(Succeed())
		expectAlreadyDeleted(again, &again.Status)
		Expect(again.Status.CompletionTime.Time).To(BeTemporally("==", testStart.Add(time.Minute)))
		Expect(up.Calls(evalapitest.OpDeleteTestset)).To(Equal(2))
	})

	It("counts bulk batches the service answers 404 NOT_FOUND as deleted", func() {
		up.InjectFaults(evalapitest.OpBulkDeleteTestcases,
			evalapitest.Status(http.StatusNotFound), evalapitest.Status(http.StatusNotFound), // all of "gone"
			evalapitest.Status(http.StatusNotFound)) // the first batch of "partly"
		startManager(up.opts)
		gone := testcaseDeletion(ns, "gone", 150)
		Expect(k8s.Create(rootCtx, gone)).To(Succeed())
		expectAlreadyDeleted(gone, &gone.Status.DeletionStatus)
		Expect(gone.Status.Deleted).To(BeEquivalentTo(150))
		Expect(up.Calls(evalapitest.OpBulkDeleteTestcases)).To(Equal(2))

		partly := testcaseDeletion(ns, "partly", 150)
		Expect(k8s.Create(rootCtx, partly)).To(Succeed())
		Eventually(readyCondition(partly)).Should(And(
			haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted),
			HaveField("Message", "deleted 150 testcases, 100 of them already gone (404)")))
		Expect(up.DeletedTestcases()).To(HaveLen(50))
	})

	It("never completes a deletion on a 404 without the service's NOT_FOUND", func() {
		up.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.GatewayStatus(http.StatusNotFound))
		up.InjectFaults(evalapitest.OpBulkDeleteTestcases, evalapitest.GatewayStatus(http.StatusNotFound))
		startManager(up.opts)
		ts := testsetDeletion(ns, "bare-ts", "testset-1")
		tc := testcaseDeletion(ns, "bare-tc", 3)
		Expect(k8s.Create(rootCtx, ts)).To(Succeed())
		Expect(k8s.Create(rootCtx, tc)).To(Succeed())
		Eventually(readyCondition(ts)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))
		Expect(ts.Status.Success).To(BeNil())
		Expect(ts.Status.CompletionTime).To(BeNil())
		Eventually(readyCondition(tc)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))
		Expect(tc.Status.Deleted).To(BeZero())
		Expect(tc.Status.CompletionTime).To(BeNil())
	})
})
