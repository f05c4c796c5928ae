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

package reliability

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("Fault soak", func() {
	const (
		faultRate = 0.3
		// apiTimeout is the manager's per-request timeout; slowFault outlasts it.
		apiTimeout = time.Second
		slowFault  = 3 * time.Second
		// testcasesPer deletion, sent in batchSize batches.
		testcasesPer = 250
		batchSize    = 100
		// listPages is the most pages the operator reads to settle one create.
		listPages = 10
		// quiet is how long a settled operator is watched for calls.
		quiet = 3 * time.Second
	)

	It("converges with no duplicate and no hot loop while 30% of upstream calls fail", func(ctx SpecContext) {
		metrics, testsets, bulks := scale(200, 1000), scale(10, 50), scale(3, 10)
		f := newFixture(ctx)
		f.server.FailRandomly(faultRate, GinkgoRandomSeed(), evalapitest.Status500, evalapitest.Status429("1"),
			evalapitest.Slow(slowFault), evalapitest.Reset)
		f.start("--api-timeout="+apiTimeout.String(), "--max-concurrent-reconciles=8",
			"--api-qps=200", "--api-burst=200", fmt.Sprintf("--bulk-delete-batch-size=%d", batchSize))

		f.createMetrics(ctx, "soak", metrics)
		f.createDeletions(ctx, testsets, bulks, testcasesPer)
		// Delete every tenth Metric while its create may be under way.
		deleted := 0
		for i := 0; i < metrics; i += 10 {
			m := framework.NewMetric(f.ns, fmt.Sprintf("soak-%04d", i), i)
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, m))).To(Succeed())
			deleted++
		}

		s := f.expectSettled(ctx, metrics-deleted, time.Duration(scale(3, 10))*time.Minute)
		f.expectDeletionsDone(ctx, testsets+bulks)
		calls := f.upstreamCalls()
		Consistently(f.upstreamCalls).WithContext(ctx).WithTimeout(quiet).Should(Equal(calls), "a settled operator kept calling")

		f.expectNoDuplicates()
		f.expectNothingLost(ctx)
		f.expectNoSecrets(ctx)
		Expect(s.unknown).To(BeZero(), "creates whose outcome was unknown were left for a person")
		batches := bulks * ((testcasesPer + batchSize - 1) / batchSize)
		work := metrics + testsets + batches
		lists := f.server.Calls(evalapitest.OpListMetrics)
		Expect(calls-lists).To(BeNumerically("<", 3*work), "upstream calls are not bounded by the work")
		// Only a create that may have been cut off is settled by listing, up
		// to listPages pages per attempt.
		cutOff := f.server.Calls(evalapitest.OpCreateMetric) - f.server.Creates()
		Expect(lists).To(BeNumerically("<", 3*listPages*max(cutOff, 1)), "lists are not bounded by the failed creates")
		// A deletion that timed out is sent again; deleting twice is harmless.
		Expect(f.server.DeletedTestsets()).To(ContainElements(f.testsetIDs(testsets)))
		Expect(f.server.DeletedTestcases()).To(ContainElements(f.testcaseIDs(bulks, testcasesPer)))
		AddReportEntry("fault soak", fmt.Sprintf(
			"%d Metrics (%d deleted while syncing), %d testset and %d bulk deletions (%d batches); %.0f%% of calls failed "+
				"(500, 429 Retry-After 1, timeout, reset); %d calls besides lists for %d units of work (%.2f per unit); "+
				"%d lists for %d failed creates; "+
				"%d Ready (%d Recovered from the service's list), 0 CreateOutcomeUnknown; 0 duplicates",
			metrics, deleted, testsets, bulks, batches, faultRate*100, calls-lists, work, float64(calls-lists)/float64(work),
			lists, cutOff, s.ready, s.recovered), ReportEntryVisibilityAlways)
	}, SpecTimeout(30*time.Minute))
})

// createDeletions creates testsets TestsetDeletions and bulks
// TestcaseDeletions of perBulk ids each.
func (f *fixture) createDeletions(ctx context.Context, testsets, bulks, perBulk int) {
	GinkgoHelper()
	ref := &v1alpha1.SecretKeySelector{Name: framework.KeySecretName}
	for i, id := range f.testsetIDs(testsets) {
		Expect(k8s.Create(ctx, &v1alpha1.TestsetDeletion{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: fmt.Sprintf("ts-%03d", i)},
			Spec:       v1alpha1.TestsetDeletionSpec{TestsetID: v1alpha1.ResourceID(id), APIKeySecretRef: ref},
		})).To(Succeed())
	}
	all := f.testcaseIDs(bulks, perBulk)
	for i := range bulks {
		ids := make([]v1alpha1.ResourceID, perBulk)
		for j := range ids {
			ids[j] = v1alpha1.ResourceID(all[i*perBulk+j])
		}
		Expect(k8s.Create(ctx, &v1alpha1.TestcaseDeletion{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: fmt.Sprintf("tc-%03d", i)},
			Spec:       v1alpha1.TestcaseDeletionSpec{TestcaseIDs: ids, APIKeySecretRef: ref},
		})).To(Succeed())
	}
}

// testsetIDs are the ids of n TestsetDeletions.
func (f *fixture) testsetIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("ts-%s-%03d", f.ns, i)
	}
	return ids
}

// testcaseIDs are the ids of bulks TestcaseDeletions of perBulk ids, in order.
func (f *fixture) testcaseIDs(bulks, perBulk int) []string {
	ids := make([]string, 0, bulks*perBulk)
	for i := range bulks {
		for j := range perBulk {
			ids = append(ids, fmt.Sprintf("tc-%s-%03d-%04d", f.ns, i, j))
		}
	}
	return ids
}

// expectDeletionsDone waits until all n deletions of the namespace succeeded.
func (f *fixture) expectDeletionsDone(ctx context.Context, n int) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		var testsets v1alpha1.TestsetDeletionList
		var bulks v1alpha1.TestcaseDeletionList
		g.Expect(k8s.List(ctx, &testsets, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(k8s.List(ctx, &bulks, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(len(testsets.Items) + len(bulks.Items)).To(Equal(n))
		for _, d := range testsets.Items {
			g.Expect(d.Status.Finished()).To(BeTrue(), "TestsetDeletion %s is not done", d.Name)
		}
		for _, d := range bulks.Items {
			g.Expect(d.Status.Finished()).To(BeTrue(), "TestcaseDeletion %s is not done", d.Name)
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
}
