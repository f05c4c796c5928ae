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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

// A run names remote Testsets and Metrics by id only as the claim rules of
// those kinds allow: under a shared key the service cannot tell one tenant's
// ids from another's.
var _ = Describe("EvaluationRuns naming remote ids under a shared key", func() {
	var (
		teamA, teamB string
		up           *upstream
		shared       *v1alpha1.ClusterEvaluationService
	)
	BeforeEach(func() { teamA, teamB, up, shared = sharedTenants() })

	onShared := func() *v1alpha1.ServiceReference {
		return &v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: shared.Name}
	}
	// metricOf is the remote id of a Ready Metric of ns on the shared service.
	metricOf := func(ns, name string) string {
		m := humanBoolean(ns, name)
		m.Spec.APIKeySecretRef, m.Spec.ServiceRef = nil, onShared()
		return readyMetric(m, v1alpha1.ReasonCreated)
	}
	byIDs := func(ns, name, project string, testset string, metrics ...string) *v1alpha1.EvaluationRun {
		e := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.EvaluationRunSpec{ProjectID: v1alpha1.ResourceID(project), ServiceRef: onShared(),
				TestsetID: v1alpha1.ResourceID(testset)}}
		for _, id := range metrics {
			e.Spec.MetricIDs = append(e.Spec.MetricIDs, v1alpha1.ResourceID(id))
		}
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		return e
	}

	It("refuses another namespace's Testset and Metrics, calling nothing and naming no one", func() {
		set := newTestset(teamB, "secret", inline(`{"id":"a","question":"q0"}`))
		set.Spec.APIKeySecretRef, set.Spec.ServiceRef = nil, onShared()
		Expect(k8s.Create(rootCtx, set)).To(Succeed())
		Eventually(readyCondition(set)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		theirs := metricOf(teamB, "judge")
		ours := metricOf(teamA, "ours")

		stolenSet := byIDs(teamA, "stolen-set", "proj-1", set.RecordedID(), ours)
		stolenMetric := byIDs(teamA, "stolen-metric", "proj-1", "", ours, theirs)
		Eventually(stalledReason(stolenSet)).Should(Equal(v1alpha1.ReasonTestsetIDClaimed))
		Expect(stalledMessage(stolenSet)).To(And(ContainSubstring("spec.testsetId names remote Testset "+set.RecordedID()),
			ContainSubstring("another namespace"), Not(ContainSubstring(teamB)), Not(ContainSubstring("secret"))))
		Eventually(stalledReason(stolenMetric)).Should(Equal(v1alpha1.ReasonMetricIDClaimed))
		Expect(stalledMessage(stolenMetric)).To(ContainSubstring("spec.metricIds[1] names remote Metric " + theirs))
		Expect(up.Calls(evalapitest.OpCreateRun)).To(BeZero())
		Expect(up.Calls(evalapitest.OpGetMetric)).To(BeZero())
	})

	It("refuses ids, a project and a run id no object of the namespace holds until the service allows adoption", func() {
		ours := metricOf(teamA, "ours")
		unheld, err := up.opts.Service.CreateMetric(rootCtx, testKey, "proj-1",
			evalapi.MetricRequest{Name: "made in the UI", EvalType: "human", OutputType: "boolean"})
		Expect(err).NotTo(HaveOccurred())

		own := byIDs(teamA, "own", "proj-1", "", ours)
		adopted := byIDs(teamA, "adopted", "proj-1", "", ours, unheld.ID)
		elsewhere := byIDs(teamA, "elsewhere", "proj-2", "", ours)
		runID(own)
		Eventually(stalledReason(adopted)).Should(Equal(v1alpha1.ReasonAdoptionNotAllowed))
		Expect(stalledMessage(adopted)).To(And(ContainSubstring("spec.metricIds[1] names remote Metric "+unheld.ID),
			ContainSubstring("ClusterEvaluationService/"+shared.Name+"'s key is shared")))
		Eventually(stalledReason(elsewhere)).Should(Equal(v1alpha1.ReasonAdoptionNotAllowed))
		Expect(stalledMessage(elsewhere)).To(ContainSubstring("spec.projectId proj-2 is not the project"))
		Expect(up.Calls(evalapitest.OpCreateRun)).To(Equal(1), "only the run of the namespace's own Metric")

		By("a run id another namespace's run holds is not followed: nothing of it is read")
		theirs := metricOf(teamB, "theirs")
		foreign := runID(byIDs(teamB, "foreign", "proj-1", "", theirs))
		copied := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: "copied",
			Annotations: map[string]string{v1alpha1.RunIDAnnotation: foreign}},
			Spec: v1alpha1.EvaluationRunSpec{ProjectID: "proj-1", ServiceRef: onShared(),
				MetricIDs: []v1alpha1.ResourceID{v1alpha1.ResourceID(ours)}}}
		Expect(k8s.Create(rootCtx, copied)).To(Succeed())
		Eventually(stalledReason(copied)).Should(Equal(v1alpha1.ReasonAdoptionNotAllowed))
		Expect(stalledMessage(copied)).To(ContainSubstring("names run " + foreign + ", which this object did not create"))
		Expect(copied.Status.Phase).To(BeEmpty())
		Expect(copied.Status.Records).To(BeZero())

		By("the administrator trusts every allowed namespace")
		Expect(k8s.Patch(rootCtx, shared, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"adoption":"Allowed"}}`)))).To(Succeed())
		touch(adopted)
		runID(adopted)
	})
})
