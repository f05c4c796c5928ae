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
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("The alerts and the dashboard", func() {
	It("use only metric names a running manager exports", func(ctx SpecContext) {
		used := usedMetricNames(filepath.Join("config", "prometheus", "rules.yaml"),
			filepath.Join("config", "grafana", "eval-operator.json"))
		Expect(used).To(ContainElements("evaloperator_objects", "workqueue_depth"))

		// A manager with an upstream and the REST server, and one of each
		// kind of traffic, so that every series the rules and panels read exists.
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		ns := newNamespace(ctx, "monitoring")
		createKeySecret(ctx, ns, "evaluation-api-key", evalapitest.DefaultKey, true)
		apiAddr, err := framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		m, err := framework.StartMetered(framework.MeteredOptions{
			Binary: managerBinary, Kubeconfig: controlPlane.Kubeconfig, Log: &prefixed{name: "manager"},
			// Leader election, for leader_election_master_status (EvalOperatorNoLeader).
			Args: []string{"--api-url=" + upstream.URL(), "--serve-api=" + apiAddr,
				"--leader-elect", "--leader-election-namespace=" + ns},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(m.Terminate)

		metric := failoverMetric(ns, 0)
		Expect(k8s.Create(ctx, metric)).To(Succeed())
		readyWith(ctx, metric, v1alpha1.ReasonCreated)
		Eventually(func() (int, error) { // until the server listens and knows the key
			code, _, err := call(ctx, http.MethodGet, "http://"+apiAddr+"/api/v2/projects/proj_e2e/metrics",
				evalapitest.DefaultKey, "")
			return code, err
		}).Should(Equal(http.StatusOK))

		// A judged EvaluationRun, for the run panels; paused, so its status is the spec's to write.
		run := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "monitoring",
			Annotations: map[string]string{v1alpha1.PausedAnnotation: "true"}},
			Spec: v1alpha1.EvaluationRunSpec{ProjectID: "proj_e2e", MetricIDs: []v1alpha1.ResourceID{"met_1"}}}
		Expect(k8s.Create(ctx, run)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(run), run)).To(Succeed())
			run.Status.Verdict = "Passed"
			run.Status.Metrics = []v1alpha1.MetricResult{{ID: "met_1", Name: "met_1", Passed: 1, PassRate: ptr.To(1.0),
				MinPassRate: 1, Judged: true}}
			g.Expect(k8s.Status().Update(ctx, run)).To(Succeed())
		}).Should(Succeed())

		Eventually(func(g Gomega) []string {
			families, err := m.Scrape(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			return notExported(withoutPrometheusOwn(used), families)
		}).Should(BeEmpty(), "metric names the alerts or the dashboard use that the manager does not export")
	})

	It("notice a misspelt name", func() {
		families := map[string]*dto.MetricFamily{
			"evaloperator_objects":                       {Type: dto.MetricType_GAUGE.Enum()},
			"evaloperator_rest_request_duration_seconds": {Type: dto.MetricType_HISTOGRAM.Enum()},
		}
		Expect(notExported([]string{"evaloperator_objects", "evaloperator_rest_request_duration_seconds_bucket",
			"evaloperator_object", "evaloperator_rest_request_duration_seconds"}, families)).
			To(ConsistOf("evaloperator_object", "evaloperator_rest_request_duration_seconds"))
	})
})

// withoutPrometheusOwn drops the series Prometheus makes itself for each
// target (up, for EvalOperatorTargetDown).
func withoutPrometheusOwn(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "up" })
}

// usedMetricNames runs promql-names (make promtool) on files of the
// repository: the metric names their PromQL expressions select.
func usedMetricNames(files ...string) []string {
	GinkgoHelper()
	bin := os.Getenv("PROMQL_NAMES")
	if bin == "" {
		bin = filepath.Join(framework.RepoRoot(), "bin", "promql-names")
	}
	cmd := exec.Command(bin, files...)
	cmd.Dir = framework.RepoRoot()
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "%s (make promtool builds it): %s", bin, stderrOf(err))
	return strings.Fields(string(out))
}

func stderrOf(err error) string {
	if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) {
		return string(exitErr.Stderr)
	}
	return ""
}

// notExported returns the names in used that no series of families has: a
// histogram family x has the series x_bucket, x_sum and x_count, a summary
// x, x_sum and x_count, the others x.
func notExported(used []string, families map[string]*dto.MetricFamily) []string {
	exported := map[string]bool{}
	for name, f := range families {
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			exported[name+"_bucket"], exported[name+"_sum"], exported[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			exported[name], exported[name+"_sum"], exported[name+"_count"] = true, true, true
		default:
			exported[name] = true
		}
	}
	var missing []string
	for _, name := range used {
		if !exported[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing
}
