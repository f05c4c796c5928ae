//go:build packaging

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

package packaging

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/execute"
	"github.com/eval-operator/eval-operator/internal/executorpolicy"
	"github.com/eval-operator/eval-operator/internal/gates"
	"github.com/eval-operator/eval-operator/internal/validate"
)

// gitopsServices are the services of examples/gitops, each a namespace with
// its whole release loop.
var gitopsServices = []string{"search", "support-assistant"}

// examples/gitops is a repository teams copy: each cluster's render must be
// what the plugin's validate and the API server both admit.
var _ = Describe("The example GitOps repository", func() {
	DescribeTable("renders a cluster that kubectl eval validate and the API server admit",
		func(ctx SpecContext, cluster string, observe bool) {
			rendered := kustomize(ctx, filepath.Join(repoRoot, "examples", "gitops", "clusters", cluster))
			docs, err := validate.Split(cluster, rendered)
			Expect(err).NotTo(HaveOccurred())
			v, err := validate.New()
			Expect(err).NotTo(HaveOccurred())
			var policies [][]any
			var runs []*v1alpha1.EvaluationRun
			var grant *v1alpha1.ExecutorGrant
			kinds, accounts, heuristic := map[string]int{}, map[string]bool{}, map[string]bool{}
			for _, d := range docs {
				kinds[d.Object.GetKind()]++
				if d.Object.GetKind() == "ConfigMap" && d.Object.GetName() == "evaluation-gate" {
					// The gate's run template: a run the API server admits.
					data, _, _ := unstructured.NestedStringMap(d.Object.Object, "data")
					run, err := gates.FromTemplate([]byte(data[gates.TemplateKey]), d.Object.GetNamespace())
					Expect(err).NotTo(HaveOccurred())
					content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(run)
					Expect(err).NotTo(HaveOccurred())
					u := &unstructured.Unstructured{Object: content}
					u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("EvaluationRun"))
					_, err = v.Create(ctx, u)
					Expect(err).NotTo(HaveOccurred(), "the run template of %s", d.Object.GetNamespace())
					runs = append(runs, run)
				}
				switch d.Object.GetKind() {
				case "ClusterEvaluationService":
					var svc v1alpha1.ClusterEvaluationService
					Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object.Object, &svc)).To(Succeed())
					grant = svc.Spec.Executor
				case "ServiceAccount":
					accounts[d.Object.GetNamespace()+"/"+d.Object.GetName()] = true
				case "Metric":
					evalType, _, _ := unstructured.NestedString(d.Object.Object, "spec", "evalType")
					heuristic[d.Object.GetNamespace()+"/"+d.Object.GetName()] = evalType == "heuristic"
				}
				if !v.Handles(d.Object.GroupVersionKind()) {
					continue
				}
				_, err = v.Create(ctx, d.Object)
				Expect(err).NotTo(HaveOccurred(), "%s %s", d.Object.GetKind(), d.Object.GetName())
				if d.Object.GetKind() == "Metric" {
					p, _, _ := unstructured.NestedSlice(d.Object.Object, "spec", "managementPolicies")
					policies = append(policies, p)
				}
			}
			Expect(policies).To(HaveLen(4))
			// Production runs each service's whole loop; staging mirrors the
			// Metrics only, with each service's key.
			loop := map[string]int{"Testset": 2, "System": 2, "Rollout": 2, "AnalysisTemplate": 2, "RoleBinding": 2, "ExternalSecret": 2}
			if observe {
				Expect(policies).To(HaveEach(Equal([]any{"Observe"})))
				loop = map[string]int{"Testset": 0, "System": 0, "Rollout": 0, "AnalysisTemplate": 0, "RoleBinding": 0, "ExternalSecret": 2}
			} else {
				Expect(policies).To(HaveEach(BeNil()))
			}
			for kind, n := range loop {
				Expect(kinds[kind]).To(Equal(n), kind)
			}
			for _, run := range runs {
				expectShippedExecutor(run, grant, accounts, heuristic)
			}

			kubectl(ctx, kustomize(ctx, filepath.Join(repoRoot, "config", "crd")), "apply", "--server-side",
				"--field-manager=packaging-gitops", "-f", "-")
			others, err := os.ReadFile(filepath.Join("testdata", "gitops-crds.yaml"))
			Expect(err).NotTo(HaveOccurred())
			apply(ctx, "packaging-gitops", others)
			waitEstablished(ctx, append([]string{"rollouts.argoproj.io", "analysistemplates.argoproj.io",
				"externalsecrets.external-secrets.io"}, crdNames...)...)
			DeferCleanup(func(ctx SpecContext) {
				// The namespaces stay: without a controller-manager they would
				// stay Terminating, and the other cluster's render uses them.
				kubectl(ctx, nil, "delete", "--ignore-not-found", "clusterevaluationservice/default")
				for _, ns := range gitopsServices {
					kubectl(ctx, nil, "delete", "--ignore-not-found", "metrics,testsets", "--all", "-n", ns)
				}
			})
			Expect(apply(ctx, "packaging-gitops", rendered)).To(BeEmpty(), "warnings")
		},
		Entry("production, the writer", "production", false),
		Entry("staging, the read-only mirror", "staging", true),
	)
})

// expectShippedExecutor asserts that run's executor is the one the
// operator's image ships, in the release's image, with checks exec accepts,
// and that the operator runs it under the cluster service's grant: the
// ServiceAccount it names exists in the run's namespace and the template
// passes executorpolicy (no other Secret, the restricted profile). accounts
// and heuristic are the render's ServiceAccounts and Metrics (true when
// heuristic), by namespace/name.
func expectShippedExecutor(run *v1alpha1.EvaluationRun, grant *v1alpha1.ExecutorGrant,
	accounts, heuristic map[string]bool) {
	GinkgoHelper()
	Expect(run.Spec.Executor).NotTo(BeNil(), "the run template of %s", run.Namespace)
	containers := run.Spec.Executor.Template.Spec.Containers
	Expect(containers).To(HaveLen(1), "the run template of %s", run.Namespace)
	c := containers[0]
	Expect(c.Image).To(Equal("ghcr.io/eval-operator/eval-operator:"+readChartMeta().AppVersion), run.Namespace)
	Expect(c.Command).To(Equal([]string{"/kubectl-eval", "exec"}), run.Namespace)
	metrics := map[string]bool{}
	for _, m := range run.Spec.MetricRefs {
		metrics[m.Name] = true
	}
	checks := 0
	for _, arg := range c.Args {
		if s, ok := strings.CutPrefix(arg, "--check="); ok {
			check, err := execute.ParseCheck(s)
			Expect(err).NotTo(HaveOccurred(), run.Namespace)
			Expect(metrics).To(HaveKey(check.Metric), "a check of %s names a Metric of the run", run.Namespace)
			Expect(heuristic).To(HaveKeyWithValue(run.Namespace+"/"+check.Metric, true),
				"a check of %s scores a heuristic Metric", run.Namespace)
			checks++
		}
		if s, ok := strings.CutPrefix(arg, "--output="); ok {
			Expect(execute.CheckPath(s)).To(Succeed(), run.Namespace)
		}
	}
	Expect(checks).To(BeNumerically(">", 0), "%s scores a heuristic Metric with a check", run.Namespace)

	Expect(run.Spec.APIKeySecretRef).NotTo(BeNil(), run.Namespace)
	g := executorpolicy.Grant{KeySecret: run.Spec.APIKeySecretRef.Name, Source: "ClusterEvaluationService/default"}
	if grant != nil {
		g.ServiceAccountName, g.Secrets = grant.ServiceAccountName, grant.Secrets
		Expect(accounts).To(HaveKey(run.Namespace+"/"+grant.ServiceAccountName),
			"the granted ServiceAccount exists where %s runs its executor", run.Namespace)
	}
	tmpl, path := run.Spec.Executor.Template.DeepCopy(), field.NewPath("spec", "executor", "template")
	Expect(executorpolicy.CheckSize(tmpl, path)).To(Succeed(), run.Namespace)
	Expect(executorpolicy.Apply(tmpl, g, path)).To(BeEmpty(),
		"the executor of %s under the grant", run.Namespace)
}
