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
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Charts released as 0.1.0, from the repository's history. The first had
// the CRDs in crds/, which Helm installs once and never makes part of the
// release; later commits made them templates without changing the version.
const (
	// chart010 is the last commit of chart 0.1.0 with crds/.
	chart010 = "5f553651fc454bbdade85ed8a287713e8a817a65"
	// chart010Templates is the last commit of chart 0.1.0, CRDs as templates.
	chart010Templates = "545b1dd9029b81837c2e74e0c6bcc809948c6313"
)

// chartAt extracts charts/eval-operator as it was at commit. It skips the
// spec when the clone does not have the commit (a shallow clone).
func chartAt(ctx context.Context, commit string) string {
	GinkgoHelper()
	if _, _, err := runErr(ctx, nil, "git", "cat-file", "-e", commit+"^{commit}"); err != nil {
		Skip("commit " + commit + " (chart 0.1.0) is not in this clone, as in a shallow clone: " +
			"`git fetch --unshallow` to run the upgrade from it")
	}
	dir := GinkgoT().TempDir()
	archive, _ := run(ctx, nil, "git", "archive", "--format=tar", commit, "charts/eval-operator")
	run(ctx, archive, "tar", "-x", "-C", dir)
	chart := filepath.Join(dir, "charts", "eval-operator")
	Expect(chartMetaOf(chart).Version).To(Equal("0.1.0"), "the chart at %s", commit)
	return chart
}

// crd reads one CRD from the API server.
func crd(ctx context.Context, name string) apiextensionsv1.CustomResourceDefinition {
	GinkgoHelper()
	out, _ := kubectl(ctx, nil, "get", "crd", name, "-o", "json")
	var c apiextensionsv1.CustomResourceDefinition
	Expect(json.Unmarshal(out, &c)).To(Succeed())
	return c
}

// deploymentImage is the manager image of a release's Deployment.
func deploymentImage(ctx context.Context, namespace, release string) string {
	GinkgoHelper()
	out, _ := kubectl(ctx, nil, "get", "-n", namespace, "deployment/"+release+"-eval-operator",
		"-o", "jsonpath={.spec.template.spec.containers[0].image}")
	return string(out)
}

// releaseRevision is the revision and status of a release, as helm status says.
func releaseRevision(ctx context.Context, namespace, release string) (revision int, status string) {
	GinkgoHelper()
	var s struct {
		Version int `json:"version"`
		Info    struct {
			Status string `json:"status"`
		} `json:"info"`
	}
	Expect(json.Unmarshal(helm(ctx, "status", release, "-n", namespace, "-o", "json"), &s)).To(Succeed())
	return s.Version, s.Info.Status
}

var _ = Describe("Upgrading from chart 0.1.0", func() {
	// Each spec runs on an API server of its own, whose CRDs only its release
	// ever owned, as on a cluster that ran 0.1.0. (Deleting the CRDs the other
	// specs applied instead can take minutes: the API server's finalizer
	// retries, with a growing delay, while a CRD's storage reinitializes.)
	BeforeEach(func() {
		shared := kubeconfig
		kubeconfig = startAPIServer()
		DeferCleanup(func() { kubeconfig = shared })
	})

	It("from its crds/ layout needs --take-ownership once, as documented, and keeps every Metric", func(ctx SpecContext) {
		const ns, release = "helm-from-010", "eo010"
		apply(ctx, "packaging-helm-010", namespace(ns))
		old := chartAt(ctx, chart010)
		helm(ctx, "install", release, old, "-n", ns)
		waitEstablished(ctx, chart010CRDs...)
		Expect(crd(ctx, metricsCRD).Annotations).NotTo(HaveKey("meta.helm.sh/release-name"),
			"chart 0.1.0's CRDs are not part of its release")
		apply(ctx, "packaging-helm-010", metric("from-010", ""))
		before := getObject(ctx, "metric/from-010")
		oldImage := deploymentImage(ctx, ns, release)
		current := filepath.Join(repoRoot, "charts", "eval-operator")

		// A plain upgrade is refused, naming a CRD, and changes nothing
		// (docs/operating.md, Upgrade).
		_, stderr, err := runErr(ctx, nil, helmBin(), "--kubeconfig", kubeconfig, "upgrade", release, current, "-n", ns)
		Expect(err).To(HaveOccurred(), "helm upgrade from 0.1.0 without --take-ownership")
		Expect(stderr).To(ContainSubstring("invalid ownership metadata"))
		Expect(stderr).To(ContainSubstring("CustomResourceDefinition"))
		revision, status := releaseRevision(ctx, ns, release)
		Expect(revision).To(Equal(1))
		Expect(status).To(Equal("deployed"))
		Expect(deploymentImage(ctx, ns, release)).To(Equal(oldImage))

		// The documented step: once, with --take-ownership.
		helm(ctx, "upgrade", release, current, "-n", ns, "--take-ownership")
		expectUpgraded(ctx, ns, release, before)

		// Then plain upgrades, as from any later chart.
		helm(ctx, "upgrade", release, current, "-n", ns)
		revision, _ = releaseRevision(ctx, ns, release)
		Expect(revision).To(Equal(3))
		helm(ctx, "uninstall", release, "-n", ns)
	}, SpecTimeout(3*time.Minute))

	It("from its templates layout is a plain helm upgrade", func(ctx SpecContext) {
		const ns, release = "helm-from-010t", "eo010t"
		apply(ctx, "packaging-helm-010", namespace(ns))
		helm(ctx, "install", release, chartAt(ctx, chart010Templates), "-n", ns)
		waitEstablished(ctx, chart010CRDs...)
		apply(ctx, "packaging-helm-010", metric("from-010t", ""))
		before := getObject(ctx, "metric/from-010t")

		helm(ctx, "upgrade", release, filepath.Join(repoRoot, "charts", "eval-operator"), "-n", ns)
		expectUpgraded(ctx, ns, release, before)
		helm(ctx, "uninstall", release, "-n", ns)
	}, SpecTimeout(3*time.Minute))
})

// expectUpgraded checks a release just upgraded to the current chart: it is
// deployed and runs the current image, the release owns every CRD (keeping
// them on uninstall), and the Metric before is untouched.
func expectUpgraded(ctx context.Context, namespace, release string, before unstructured.Unstructured) {
	GinkgoHelper()
	_, status := releaseRevision(ctx, namespace, release)
	Expect(status).To(Equal("deployed"))
	Expect(deploymentImage(ctx, namespace, release)).To(HaveSuffix(":" + readChartMeta().AppVersion))
	waitEstablished(ctx, crdNames...)
	for _, name := range crdNames {
		c := crd(ctx, name)
		Expect(c.Annotations).To(HaveKeyWithValue("meta.helm.sh/release-name", release), name)
		Expect(c.Annotations).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"), name)
	}
	after := getObject(ctx, "metric/"+before.GetName())
	Expect(after.GetUID()).To(Equal(before.GetUID()))
	Expect(after.GetResourceVersion()).To(Equal(before.GetResourceVersion()), "the upgrade rewrote a Metric")
}

// chart010CRDs are the CRDs chart 0.1.0 shipped.
var chart010CRDs = []string{"metrics.evaluation.eval-operator.dev", "testsetdeletions.evaluation.eval-operator.dev",
	"testcasedeletions.evaluation.eval-operator.dev"}
