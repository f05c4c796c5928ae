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
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/manifests"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("plan --live", func() {
	It("says per object what a sync would do against the cluster", func(ctx SpecContext) {
		ns, err := framework.NewNamespace(ctx, k8s, "plan-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())

		// The cluster: the manifests as last applied, a deletion that ran.
		for _, name := range []string{"same", "edited", "moved"} {
			m := framework.NewMetric(ns, name, 0)
			Expect(k8s.Create(ctx, m)).To(Succeed())
		}
		done := &v1alpha1.TestsetDeletion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "done"},
			Spec:       v1alpha1.TestsetDeletionSpec{TestsetID: "ts-1"},
		}
		Expect(k8s.Create(ctx, done)).To(Succeed())
		done.Status.Success = ptr.To(true)
		done.Status.CompletionTime = ptr.To(metav1.Now())
		Expect(k8s.Status().Update(ctx, done)).To(Succeed())

		// The repository: one Metric unchanged, one edited, one moved to
		// another project, one new, one adopted; the deletion, and a new one.
		var edited, moved, adopted v1alpha1.Metric
		framework.NewMetric("", "edited", 0).DeepCopyInto(&edited)
		edited.Spec.Description = ptr.To[v1alpha1.Text]("changed")
		framework.NewMetric("", "moved", 0).DeepCopyInto(&moved)
		moved.Spec.ProjectID = "proj-other"
		framework.NewMetric("", "adopted", 0).DeepCopyInto(&adopted)
		adopted.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: "met_9"}
		dir := GinkgoT().TempDir()
		writeManifest(dir, "metrics.yaml", stream(
			metricManifest(framework.NewMetric("", "same", 0)), metricManifest(&edited), metricManifest(&moved),
			metricManifest(framework.NewMetric("", "new", 0)), metricManifest(&adopted)))
		writeManifest(dir, "deletions.yaml", stream(
			"apiVersion: evaluation.eval-operator.dev/v1alpha1\nkind: TestsetDeletion\nmetadata:\n  name: done\nspec:\n  testsetId: ts-1\n",
			deletionYAML))

		stdout, stderr, err := run(ctx, nil, "plan", "--live", "-n", ns, dir)
		Expect(exitCode(err)).To(Equal(1), stderr)
		at := func(file string) string { return filepath.Join(dir, file) }
		Expect(stdout).To(HavePrefix(
			at("deletions.yaml") + ":1: TestsetDeletion " + ns + "/done: completed: deletion already completed\n" +
				at("deletions.yaml") + ":8: TestcaseDeletion " + ns + "/drop-stale: delete\n" +
				at("metrics.yaml") + ":1: Metric " + ns + "/same: unchanged\n"))
		for _, want := range []string{
			"Metric " + ns + "/edited: update: spec.description\n",
			"Metric " + ns + `/moved: rejected: Metric.evaluation.eval-operator.dev "moved" is invalid: ` +
				`spec.projectId: Invalid value: "proj-other": projectId is immutable: the service cannot move a Metric` + "\n",
			"Metric " + ns + "/new: create: a remote Metric in project proj-testbed\n",
			"Metric " + ns + "/adopted: adopt: the remote Metric met_9\n",
		} {
			Expect(stdout).To(ContainSubstring(want))
		}

		stdout, _, err = run(ctx, nil, "plan", "--live", "-n", ns, "-o", "json", at("deletions.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(stdout).To(ContainSubstring(`"action": "completed"`))
	})
})

var _ = Describe("plan under management and adoption policies", func() {
	It("says which Metrics adopt by name, only report drift, or do nothing", func(ctx SpecContext) {
		ns, err := framework.NewNamespace(ctx, k8s, "plan-policies-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		observe := []v1alpha1.ManagementAction{v1alpha1.ManagementObserve}
		mirror := framework.NewMetric(ns, "mirror", 0)
		mirror.Spec.ManagementPolicies = observe
		Expect(k8s.Create(ctx, mirror)).To(Succeed())

		var edited, byName, observer, idle v1alpha1.Metric
		framework.NewMetric("", "mirror", 0).DeepCopyInto(&edited)
		edited.Spec.ManagementPolicies, edited.Spec.Description = observe, ptr.To[v1alpha1.Text]("changed")
		framework.NewMetric("", "by-name", 0).DeepCopyInto(&byName)
		byName.Spec.AdoptionPolicy = v1alpha1.AdoptionByName
		framework.NewMetric("", "observer", 0).DeepCopyInto(&observer)
		observer.Spec.AdoptionPolicy, observer.Spec.ManagementPolicies = v1alpha1.AdoptionByName, observe
		framework.NewMetric("", "idle", 0).DeepCopyInto(&idle)
		idle.Spec.ManagementPolicies = observe
		dir := GinkgoT().TempDir()
		writeManifest(dir, "metrics.yaml", stream(
			metricManifest(&edited), metricManifest(&byName), metricManifest(&observer), metricManifest(&idle)))

		stdout, stderr, err := run(ctx, nil, "plan", "--live", "-n", ns, dir)
		Expect(err).NotTo(HaveOccurred(), stderr)
		for _, want := range []string{
			"Metric " + ns + `/mirror: report-drift: spec.description not sent, observed only: managementPolicies ["Observe"] do not allow Update` + "\n",
			"Metric " + ns + `/by-name: adopt-by-name: the one remote Metric named "` + string(byName.Spec.Name) +
				`" in project proj-testbed; if there is none, create one` + "\n",
			"Metric " + ns + `/observer: adopt-by-name: the one remote Metric named "` + string(observer.Spec.Name) +
				`" in project proj-testbed; if there is none, wait for one (managementPolicies do not allow Create), observed only`,
			"Metric " + ns + `/idle: nothing: no metric-id annotation, adoptionPolicy None and managementPolicies ["Observe"] without Create`,
		} {
			Expect(stdout).To(ContainSubstring(want))
		}
	})
})

var _ = Describe("plan --live with a Testset's ConfigMap", func() {
	It("compares the testcases with the cluster's ConfigMap, not the manifests' own", func(ctx SpecContext) {
		ns, err := framework.NewNamespace(ctx, k8s, "plan-testsets-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		testset := edit(configMapTestsetYAML, "namespace: team-a", "namespace: "+ns)
		for _, d := range []string{testset, casesConfigMap(ns, faqLines)} {
			var u unstructured.Unstructured
			Expect(yaml.Unmarshal([]byte(d), &u.Object)).To(Succeed())
			Expect(k8s.Create(ctx, &u)).To(Succeed())
		}

		path := writeManifest(GinkgoT().TempDir(), "rendered.yaml", stream(testset, casesConfigMap(ns, faqEdited())))
		stdout, stderr, err := run(ctx, nil, "plan", "--live", path)
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(stdout).To(ContainSubstring("Testset " + ns + "/faq: update: testcases: 0 to create, 2 to update, 1 to delete\n"))
	})
})

// casesConfigMap is ConfigMap faq-cases of namespace ns holding lines.
func casesConfigMap(ns, lines string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: faq-cases\n  namespace: " + ns +
		"\ndata:\n  testcases.jsonl: |\n    " + strings.ReplaceAll(strings.TrimSuffix(lines, "\n"), "\n", "\n    ") + "\n"
}

// metricManifest is m as a manifest in a repository.
func metricManifest(m *v1alpha1.Metric) string {
	data, err := manifests.Marshal(m)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

var _ = Describe("plan of the kinds without a remote copy", func() {
	It("creates or updates a service connection or a run, never plans a deletion of one", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		git := gitIn(dir)
		service := "apiVersion: evaluation.eval-operator.dev/v1alpha1\nkind: EvaluationService\nmetadata:\n  name: default\n" +
			"  namespace: team-a\nspec:\n  standalone: {}\n"
		git("init", "-q")
		writeManifest(dir, "service.yaml", service)
		out, code := runOffline(ctx, "", "plan", dir)
		Expect(code).To(Equal(0), out)
		Expect(out).To(HaveSuffix("EvaluationService team-a/default: create\n"))

		git("add", ".")
		git("commit", "-q", "-m", "base")
		writeManifest(dir, "service.yaml", edit(service, "standalone: {}", "standalone: {runPassCriteria: {minPassRate: 0.85}}"))
		out, code = runOffline(ctx, "", "plan", "--base", "HEAD", dir)
		Expect(code).To(Equal(0), out)
		Expect(out).To(HaveSuffix("EvaluationService team-a/default: update: spec.standalone\n"))
	})
})
