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

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

const gateTemplate = `apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: EvaluationRun
metadata:
  name: support-assistant
  labels: {app: support-assistant}
spec:
  projectId: proj_support
  testsetRef: {name: support-faq}
  metricRefs: [{name: exact}]
  timeout: 10m
`

// failingReader reads through Client the first answered times, then fails
// every read as an API server that went away does.
type failingReader struct {
	client.Client
	answered, reads int
}

func (f *failingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	f.reads++
	if f.reads > f.answered {
		return errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	}
	return f.Client.Get(ctx, key, obj, opts...)
}

// judge plays the operator: it waits for the one EvaluationRun of ns and
// gives it st, or the conditions stalled sets.
func judge(ctx context.Context, ns string, st v1alpha1.EvaluationRunStatus) {
	defer GinkgoRecover()
	Eventually(ctx, func(g Gomega) {
		var l v1alpha1.EvaluationRunList
		g.Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
		g.Expect(l.Items).To(HaveLen(1))
		e := &l.Items[0]
		e.Status = st
		g.Expect(k8s.Status().Update(ctx, e)).To(Succeed())
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

func verdictStatus(verdict v1alpha1.Verdict, passed metav1.ConditionStatus, why string) v1alpha1.EvaluationRunStatus {
	st := v1alpha1.EvaluationRunStatus{RunID: "run_1", Phase: "completed", Verdict: verdict,
		Metrics: []v1alpha1.MetricResult{{ID: "met_1", Name: "exact", Passed: 9, Failed: 1, PassRate: ptr.To(0.9),
			MinPassRate: 1, Judged: true}}}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionPassed, Status: passed,
		Reason: string(verdict), Message: why})
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
		Reason: v1alpha1.ReasonCompleted, Message: string(verdict)})
	return st
}

var _ = Describe("kubectl eval gate", func() {
	var (
		ns       string
		template string
	)
	BeforeEach(func(ctx SpecContext) {
		var err error
		ns, err = framework.NewNamespace(ctx, k8s, "gate-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		template = filepath.Join(GinkgoT().TempDir(), "run.yaml")
		Expect(os.WriteFile(template, []byte(gateTemplate), 0o600)).To(Succeed())
	})

	It("creates a run from the template under a generated name, prints the Metrics and exits 1 when it Failed", func(ctx SpecContext) {
		go judge(ctx, ns, verdictStatus("Failed", metav1.ConditionFalse, "Metric exact is below its minimum pass rate"))
		out, _, err := run(ctx, nil, "gate", "-n", ns, "-f", template, "--poll-interval", "100ms")
		Expect(exitCode(err)).To(Equal(1), "err: %v", err)
		Expect(out).To(MatchRegexp(`evaluationrun/support-assistant-\w+ created in ` + ns))
		Expect(out).To(MatchRegexp(`exact\s+9\s+1\s+0\s+0.90\s+1.00\s+true`))
		Expect(out).To(ContainSubstring("(run run_1): Failed: Metric exact is below its minimum pass rate"))
		var l v1alpha1.EvaluationRunList
		Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
		Expect(l.Items[0].Labels).To(HaveKeyWithValue("app", "support-assistant"))
		Expect(l.Items[0].Spec.MetricRefs).To(Equal([]v1alpha1.ObjectRef{{Name: "exact"}}))
	})

	It("exits 0 when the run Passed, reading the template from a ConfigMap and stamping the system version", func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gate"},
			Data: map[string]string{"evaluationrun.yaml": gateTemplate}})).To(Succeed())
		go judge(ctx, ns, verdictStatus("Passed", metav1.ConditionTrue, "every judged Metric reached its minimum pass rate"))
		const id = "0b9c3f7e-4d2a-4c1e-9f3b-2a6d8e1c5b70"
		_, _, err := run(ctx, nil, "gate", "-n", ns, "--configmap", "gate", "--system-version-id", id,
			"--canary", "support-assistant", "--revision", "7c9f8d6b5", "--poll-interval", "100ms")
		Expect(err).NotTo(HaveOccurred())
		var l v1alpha1.EvaluationRunList
		Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
		Expect(l.Items[0].Spec.SystemVersionID).To(Equal(id))
		Expect(l.Items[0].Labels).To(And(HaveKeyWithValue(v1alpha1.CanaryLabel, "support-assistant"),
			HaveKeyWithValue(v1alpha1.RevisionLabel, "7c9f8d6b5")))

		By("a revision that is no label value is refused before anything is created")
		_, _, err = run(ctx, nil, "gate", "-n", ns, "--configmap", "gate", "--revision", "refs/heads/main")
		Expect(exitCode(err)).To(Equal(2))
		Expect(err).To(MatchError(ContainSubstring(`label evaluation.eval-operator.dev/revision="refs/heads/main"`)))
		Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
		Expect(l.Items).To(HaveLen(1))
	})

	It("upserts the release's SystemVersion and links the run to it: the same release, the same version", func(ctx SpecContext) {
		Expect(k8s.Create(ctx, &v1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "support-assistant"},
			Spec: v1alpha1.SystemSpec{ProjectID: "proj_support", Name: "Support assistant",
				Config: apiextensionsv1.JSON{Raw: []byte(`{"model":"gpt-4o"}`)}}})).To(Succeed())
		system := &v1alpha1.System{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support-assistant"}, system)).To(Succeed())
		gate := func(first, second string) (string, error) {
			go judge(ctx, ns, verdictStatus("Passed", metav1.ConditionTrue, "every judged Metric reached its minimum pass rate"))
			args := []string{"gate", "-n", ns, "-f", template, "--system", "support-assistant", "--revision", "7c9f8d6b5",
				"--poll-interval", "100ms", "--version", first, "--version", second}
			out, _, err := run(ctx, nil, args...)
			return out, err
		}
		out, err := gate("image=registry.example.com/support-assistant:v42", "model=gpt-4o")
		Expect(err).NotTo(HaveOccurred())
		var versions v1alpha1.SystemVersionList
		Expect(k8s.List(ctx, &versions, client.InNamespace(ns))).To(Succeed())
		Expect(versions.Items).To(HaveLen(1))
		v := versions.Items[0]
		Expect(out).To(ContainSubstring("systemversion/" + v.Name + " created in " + ns))
		Expect(v.Name).To(MatchRegexp(`^support-assistant-[0-9a-f]{10}$`))
		Expect(v.Spec.SystemRef.Name).To(Equal("support-assistant"))
		Expect(v.Spec.Config.Raw).To(MatchJSON(`{"image":"registry.example.com/support-assistant:v42","model":"gpt-4o","revision":"7c9f8d6b5"}`))
		Expect(v.OwnerReferences).To(ConsistOf(HaveField("UID", system.UID)), "deleting the System deletes it")
		var runs v1alpha1.EvaluationRunList
		Expect(k8s.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
		Expect(runs.Items).To(HaveLen(1))
		Expect(runs.Items[0].Spec.SystemVersionRef).To(Equal(&v1alpha1.ObjectRef{Name: v.Name}))
		Expect(runs.Items[0].Spec.SystemVersionID).To(BeEmpty())
		Expect(k8s.Delete(ctx, &runs.Items[0])).To(Succeed())

		By("the same release, its pairs in another order: the same SystemVersion")
		out, err = gate("model=gpt-4o", "image=registry.example.com/support-assistant:v42")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("systemversion/" + v.Name + " unchanged"))
		Expect(k8s.List(ctx, &versions, client.InNamespace(ns))).To(Succeed())
		Expect(versions.Items).To(HaveLen(1))
		Expect(k8s.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
		Expect(runs.Items).To(ConsistOf(HaveField("Spec.SystemVersionRef", Equal(&v1alpha1.ObjectRef{Name: v.Name}))))
	})

	It("refuses a release it cannot link before creating anything", func(ctx SpecContext) {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--system-version-id", "7c9f8d6b5"}, `--system-version-id "7c9f8d6b5" is not a UUID`},
			{[]string{"--system", "support-assistant", "--system-version-id", "0b9c3f7e-4d2a-4c1e-9f3b-2a6d8e1c5b70"}, "not both"},
			{[]string{"--version", "image=x"}, "--version needs --system"},
			{[]string{"--system", "support-assistant"}, "--version must hold what identifies the release"},
			{[]string{"--system", "support-assistant", "--version", "image"}, `--version "image": want KEY=VALUE`},
			{[]string{"--system", "support-assistant", "--revision", "r1", "--version", "revision=r2"}, "--revision is the release's revision"},
			{[]string{"--system", "support-assistant", "--version", "image=" + strings.Repeat("i", 513)}, "--version image must be at most 512 bytes"},
			{[]string{"--system", "support-assistant", "--revision", "r1"}, "System support-assistant does not exist in " + ns},
		} {
			_, _, err := run(ctx, nil, append([]string{"gate", "-n", ns, "-f", template}, c.args...)...)
			Expect(exitCode(err)).To(Equal(2), "%v", c.args)
			Expect(err).To(MatchError(ContainSubstring(c.want)), "%v", c.args)
		}
		var runs v1alpha1.EvaluationRunList
		Expect(k8s.List(ctx, &runs, client.InNamespace(ns))).To(Succeed())
		Expect(runs.Items).To(BeEmpty())
		var versions v1alpha1.SystemVersionList
		Expect(k8s.List(ctx, &versions, client.InNamespace(ns))).To(Succeed())
		Expect(versions.Items).To(BeEmpty())
	})

	It("exits 2 when the run is Inconclusive, stalls, or has no verdict in time", func(ctx SpecContext) {
		go judge(ctx, ns, verdictStatus("Inconclusive", metav1.ConditionUnknown, "the run did not finish in time"))
		_, _, err := run(ctx, nil, "gate", "-n", ns, "-f", template, "--poll-interval", "100ms")
		Expect(exitCode(err)).To(Equal(2))

		stalled, err := framework.NewNamespace(ctx, k8s, "gate-stalled-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		st := v1alpha1.EvaluationRunStatus{}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonStandaloneUnsupported, Message: "the run resolves to a standalone service", ObservedGeneration: 1})
		go judge(ctx, stalled, st)
		_, _, err = run(ctx, nil, "gate", "-n", stalled, "-f", template, "--poll-interval", "100ms")
		Expect(exitCode(err)).To(Equal(2))
		Expect(err).To(MatchError(ContainSubstring("needs a person: StandaloneUnsupported")))

		quiet, err := framework.NewNamespace(ctx, k8s, "gate-quiet-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		_, _, err = run(ctx, nil, "gate", "-n", quiet, "-f", template, "--timeout", "1s", "--poll-interval", "100ms")
		Expect(exitCode(err)).To(Equal(2))
		Expect(err).To(MatchError(ContainSubstring("has no verdict after 1s")))

		deleted, err := framework.NewNamespace(ctx, k8s, "gate-deleted-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		go func() {
			defer GinkgoRecover()
			Eventually(ctx, func(g Gomega) {
				var l v1alpha1.EvaluationRunList
				g.Expect(k8s.List(ctx, &l, client.InNamespace(deleted))).To(Succeed())
				g.Expect(l.Items).To(HaveLen(1))
				g.Expect(k8s.Delete(ctx, &l.Items[0])).To(Succeed())
			}).WithTimeout(30 * time.Second).Should(Succeed())
		}()
		_, _, err = run(ctx, nil, "gate", "-n", deleted, "-f", template, "--poll-interval", "100ms")
		Expect(exitCode(err)).To(Equal(2))
		Expect(err).To(MatchError(ContainSubstring("was deleted before its verdict")))
	})

	It("prints the run's progress once per change while it waits", func(ctx SpecContext) {
		waiting := v1alpha1.EvaluationRunStatus{}
		meta.SetStatusCondition(&waiting.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady,
			Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonReferencesNotReady, Message: "Testset support-faq not found"})
		running := v1alpha1.EvaluationRunStatus{RunID: "run_1", Phase: "running_execution", Records: 1,
			ExpectedRecords: ptr.To[int32](2)}
		scoring := v1alpha1.EvaluationRunStatus{RunID: "run_1", Phase: "running_scoring", Records: 2,
			ExpectedRecords: ptr.To[int32](2), Scores: 1}
		go func() {
			defer GinkgoRecover()
			// Each state holds for many polls: the gate prints it once.
			for _, st := range []v1alpha1.EvaluationRunStatus{waiting, running, scoring} {
				judge(ctx, ns, st)
				time.Sleep(time.Second)
			}
			judge(ctx, ns, verdictStatus("Passed", metav1.ConditionTrue, "every judged Metric reached its minimum pass rate"))
		}()
		out, _, err := run(ctx, nil, "gate", "-n", ns, "-f", template, "--poll-interval", "50ms")
		Expect(err).NotTo(HaveOccurred())
		for _, line := range []string{
			": ReferencesNotReady: Testset support-faq not found\n",
			": run run_1 running_execution, 1 of 2 records, 0 scores\n",
			": run run_1 running_scoring, 2 of 2 records, 1 scores\n",
			": run run_1 completed, 0 of ? records, 0 scores\n",
		} {
			Expect(strings.Count(out, line)).To(Equal(1), "%q in:\n%s", line, out)
		}
	})

	It("says the cluster is unreachable and exits 2 after a bounded number of failed reads", func(ctx SpecContext) {
		e := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unreached"},
			Spec: v1alpha1.EvaluationRunSpec{ProjectID: "proj_support", TestsetRef: &v1alpha1.ObjectRef{Name: "support-faq"},
				MetricRefs: []v1alpha1.ObjectRef{{Name: "exact"}}}}
		Expect(k8s.Create(ctx, e)).To(Succeed())
		down := &failingReader{Client: k8s, answered: 2}
		o := &gateOptions{poll: 10 * time.Millisecond}
		var out strings.Builder
		start := time.Now()
		_, err := o.await(ctx, down, client.ObjectKeyFromObject(e), time.Minute, &out)
		Expect(exitCode(err)).To(Equal(2))
		Expect(err).To(MatchError(And(ContainSubstring("cluster unreachable: 30 reads of evaluationrun/unreached failed in a row"),
			ContainSubstring("connection refused"))))
		Expect(down.reads).To(Equal(2+maxFailedReads), "the reads that failed in a row end the wait")
		Expect(time.Since(start)).To(BeNumerically("<", 10*time.Second), "long before the wait's minute")
		Expect(out.String()).To(MatchRegexp(`^evaluationrun/unreached: Pending: [^\n]+\n$`), "the one state read")
	})

	It("refuses a template that is not an EvaluationRun, creating nothing", func(ctx SpecContext) {
		Expect(os.WriteFile(template, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600)).To(Succeed())
		_, _, err := run(ctx, nil, "gate", "-n", ns, "-f", template)
		Expect(exitCode(err)).To(Equal(2))
		Expect(err).To(MatchError(ContainSubstring("not EvaluationRun")))
		var l v1alpha1.EvaluationRunList
		Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
		Expect(l.Items).To(BeEmpty())
	})
})
