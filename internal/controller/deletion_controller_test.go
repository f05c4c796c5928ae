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
	"sync"
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

func testsetDeletion(ns, name, testset string) *v1alpha1.TestsetDeletion {
	return &v1alpha1.TestsetDeletion{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.TestsetDeletionSpec{TestsetID: v1alpha1.ResourceID(testset), APIKeySecretRef: ref()},
	}
}

func testcaseDeletion(ns, name string, n int) *v1alpha1.TestcaseDeletion {
	ids := make([]v1alpha1.ResourceID, n)
	for i := range ids {
		ids[i] = v1alpha1.ResourceID(fmt.Sprintf("tc-%05d", i))
	}
	return &v1alpha1.TestcaseDeletion{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.TestcaseDeletionSpec{TestcaseIDs: ids, APIKeySecretRef: ref()},
	}
}

var _ = Describe("Deletion reconcilers", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	It("retries a failed testset deletion, finishes once and is never run again", func() {
		up.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Status500, evalapitest.SuccessFalse)
		mgr := startManager(up.opts)
		d := testsetDeletion(ns, "ts", "testset-42")
		Expect(k8s.Create(rootCtx, d)).To(Succeed())
		Eventually(readyCondition(d)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted))
		Expect(d.Status.Success).To(HaveValue(BeTrue()))
		Expect(d.Status.Attempts).To(BeEquivalentTo(3))
		Expect(d.Status.CompletionTime).NotTo(BeNil())
		Expect(up.DeletedTestsets()).To(Equal([]string{"testset-42"}))

		mgr.stop()
		startManager(up.opts)
		Consistently(func() int { return up.Calls(evalapitest.OpDeleteTestset) }, 2*time.Second).Should(Equal(3))
	})

	It("garbage-collects a finished deletion after ttlSecondsAfterFinished", func() {
		fakeClock := clocktesting.NewFakePassiveClock(testStart)
		up.opts.Clock = fakeClock
		mgr := startManager(up.opts)
		d := testsetDeletion(ns, "ttl", "testset-ttl")
		d.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
		Expect(k8s.Create(rootCtx, d)).To(Succeed())
		Eventually(readyCondition(d)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted))
		Expect(d.Status.CompletionTime.Time).To(BeTemporally("==", testStart))

		// The TTL passes; the next reconcile, here the one every object gets
		// when a manager starts, deletes the object.
		mgr.stop()
		fakeClock.SetTime(testStart.Add(time.Minute))
		startManager(up.opts)
		Eventually(func() error {
			return k8s.Get(rootCtx, client.ObjectKeyFromObject(d), d)
		}).Should(Satisfy(apierrors.IsNotFound))
		Expect(up.Calls(evalapitest.OpDeleteTestset)).To(Equal(1))
	})

	It("sends a bulk deletion in batches and resumes after a restart where it stopped", func() {
		// Batch 11 fails; the manager is stopped while it backs off, and a
		// new one must resume at batch 11, not at the start.
		faults := make([]evalapitest.Fault, 11)
		faults[10] = evalapitest.Status500
		up.InjectFaults(evalapitest.OpBulkDeleteTestcases, faults...)
		backingOff := up.opts
		backingOff.Backoff = time.Hour
		mgr := startManager(backingOff)
		d := testcaseDeletion(ns, "bulk", 2500)
		Expect(k8s.Create(rootCtx, d)).To(Succeed())
		Eventually(func(g Gomega) int32 {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(d), d)).To(Succeed())
			return d.Status.Deleted
		}).Should(BeEquivalentTo(1000))
		Eventually(readyCondition(d)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonUpstreamUnavailable))
		Expect(d.Status.Attempts).To(BeEquivalentTo(11))
		mgr.stop()
		Expect(up.Calls(evalapitest.OpBulkDeleteTestcases)).To(Equal(11))

		startManager(up.opts)
		Eventually(readyCondition(d), 30*time.Second).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted))
		Expect(d.Status.Deleted).To(BeEquivalentTo(2500))
		Expect(d.Status.Attempts).To(BeEquivalentTo(26))
		Expect(up.Calls(evalapitest.OpBulkDeleteTestcases)).To(Equal(26))
		deleted := up.DeletedTestcases()
		Expect(deleted).To(HaveLen(2500), "every id exactly once")
		Expect(deleted[0]).To(Equal("tc-00000"))
		Expect(deleted[2499]).To(Equal("tc-02499"))
	})

	It("writes a bulk deletion that finishes within the checkpoint interval once, not once per batch", func() {
		watch := watchWrites(ns, &v1alpha1.TestcaseDeletionList{})
		startManager(up.opts)
		d := testcaseDeletion(ns, "quick", 10000)
		Expect(k8s.Create(rootCtx, d)).To(Succeed())
		writes := writesUntilReady(watch)
		Expect(writes).To(HaveLen(2), "the create and one status write, for 100 batches")
		done := writes[1].(*v1alpha1.TestcaseDeletion)
		Expect(done.Status.Deleted).To(BeEquivalentTo(10000))
		Expect(done.Status.Attempts).To(BeEquivalentTo(100))
		Expect(up.DeletedTestcases()).To(HaveLen(10000), "every id exactly once")
	})

	It("records a long bulk deletion's progress every 10 seconds", func() {
		watch := watchWrites(ns, &v1alpha1.TestcaseDeletionList{})
		// Each reading of the clock is a second later: the loop's ~100
		// readings span about 100 s, 10 checkpoint intervals.
		opts := up.opts
		opts.Clock = &steppingClock{now: testStart, step: time.Second}
		startManager(opts)
		Expect(k8s.Create(rootCtx, testcaseDeletion(ns, "long", 10000))).To(Succeed())
		writes := writesUntilReady(watch)
		checkpoints := writes[1 : len(writes)-1]
		Expect(len(checkpoints)).To(BeNumerically(">=", 4), "progress is recorded while it runs")
		Expect(len(checkpoints)).To(BeNumerically("<=", 10), "at most once every 10 s, not after each of the 100 batches")
		var last int32
		for _, w := range checkpoints {
			st := w.(*v1alpha1.TestcaseDeletion).Status
			Expect(st.Deleted).To(BeNumerically(">", last))
			Expect(st.Deleted%100).To(BeZero(), "whole batches")
			Expect(meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady).Message).
				To(Equal(fmt.Sprintf("deleted %d of 10000 testcases", st.Deleted)))
			last = st.Deleted
		}
		Expect(writes[len(writes)-1].(*v1alpha1.TestcaseDeletion).Status.Deleted).To(BeEquivalentTo(10000))
		Expect(up.DeletedTestcases()).To(HaveLen(10000), "every id exactly once")
	})

	It("completes deletions at once in standalone mode", func() {
		startManager(managerOptions{})
		ts := testsetDeletion(ns, "local-ts", "testset-1")
		tc := testcaseDeletion(ns, "local-tc", 250)
		Expect(k8s.Create(rootCtx, ts)).To(Succeed())
		Expect(k8s.Create(rootCtx, tc)).To(Succeed())
		Eventually(readyCondition(ts)).Should(And(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted),
			HaveField("Message", "standalone: no service holds testset testset-1, so there was nothing to delete")))
		Eventually(readyCondition(tc)).Should(And(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted),
			HaveField("Message", "standalone: no service holds the 250 testcases, so there was nothing to delete")))
		Expect(tc.Status.Deleted).To(BeEquivalentTo(250))
		Expect(ts.Status.Service).To(Equal("Standalone"))
		Expect(tc.Status.Service).To(Equal("Standalone"))
	})

	It("completes the largest bulk deletion in standalone mode with one status write", func() {
		watch := watchWrites(ns, &v1alpha1.TestcaseDeletionList{})
		startManager(managerOptions{})
		tc := testcaseDeletion(ns, "local-max", 10000)
		Expect(k8s.Create(rootCtx, tc)).To(Succeed())
		writes := writesUntilReady(watch)
		Expect(writes).To(HaveLen(2), "the create and one status write")
		done := writes[1].(*v1alpha1.TestcaseDeletion)
		Expect(done.Status.Deleted).To(BeEquivalentTo(10000))
		Expect(done.Status.Attempts).To(BeEquivalentTo(1))
	})
})

// steppingClock reads a step later each time it is read.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func (c *steppingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
