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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var _ = Describe("A Metric's life", func() {
	It("is created, edited, put back after a remote edit, deleted, or orphaned, each in one call", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		ns := newNamespace(ctx, "lifecycle")
		createKeySecret(ctx, ns, "evaluation-api-key", evalapitest.DefaultKey, false)
		startManager(ctx, "manager", "--api-url="+upstream.URL(), "--drift-interval=2s")

		// Created: one POST.
		m := failoverMetric(ns, 0)
		m.Spec.EvalType, m.Spec.OutputType = v1alpha1.EvalTypeHuman, v1alpha1.OutputTypeInt
		Expect(k8s.Create(ctx, m)).To(Succeed())
		id := readyWith(ctx, m, v1alpha1.ReasonCreated)
		Expect(upstream.Calls(evalapitest.OpCreateMetric)).To(Equal(1))

		// Edited in Git: one PATCH carrying the new variant.
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		m.Spec.OutputType = v1alpha1.OutputTypeFloat
		m.Spec.Guidelines = ptr.To[v1alpha1.Text]("Half a point for a partial answer.")
		Expect(k8s.Update(ctx, m)).To(Succeed())
		Expect(readyWith(ctx, m, v1alpha1.ReasonUpdated)).To(Equal(id))
		Expect(upstream.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
		remote := remoteMetric(upstream, id)
		Expect(remote.OutputType).To(Equal("float"))
		Expect(remote.PassingThreshold).To(Equal(ptr.To(0.9)), "the float default, not the int's 4")
		Expect(remote.Guidelines).To(Equal("Half a point for a partial answer."))

		// Edited in the web UI: the next drift check puts the spec back.
		upstream.EditMetric(id, func(r *evalapi.Metric) { r.Guidelines = "changed in the UI" })
		Eventually(func() string { return remoteMetric(upstream, id).Guidelines }).
			Should(Equal("Half a point for a partial answer."))
		Expect(upstream.Calls(evalapitest.OpCreateMetric)).To(Equal(1), "drift never creates")

		// Deleted with the default policy: the remote Metric goes too.
		Expect(k8s.Delete(ctx, m)).To(Succeed())
		Eventually(gone(ctx, m)).Should(BeTrue())
		_, exists := upstream.Metric(id)
		Expect(exists).To(BeFalse())

		// Deleted with deletionPolicy Orphan: the remote Metric stays.
		kept := failoverMetric(ns, 1)
		kept.Spec.DeletionPolicy = v1alpha1.DeletionPolicyOrphan
		Expect(k8s.Create(ctx, kept)).To(Succeed())
		keptID := readyWith(ctx, kept, v1alpha1.ReasonCreated)
		Expect(k8s.Delete(ctx, kept)).To(Succeed())
		Eventually(gone(ctx, kept)).Should(BeTrue())
		_, exists = upstream.Metric(keptID)
		Expect(exists).To(BeTrue())
		Expect(upstream.Calls(evalapitest.OpDeleteMetric)).To(Equal(1))
	})
})

// readyWith waits until m is Ready with reason at its current generation and
// returns its remote id.
func readyWith(ctx context.Context, m *v1alpha1.Metric, reason string) string {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.ObservedGeneration).To(Equal(m.Generation))
		g.Expect(c.Reason).To(Equal(reason), c.Message)
	}).Should(Succeed())
	return m.Status.ID
}

func remoteMetric(upstream *evalapitest.Server, id string) evalapi.Metric {
	GinkgoHelper()
	r, ok := upstream.Metric(id)
	Expect(ok).To(BeTrue(), "the service has no Metric %s", id)
	return r
}

func gone(ctx context.Context, obj client.Object) func() bool {
	return func() bool {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return client.IgnoreNotFound(err) == nil && err != nil
	}
}
