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
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// metricsCRD is the CRD the upgrade specs change.
const metricsCRD = "metrics.evaluation.eval-operator.dev"

// metric is a valid Metric named name; extra is more of its spec, indented
// by two spaces.
func metric(name, extra string) []byte {
	return []byte(`apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: Metric
metadata:
  name: ` + name + `
  namespace: default
spec:
  projectId: proj_upgrade
  name: ` + name + `
  evalType: heuristic
  outputType: boolean
  apiKeySecretRef:
    name: evaluation-api-key
` + extra)
}

// chartCopy copies the chart to a temporary directory, for a spec to turn
// into an older version of itself.
func chartCopy() string {
	GinkgoHelper()
	dir := filepath.Join(GinkgoT().TempDir(), "eval-operator")
	Expect(os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "charts", "eval-operator")))).To(Succeed())
	return dir
}

// withoutSpecField removes the Metric spec's property field from the chart's
// Metric CRD: what the CRD looked like before the field was added. The
// property is the first one of that name (spec comes before status), with
// every more indented line after it.
func withoutSpecField(chart, field string) {
	GinkgoHelper()
	path := filepath.Join(chart, "files", "crds", "evaluation.eval-operator.dev_metrics.yaml")
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	lines := strings.Split(string(data), "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == field+":" {
			start = i
			break
		}
	}
	Expect(start).NotTo(Equal(-1), "the Metric CRD has no property %s", field)
	indent := len(lines[start]) - len(strings.TrimLeft(lines[start], " "))
	end := start + 1
	for end < len(lines) && len(lines[end])-len(strings.TrimLeft(lines[end], " ")) > indent {
		end++
	}
	lines = append(lines[:start], lines[end:]...)
	Expect(os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600)).To(Succeed())
}

// specProperties returns the names of the Metric spec's properties the
// API server has for the CRD.
func specProperties(ctx context.Context) []string {
	GinkgoHelper()
	out, _ := kubectl(ctx, nil, "get", "crd", metricsCRD, "-o", "json")
	var crd apiextensionsv1.CustomResourceDefinition
	Expect(json.Unmarshal(out, &crd)).To(Succeed())
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	return names
}

// getObject reads one object of namespace default as unstructured.
func getObject(ctx context.Context, resource string) unstructured.Unstructured {
	GinkgoHelper()
	out, _ := kubectl(ctx, nil, "get", "-n", "default", resource, "-o", "json")
	var obj unstructured.Unstructured
	Expect(obj.UnmarshalJSON(out)).To(Succeed())
	return obj
}

var _ = Describe("Helm chart CRDs", func() {
	It("are templates with the keep policy, unless turned off", func(ctx SpecContext) {
		crds := ofKind[apiextensionsv1.CustomResourceDefinition](decode(helmTemplate(ctx, "eo", "ops")),
			"CustomResourceDefinition")
		Expect(crds).To(HaveLen(len(crdNames)))
		for _, crd := range crds {
			Expect(crdNames).To(ContainElement(crd.Name))
			Expect(crd.Annotations).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))
			Expect(crd.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"))
		}

		crds = ofKind[apiextensionsv1.CustomResourceDefinition](decode(helmTemplate(ctx, "eo", "ops",
			"crds.keep=false")), "CustomResourceDefinition")
		Expect(crds).To(HaveLen(len(crdNames)))
		for _, crd := range crds {
			Expect(crd.Annotations).NotTo(HaveKey("helm.sh/resource-policy"))
		}

		objs := decode(helmTemplate(ctx, "eo", "ops", "crds.enabled=false"))
		Expect(kinds(objs)).NotTo(ContainElement("CustomResourceDefinition"))
		Expect(kinds(objs)).To(ContainElement("Deployment"))
	})

	// Version N is this chart with a Metric spec field removed from its CRD;
	// version N+1 is this chart.
	It("upgrade with the release, serve new fields, keep objects and survive uninstall", func(ctx SpecContext) {
		const ns, release, field = "helm-upgrade", "upgrade", "guidelines"
		apply(ctx, "packaging-helm-upgrade", namespace(ns))
		older := chartCopy()
		withoutSpecField(older, field)

		// --take-ownership: other specs applied the CRDs without Helm, as
		// clusters that installed them from crds/ or kustomize did.
		helm(ctx, "install", release, older, "-n", ns, "--take-ownership")
		waitEstablished(ctx, crdNames...)
		Expect(specProperties(ctx)).NotTo(ContainElement(field))
		apply(ctx, "packaging-helm-upgrade", metric("existing", ""))
		existing := getObject(ctx, "metric/existing")

		helm(ctx, "upgrade", release, filepath.Join(repoRoot, "charts", "eval-operator"), "-n", ns)
		Expect(specProperties(ctx)).To(ContainElement(field))
		// The API server swaps in the new schema shortly after the update:
		// until then, strict validation refuses the new field.
		Eventually(func(g Gomega, ctx context.Context) {
			_, stderr, err := runErr(ctx, metric("upgraded", "  "+field+": A good answer cites its source.\n"),
				tool("KUBECTL", "kubectl"), "--kubeconfig", kubeconfig, "apply", "--server-side",
				"--validate=strict", "--field-manager=packaging-helm-upgrade", "-f", "-")
			g.Expect(err).NotTo(HaveOccurred(), stderr)
		}).WithContext(ctx).WithPolling(200 * time.Millisecond).Should(Succeed())
		upgraded := getObject(ctx, "metric/upgraded")
		Expect(upgraded.Object["spec"]).To(HaveKeyWithValue(field, "A good answer cites its source."))
		after := getObject(ctx, "metric/existing")
		Expect(after.GetUID()).To(Equal(existing.GetUID()))
		Expect(after.GetResourceVersion()).To(Equal(existing.GetResourceVersion()), "the upgrade rewrote a Metric")

		// Rolled back (README: Rolling back): the older CRDs come back, the
		// newer field is pruned from what the API server serves, the objects stay.
		helm(ctx, "rollback", release, "1", "-n", ns, "--wait=false")
		Expect(specProperties(ctx)).NotTo(ContainElement(field))
		Eventually(func(g Gomega, ctx context.Context) {
			rolledBack := getObject(ctx, "metric/upgraded")
			g.Expect(rolledBack.GetUID()).To(Equal(upgraded.GetUID()))
			g.Expect(rolledBack.Object["spec"]).NotTo(HaveKey(field))
		}).WithContext(ctx).WithPolling(200 * time.Millisecond).Should(Succeed())
		kept := getObject(ctx, "metric/existing")
		Expect(kept.GetUID()).To(Equal(existing.GetUID()))

		// Rolled forward again: the field was pruned from what was served,
		// not from storage, so an object nobody rewrote has it back.
		helm(ctx, "upgrade", release, filepath.Join(repoRoot, "charts", "eval-operator"), "-n", ns)
		Eventually(func(g Gomega, ctx context.Context) {
			forward := getObject(ctx, "metric/upgraded")
			g.Expect(forward.Object["spec"]).To(HaveKeyWithValue(field, "A good answer cites its source."))
		}).WithContext(ctx).WithPolling(200 * time.Millisecond).Should(Succeed())

		out := helm(ctx, "uninstall", release, "-n", ns)
		Expect(string(out)).To(ContainSubstring("kept due to the resource policy"))
		kubectl(ctx, nil, append([]string{"get", "-o", "name"}, prefixed("crd/", crdNames)...)...)
		kubectl(ctx, nil, "get", "-n", "default", "metric/existing", "metric/upgraded")
		_, stderr, err := runErr(ctx, nil, tool("KUBECTL", "kubectl"), "--kubeconfig", kubeconfig,
			"get", "-n", ns, "deployment/"+release+"-eval-operator")
		Expect(err).To(HaveOccurred())
		Expect(stderr).To(ContainSubstring("NotFound"), "helm uninstall left the Deployment")
	}, SpecTimeout(3*time.Minute))
})

var _ = Describe("Helm chart availability", func() {
	It("has no budget and no spread with one replica", func(ctx SpecContext) {
		objs := decode(helmTemplate(ctx, "eo", "ops"))
		Expect(kinds(objs)).NotTo(ContainElement("PodDisruptionBudget"))
		pod, _ := manager(objs)
		Expect(pod.TopologySpreadConstraints).To(BeEmpty())
	})

	It("budgets one pod at a time and spreads over nodes with more replicas", func(ctx SpecContext) {
		objs := decode(helmTemplate(ctx, "eo", "ops", "replicaCount=3"))
		pdbs := ofKind[policyv1.PodDisruptionBudget](objs, "PodDisruptionBudget")
		Expect(pdbs).To(HaveLen(1))
		deployment := ofKind[appsv1.Deployment](objs, "Deployment")[0]
		Expect(pdbs[0].Spec.MaxUnavailable).To(HaveValue(Equal(intstr.FromInt32(1))))
		Expect(pdbs[0].Spec.MinAvailable).To(BeNil())
		Expect(pdbs[0].Spec.UnhealthyPodEvictionPolicy).To(HaveValue(Equal(policyv1.AlwaysAllow)))
		Expect(pdbs[0].Spec.Selector.MatchLabels).To(Equal(deployment.Spec.Selector.MatchLabels))

		spread := deployment.Spec.Template.Spec.TopologySpreadConstraints
		Expect(spread).To(HaveLen(1))
		Expect(spread[0].TopologyKey).To(Equal("kubernetes.io/hostname"))
		Expect(spread[0].LabelSelector.MatchLabels).To(Equal(deployment.Spec.Selector.MatchLabels))
	})

	It("takes the spread from the values and lets the budget be turned off", func(ctx SpecContext) {
		objs := decode(helmTemplate(ctx, "eo", "ops", "replicaCount=2", "podDisruptionBudget.enabled=false",
			"topologySpreadConstraints[0].maxSkew=2",
			"topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
			"topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule"))
		Expect(kinds(objs)).NotTo(ContainElement("PodDisruptionBudget"))
		pod, _ := manager(objs)
		Expect(pod.TopologySpreadConstraints).To(HaveLen(1))
		Expect(pod.TopologySpreadConstraints[0].TopologyKey).To(Equal("topology.kubernetes.io/zone"))
		Expect(pod.TopologySpreadConstraints[0].MaxSkew).To(BeEquivalentTo(2))
	})
})

// prefixed puts prefix before each name.
func prefixed(prefix string, names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, prefix+n)
	}
	return out
}

var _ = DescribeTable("the values schema rejects",
	func(ctx SpecContext, value, field string) {
		Expect(helmRefusal(ctx, value)).To(ContainSubstring(field))
	},
	Entry("an unknown crds key", "crds.install=true", "additional properties 'install'"),
	Entry("a budget of no pod", "podDisruptionBudget.maxUnavailable=0", "/podDisruptionBudget/maxUnavailable"),
	Entry("an unknown eviction policy", "podDisruptionBudget.unhealthyPodEvictionPolicy=Never",
		"/podDisruptionBudget/unhealthyPodEvictionPolicy"),
	Entry("a spread without a topology key", "topologySpreadConstraints[0].maxSkew=1", "/topologySpreadConstraints/0"),
	Entry("a memory limit that is no quantity", "resources.limits.memory=lots", "/resources/limits/memory"),
)
