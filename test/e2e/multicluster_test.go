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
	"os"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

// Each cluster has its own key to the one service, so the service's record
// of requests tells which cluster sent each.
const (
	keyOne = "ak_cluster_one_0123456789"
	keyTwo = "ak_cluster_two_0123456789"
)

// cluster is one of the clusters the repository is applied to: its API
// server, a client, and the key its Secret holds.
type cluster struct {
	name string
	cp   *framework.ControlPlane
	k8s  client.Client
	key  string
}

// apply creates the namespace, its key Secret and ms in c, as a sync of the
// repository would. The spec's Metrics go when it ends: left behind, they
// would claim ids of the next spec's service.
func (c cluster) apply(ctx context.Context, ns string, ms []*v1alpha1.Metric) {
	GinkgoHelper()
	Expect(c.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	DeferCleanup(removeAllIn, c.k8s, ns)
	Expect(c.k8s.Create(ctx, framework.KeySecret(ns, framework.KeySecretName, c.key))).To(Succeed())
	for _, m := range ms {
		Expect(c.k8s.Create(ctx, m.DeepCopy())).To(Succeed())
	}
}

// manager starts a manager on c against upstream, drift checks every two seconds.
func (c cluster) manager(ctx context.Context, upstream *evalapitest.Server) {
	GinkgoHelper()
	startManagerOn(ctx, c.cp, c.name, nil, "--api-url="+upstream.URL(), "--drift-interval=2s")
}

// metrics reads ms back from c.
func (c cluster) metrics(ctx context.Context, g Gomega, ms []*v1alpha1.Metric) []v1alpha1.Metric {
	out := make([]v1alpha1.Metric, len(ms))
	for i, m := range ms {
		g.Expect(c.k8s.Get(ctx, client.ObjectKeyFromObject(m), &out[i])).To(Succeed())
	}
	return out
}

// writes counts the requests of key that change the service (create,
// update, delete), or only those of op when op is not empty.
func writes(upstream *evalapitest.Server, key, op string) int {
	n := 0
	for _, r := range upstream.Requests() {
		write := r.Op == evalapitest.OpCreateMetric || r.Op == evalapitest.OpUpdateMetric || r.Op == evalapitest.OpDeleteMetric
		if r.Key == key && (op == "" && write || r.Op == op) {
			n++
		}
	}
	return n
}

// repository is n Metrics adopted by name, as one Git repository holds them.
func repository(ns string, n int) []*v1alpha1.Metric {
	ms := make([]*v1alpha1.Metric, n)
	for i := range ms {
		ms[i] = framework.NewMetric(ns, fmt.Sprintf("metric-%03d", i), i)
		ms[i].Spec.AdoptionPolicy = v1alpha1.AdoptionByName
	}
	return ms
}

// readOnly is ms with managementPolicies ["Observe"], as an overlay sets them.
func readOnly(ms []*v1alpha1.Metric) []*v1alpha1.Metric {
	out := make([]*v1alpha1.Metric, len(ms))
	for i, m := range ms {
		out[i] = m.DeepCopy()
		out[i].Spec.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementObserve}
	}
	return out
}

func readyReason(m *v1alpha1.Metric) string {
	if c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason
	}
	return ""
}

var _ = Describe("Several clusters, one repository", Ordered, func() {
	var one, two cluster
	BeforeAll(func() {
		one = cluster{name: "cluster-one", cp: controlPlane, k8s: k8s, key: keyOne}
		dir, err := os.MkdirTemp("", "eval-operator-e2e-two-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, dir)
		cp, err := framework.StartControlPlane(dir)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cp.Stop)
		c, err := cp.Client()
		Expect(err).NotTo(HaveOccurred())
		two = cluster{name: "cluster-two", cp: cp, k8s: c, key: keyTwo}
	})
	newUpstream := func(ns string) *evalapitest.Server {
		upstream := evalapitest.New(evalapitest.WithKeys(keyOne, keyTwo), evalapitest.WithIDPrefix("met_"+ns+"_"))
		DeferCleanup(upstream.Close)
		return upstream
	}

	It("one writer, the other read-only by name: one remote Metric each, one correction, one DELETE", func(ctx SpecContext) {
		const n = 5
		ns := "multi-observe"
		upstream := newUpstream(ns)
		ms := repository(ns, n)
		mirrors := readOnly(ms)
		// The observer starts first: it waits for the writer's creates.
		two.apply(ctx, ns, mirrors)
		two.manager(ctx, upstream)
		one.apply(ctx, ns, ms)
		one.manager(ctx, upstream)

		var written []v1alpha1.Metric
		Eventually(func(g Gomega) {
			written = one.metrics(ctx, g, ms)
			observed := two.metrics(ctx, g, mirrors)
			for i := range written {
				g.Expect(readyReason(&written[i])).To(Equal(v1alpha1.ReasonCreated))
				g.Expect(readyReason(&observed[i])).To(Equal(v1alpha1.ReasonObserved))
				g.Expect(observed[i].Status.ID).To(Equal(written[i].Status.ID))
			}
		}).WithTimeout(time.Minute).Should(Succeed())
		Expect(upstream.Creates()).To(Equal(n))
		Expect(writes(upstream, keyTwo, "")).To(BeZero(), "the read-only cluster wrote to the service")

		// A remote edit: the writer puts it back once; the observer sees it back.
		id := written[0].Status.ID
		Expect(upstream.EditMetric(id, func(r *evalapi.Metric) { r.Guidelines = "edited in the UI" })).To(BeTrue())
		Eventually(func() string { m, _ := upstream.Metric(id); return m.Guidelines }).Should(BeEmpty())
		Consistently(func() int { return writes(upstream, keyOne, evalapitest.OpUpdateMetric) }, 5*time.Second).Should(Equal(1))
		Eventually(func(g Gomega) {
			var m v1alpha1.Metric
			g.Expect(two.k8s.Get(ctx, client.ObjectKeyFromObject(mirrors[0]), &m)).To(Succeed())
			c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionSynced)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())

		// The manifests leave the repository: deleted from both clusters, one DELETE each.
		for i := range ms {
			Expect(one.k8s.Delete(ctx, ms[i])).To(Succeed())
			Expect(two.k8s.Delete(ctx, mirrors[i])).To(Succeed())
		}
		Eventually(func() int { return writes(upstream, keyOne, evalapitest.OpDeleteMetric) }).Should(Equal(n))
		Eventually(func(g Gomega) {
			var left v1alpha1.MetricList
			g.Expect(one.k8s.List(ctx, &left, client.InNamespace(ns))).To(Succeed())
			g.Expect(left.Items).To(BeEmpty())
			g.Expect(two.k8s.List(ctx, &left, client.InNamespace(ns))).To(Succeed())
			g.Expect(left.Items).To(BeEmpty())
		}).Should(Succeed())
		Expect(upstream.Metrics()).To(BeEmpty())
		Expect(writes(upstream, keyTwo, "")).To(BeZero(), "the read-only cluster wrote to the service")
	})

	It("two writers by name, the second after the first synced: one remote Metric each, no PATCH war", func(ctx SpecContext) {
		const n = 5
		ns := "multi-write"
		upstream := newUpstream(ns)
		ms := repository(ns, n)
		one.apply(ctx, ns, ms)
		one.manager(ctx, upstream)
		Eventually(func(g Gomega) {
			for _, m := range one.metrics(ctx, g, ms) {
				g.Expect(readyReason(&m)).To(Equal(v1alpha1.ReasonCreated))
			}
		}).WithTimeout(time.Minute).Should(Succeed())

		two.apply(ctx, ns, ms)
		two.manager(ctx, upstream)
		Eventually(func(g Gomega) {
			first, second := one.metrics(ctx, g, ms), two.metrics(ctx, g, ms)
			for i := range second {
				g.Expect(readyReason(&second[i])).To(Equal(v1alpha1.ReasonAdopted))
				g.Expect(second[i].Status.ID).To(Equal(first[i].Status.ID))
			}
		}).WithTimeout(time.Minute).Should(Succeed())
		Expect(upstream.Creates()).To(Equal(n))
		// Several drift intervals of both: each reads, neither writes.
		Consistently(upstream.Calls).WithArguments(evalapitest.OpUpdateMetric).WithTimeout(6 * time.Second).Should(BeZero())
		Expect(writes(upstream, keyTwo, evalapitest.OpGetMetric)).To(BeNumerically(">", n), "the second cluster's drift checks ran")
	})

	It("measures how often two writers started together duplicate, and settles each pair into AmbiguousName", func(ctx SpecContext) {
		const n = 100
		ns := "multi-race"
		upstream := newUpstream(ns)
		ms := repository(ns, n)
		one.apply(ctx, ns, ms)
		two.apply(ctx, ns, ms)
		var wg sync.WaitGroup
		for _, c := range []cluster{one, two} {
			wg.Go(func() {
				defer GinkgoRecover()
				c.manager(ctx, upstream)
			})
		}
		wg.Wait()

		// Settled: every object Ready, or Stalled on AmbiguousName.
		var first, second []v1alpha1.Metric
		Eventually(func(g Gomega) {
			first, second = one.metrics(ctx, g, ms), two.metrics(ctx, g, ms)
			for _, m := range append(append([]v1alpha1.Metric{}, first...), second...) {
				g.Expect(readyReason(&m) != "" || stalledOn(&m, v1alpha1.ReasonAmbiguousName)).To(BeTrue(), "Metric %s", m.Name)
			}
		}).WithTimeout(2 * time.Minute).Should(Succeed())

		remotes := map[string]int{}
		for _, r := range upstream.Metrics() {
			remotes[r.Metric.Name]++
		}
		duplicated := 0
		for i, m := range ms {
			switch remotes[string(m.Spec.Name)] {
			case 1:
				Expect(first[i].Status.ID).To(Equal(second[i].Status.ID), "one remote Metric, held by both")
			case 2:
				duplicated++
				Expect(stalledOn(&first[i], v1alpha1.ReasonAmbiguousName) || stalledOn(&second[i], v1alpha1.ReasonAmbiguousName)).
					To(BeTrue(), "the pair of %s is reported, not silent: %v, %v", m.Spec.Name, first[i].Status.Conditions, second[i].Status.Conditions)
			default:
				Fail(fmt.Sprintf("%d remote Metrics named %s", remotes[string(m.Spec.Name)], m.Spec.Name))
			}
		}
		AddReportEntry("two writers started together", fmt.Sprintf(
			"%d of %d Metrics duplicated (each pair Stalled AmbiguousName); %d creates in all", duplicated, n, upstream.Creates()),
			ReportEntryVisibilityAlways)
		fmt.Fprintf(GinkgoWriter, "two writers started together on %d Metrics: %d duplicated\n", n, duplicated)
	})
})

func stalledOn(m *v1alpha1.Metric, reason string) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionStalled)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason
}
