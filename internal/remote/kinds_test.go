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

package remote_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

var _ = Describe("The clients of each kind", func() {
	ctx := context.Background()
	meta := metav1.ObjectMeta{Namespace: "ns", Name: "obj"}
	connect := func(d remote.Defaults) *remote.Connection {
		GinkgoHelper()
		c := fake.NewClientBuilder().WithScheme(newScheme()).Build()
		conn, err := remote.NewConnector(c, d).Connect(ctx, &v1alpha1.Metric{ObjectMeta: meta})
		Expect(err).NotTo(HaveOccurred())
		return conn
	}
	standalone := func() *remote.Connection { return connect(remote.Defaults{}) }
	service := func() *remote.Connection {
		return connect(remote.Defaults{Service: stubService{url: "https://eval.example.com/api/v2"}})
	}

	It("want a finalizer where the service keeps a copy to delete, by the object's policy", func() {
		deletes := &v1alpha1.Metric{ObjectMeta: meta, Spec: v1alpha1.MetricSpec{DeletionPolicy: v1alpha1.DeletionPolicyDelete}}
		orphans := &v1alpha1.Metric{ObjectMeta: meta, Spec: v1alpha1.MetricSpec{DeletionPolicy: v1alpha1.DeletionPolicyOrphan}}
		Expect(service().Metric(deletes).NeedsFinalizer()).To(BeTrue())
		Expect(service().Metric(orphans).NeedsFinalizer()).To(BeFalse())
		Expect(standalone().Metric(deletes).NeedsFinalizer()).To(BeFalse(), "the cluster is the record: nothing to delete")
		set := &v1alpha1.Testset{ObjectMeta: meta, Spec: v1alpha1.TestsetSpec{DeletionPolicy: v1alpha1.DeletionPolicyDelete}}
		Expect(service().Testset(set).NeedsFinalizer()).To(BeTrue())
		Expect(standalone().Testset(set).NeedsFinalizer()).To(BeFalse())
	})

	It("give a standalone version the id of its System and config, so one config is one version however reconciles race", func() {
		const system = "9d2338d4-bf1d-47df-b0d4-ed803e578bd3"
		version := func(config string) *v1alpha1.SystemVersionSpec {
			return &v1alpha1.SystemVersionSpec{Config: apiextensionsv1.JSON{Raw: []byte(config)}}
		}
		c := standalone().SystemVersion(&v1alpha1.SystemVersion{ObjectMeta: meta})
		a, err := c.UpsertVersion(ctx, system, version(`{"image":"sha256:ab","model":"m"}`))
		Expect(err).NotTo(HaveOccurred())
		Expect(a.ID()).To(MatchRegexp(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`))
		same, err := c.UpsertVersion(ctx, system, version(`{ "model": "m", "image": "sha256:ab" }`))
		Expect(err).NotTo(HaveOccurred())
		Expect(same.ID()).To(Equal(a.ID()), "the same JSON value, another spelling")
		other, _ := c.UpsertVersion(ctx, system, version(`{"image":"sha256:cd","model":"m"}`))
		Expect(other.ID()).NotTo(Equal(a.ID()), "another config is another version, as the service upserts it")
		elsewhere, _ := c.UpsertVersion(ctx, "6f1c1d2e-0000-4000-8000-000000000000", version(`{"image":"sha256:ab","model":"m"}`))
		Expect(elsewhere.ID()).NotTo(Equal(a.ID()), "another System's version")

		got, err := c.GetVersion(ctx, system, a.ID(), version(`{"model":"m","image":"sha256:ab"}`))
		Expect(err).NotTo(HaveOccurred())
		Expect(got.ID()).To(Equal(a.ID()))
		_, err = c.GetVersion(ctx, system, a.ID(), version(`{"image":"sha256:cd","model":"m"}`))
		Expect(remote.Gone(err)).To(BeTrue(), "a changed config is not the recorded version: %v", err)
	})

	It("answer a standalone System's production version from its annotation, a version id only", func() {
		const system, version = "9d2338d4-bf1d-47df-b0d4-ed803e578bd3", "6f1c1d2e-0000-4000-8000-000000000001"
		spec := &v1alpha1.SystemSpec{Name: "bot", Config: apiextensionsv1.JSON{Raw: []byte(`{}`)}}
		production := func(annotation string) string {
			GinkgoHelper()
			s := &v1alpha1.System{ObjectMeta: meta}
			if annotation != "" {
				s.Annotations = map[string]string{v1alpha1.ProductionVersionAnnotation: annotation}
			}
			got, err := standalone().System(s).GetSystem(ctx, system, spec)
			Expect(err).NotTo(HaveOccurred())
			return got.ProductionVersionID()
		}
		Expect(production("")).To(BeEmpty(), "none until a run promotes one")
		Expect(production(version)).To(Equal(version))
		Expect(production("not-a-version")).To(BeEmpty(), "a version id is a UUID")

		promoted, err := standalone().System(&v1alpha1.System{ObjectMeta: meta}).Promote(ctx, system, version)
		Expect(err).NotTo(HaveOccurred())
		Expect(promoted.ProductionVersionID()).To(Equal(version))
	})

	It("record a standalone Testset's testcases in its status, and leave a service's to be sent", func() {
		t := &v1alpha1.Testset{ObjectMeta: meta}
		_, kept := service().Testset(t).KeptInCluster(3, "sha256:abc")
		Expect(kept).To(BeFalse())
		Expect(t.Status.Digest).To(BeEmpty())
		msg, kept := standalone().Testset(t).KeptInCluster(3, "sha256:abc")
		Expect(kept).To(BeTrue())
		Expect(msg).To(ContainSubstring("standalone"))
		Expect(t.Status.Testcases).To(BeEquivalentTo(3))
		Expect(t.Status.Digest).To(Equal("sha256:abc"))
	})

	It("give a Metric or Testset committed on a standalone service its id, and change nothing for a service", func() {
		m := &v1alpha1.Metric{ObjectMeta: meta}
		Expect(service().CarriedOutByCommit(m)).To(BeFalse())
		Expect(m.Annotations).To(BeEmpty())
		Expect(standalone().CarriedOutByCommit(m)).To(BeTrue())
		Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.ServiceAnnotation, remote.Standalone))
		Expect(m.Annotations[v1alpha1.MetricIDAnnotation]).To(MatchRegexp(`^met_[0-9a-f]{20}$`))
		t := &v1alpha1.Testset{ObjectMeta: meta}
		Expect(standalone().CarriedOutByCommit(t)).To(BeTrue())
		Expect(t.Annotations[v1alpha1.TestsetIDAnnotation]).To(MatchRegexp(`^tst_[0-9a-f]{20}$`))
		run := &v1alpha1.EvaluationRun{ObjectMeta: meta}
		Expect(standalone().CarriedOutByCommit(run)).To(BeTrue())
		Expect(run.Annotations).To(BeEmpty(), "a run's id is its reconciler's to give")
	})

	Describe("of a run kept in the cluster", func() {
		human := verdict.Metric{ID: "met_h", Human: true}
		ai := verdict.Metric{ID: "met_a"}
		run := func(records int32, counts ...v1alpha1.MetricResult) *v1alpha1.EvaluationRun {
			return &v1alpha1.EvaluationRun{ObjectMeta: meta,
				Status: v1alpha1.EvaluationRunStatus{RunID: "run_1", Records: records, Metrics: counts}}
		}

		It("refuses metricIds, which name remote Metrics it cannot hold", func() {
			e := run(0)
			Expect(standalone().Run(e).Unsupported()).To(BeEmpty())
			e.Spec.MetricIDs = []v1alpha1.ResourceID{"met_1"}
			Expect(standalone().Run(e).Unsupported()).To(ContainSubstring("metricRefs"))
			Expect(service().Run(e).Unsupported()).To(BeEmpty())
		})

		It("refuses trials and a baseline, which judge by testcase from records it does not keep", func() {
			e := run(0)
			e.Spec.PassCriteria.Trials = ptr.To[int32](1)
			Expect(standalone().Run(e).Unsupported()).To(BeEmpty())
			e.Spec.PassCriteria.Trials = ptr.To[int32](3)
			Expect(standalone().Run(e).Unsupported()).To(ContainSubstring("passCriteria.trials"))
			Expect(service().Run(e).Unsupported()).To(BeEmpty())
			e = run(0)
			e.Spec.PassCriteria.Baseline = &v1alpha1.Baseline{RunRef: &v1alpha1.ObjectRef{Name: "production"}}
			Expect(standalone().Run(e).Unsupported()).To(ContainSubstring("passCriteria.baseline"))
			Expect(service().Run(e).Unsupported()).To(BeEmpty())
		})

		It("reads its phase from the counts in its status, and records the records it expects", func() {
			e := run(0)
			got, err := standalone().Run(e).Get(ctx, ptr.To(2), []verdict.Metric{ai})
			Expect(err).NotTo(HaveOccurred())
			Expect(got.Status).To(Equal(evalapi.RunAwaitingExecution))
			Expect(e.Status.ExpectedRecords).To(Equal(ptr.To[int32](2)))
			e.Status.Records = 1
			got, _ = standalone().Run(e).Get(ctx, nil, []verdict.Metric{ai})
			Expect(got.Status).To(Equal(evalapi.RunRunningExecution))
			e.Status.Records = 2
			got, _ = standalone().Run(e).Get(ctx, nil, []verdict.Metric{ai, human})
			Expect(got.Status).To(Equal(evalapi.RunRunningScoring))
			e.Status.Metrics = []v1alpha1.MetricResult{{ID: "met_a", Passed: 1, Failed: 1}}
			got, _ = standalone().Run(e).Get(ctx, nil, []verdict.Metric{ai, human})
			Expect(got.Status).To(Equal(evalapi.RunAwaitingHumanScoring))
			got, _ = standalone().Run(e).Get(ctx, nil, []verdict.Metric{ai})
			Expect(got.Status).To(Equal(evalapi.RunCompleted))
			Expect(got.ID).To(Equal("run_1"))
		})

		It("tallies the scores its status counts, and so does a reader without a service", func() {
			e := run(2, v1alpha1.MetricResult{ID: "met_a", Passed: 2})
			for _, c := range []remote.RunClient{standalone().Run(e), remote.ClusterRun(e)} {
				got, err := c.Get(ctx, nil, []verdict.Metric{ai})
				Expect(err).NotTo(HaveOccurred())
				tally, err := c.Tally(ctx, got, []verdict.Metric{ai})
				Expect(err).NotTo(HaveOccurred())
				res := tally.Result(2, "", verdict.Criteria{})
				Expect(res.Metrics).To(HaveLen(1))
				Expect(res.Metrics[0].Passed).To(Equal(2))
			}
		})
	})
})
