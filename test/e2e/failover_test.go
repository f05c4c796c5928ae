//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

// leaseName is the manager's leader election id.
const leaseName = "eval-operator.evaluation.eval-operator.dev"

var _ = Describe("Leader election", func() {
	It("hands over to the other replica when the leader dies mid-create, without a duplicate create", func(ctx SpecContext) {
		const (
			metrics = 20
			workers = 4 // --max-concurrent-reconciles: the creates in flight at once
		)
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		// The leader's first creates hang, so they are in flight when it is killed.
		hang := make([]evalapitest.Fault, workers)
		for i := range hang {
			hang[i] = evalapitest.Slow(5 * time.Minute)
		}
		upstream.InjectFaults(evalapitest.OpCreateMetric, hang...)

		ns := newNamespace(ctx, "failover")
		createKeySecret(ctx, ns, "evaluation-api-key", evalapitest.DefaultKey, false)
		args := []string{
			"--api-url=" + upstream.URL(),
			"--api-timeout=10m",
			"--leader-elect",
			"--leader-election-namespace=" + ns,
			fmt.Sprintf("--max-concurrent-reconciles=%d", workers),
			// Every worker may wait on the service (the default is half of them).
			fmt.Sprintf("--api-max-in-flight=%d", workers),
		}
		// The first replica is the leader: the second starts once it holds the Lease.
		leader := startManager(ctx, "replica-1", args...)
		holder := leaseHolder(ctx, ns)
		Eventually(holder).ShouldNot(BeEmpty())
		leaderID, err := holder()
		Expect(err).NotTo(HaveOccurred())
		startManager(ctx, "replica-2", args...)

		for i := range metrics {
			Expect(k8s.Create(ctx, failoverMetric(ns, i))).To(Succeed())
		}
		Eventually(upstream.Calls).WithArguments(evalapitest.OpCreateMetric).Should(Equal(workers))
		Expect(leader.Kill()).To(Succeed())

		// The Lease is not released by a killed leader: the other replica
		// takes it once it expires (15s).
		Eventually(holder).WithTimeout(time.Minute).Should(And(Not(BeEmpty()), Not(Equal(leaderID))))
		var stalled int
		Eventually(func(g Gomega) {
			stalled = 0
			for i := range metrics {
				s := settled(ctx, g, client.ObjectKey{Namespace: ns, Name: metricName(i)})
				if s == status.FailedStatus {
					stalled++
				}
			}
		}).WithTimeout(time.Minute).Should(Succeed())

		// The hung creates reached the service, which committed them when the
		// leader's connections closed: their Metrics rightly stall rather than
		// create again. Every Metric exists upstream exactly once.
		Expect(stalled).To(Equal(workers))
		creates := map[string]int{}
		for _, m := range upstream.CreatedMetrics() {
			creates[m.Metric.Name]++
		}
		Expect(creates).To(HaveLen(metrics))
		Expect(creates).To(HaveEach(1))
	})
})

func metricName(i int) string { return fmt.Sprintf("failover-%02d", i) }

// failoverMetric is the i-th Metric of the spec, with a spec.name of its own
// so the upstream's creates can be told apart.
func failoverMetric(namespace string, i int) *v1alpha1.Metric {
	return &v1alpha1.Metric{
		ObjectMeta: metav1.ObjectMeta{Name: metricName(i), Namespace: namespace},
		Spec: v1alpha1.MetricSpec{
			ProjectID:       "proj_e2e",
			Name:            v1alpha1.LineText(metricName(i)),
			EvalType:        v1alpha1.EvalTypeHeuristic,
			OutputType:      v1alpha1.OutputTypeBoolean,
			APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: "evaluation-api-key"},
		},
	}
}

// leaseHolder returns a function for Eventually that reads the holder of
// the manager's Lease in namespace.
func leaseHolder(ctx context.Context, namespace string) func() (string, error) {
	return func() (string, error) {
		lease := &coordinationv1.Lease{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: leaseName}, lease); err != nil {
			return "", client.IgnoreNotFound(err)
		}
		if lease.Spec.HolderIdentity == nil {
			return "", nil
		}
		return *lease.Spec.HolderIdentity, nil
	}
}

// settled checks that the Metric is done: Current (Ready), or Failed because
// it is Stalled on a create whose outcome is unknown. It returns the kstatus.
func settled(ctx context.Context, g Gomega, key client.ObjectKey) status.Status {
	s, err := kstatus(ctx, v1alpha1.GroupVersion.WithKind("Metric"), key)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s).To(BeElementOf(status.CurrentStatus, status.FailedStatus), key.Name)
	if s == status.FailedStatus {
		m := &v1alpha1.Metric{}
		g.Expect(k8s.Get(ctx, key, m)).To(Succeed())
		c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionStalled)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(v1alpha1.ReasonCreateOutcomeUnknown), key.Name)
	}
	return s
}
