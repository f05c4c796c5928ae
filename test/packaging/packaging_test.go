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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	groupkinds "github.com/eval-operator/eval-operator/internal/kinds"
)

// crdNames are the CRDs both installers ship: one per kind of the group.
var crdNames = func() []string {
	names := make([]string, 0, len(groupkinds.All))
	for _, k := range groupkinds.All {
		names = append(names, k.Resource+"."+v1alpha1.GroupVersion.Group)
	}
	return names
}()

// optIns are the commented-out entries of config/default/kustomization.yaml
// that a user uncomments to turn a feature on.
var optIns = []string{"../prometheus", "../network-policy", restComponent, "path: manager_upstream_patch.yaml",
	"../certmanager", "../grafana", "../ha", certManagerNames}

// The opt-ins of the REST server ([API]) and of cert-manager's names.
const (
	restComponent    = "../rest"
	certManagerNames = "path: certmanager_names.yaml"
)

// allOptions turns on every optional part of the Helm chart.
var allOptions = []string{
	"replicaCount=2",
	"serveApi.enabled=true",
	"tls.certSecret=eval-operator-api-tls",
	"networkPolicy.enabled=true",
	"serviceMonitor.enabled=true",
	"apiUrl=https://evaluation.example.com/api/v2",
	"defaultApiKeySecret=eval-api-key",
	"certManager.enabled=true",
	"prometheusRule.enabled=true",
	"grafanaDashboard.enabled=true",
	"metrics.namespaceLabel=true",
}

// podSecurityWarning is how the API server starts a Pod Security warning.
const podSecurityWarning = "would violate PodSecurity"

// uncomment turns on the given opt-in entries of a kustomization: each
// "#- <entry>" line and the indented "#  ..." lines right after it. It fails
// if an entry is not there, so the test notices when the comments change.
func uncomment(kustomization string, entries ...string) string {
	GinkgoHelper()
	lines := strings.Split(kustomization, "\n")
	found := map[string]bool{}
	inEntry := false
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "#- "):
			entry := strings.TrimPrefix(line, "#- ")
			inEntry = false
			for _, e := range entries {
				if entry == e {
					found[e], inEntry = true, true
					lines[i] = strings.TrimPrefix(line, "#")
				}
			}
		case inEntry && strings.HasPrefix(line, "#  "):
			lines[i] = strings.TrimPrefix(line, "#")
		default:
			inEntry = false
		}
	}
	for _, e := range entries {
		Expect(found).To(HaveKey(e), "config/default/kustomization.yaml has no opt-in %q", e)
	}
	return strings.Join(lines, "\n")
}

// withOptIns copies config/ to a temporary directory and turns on every
// opt-in of its default kustomization, as the comments there tell users to.
func withOptIns() string {
	GinkgoHelper()
	return filepath.Join(configWith(optIns...), "default")
}

// configWith copies config/ to a temporary directory, turns on the given
// opt-ins of its default kustomization and returns the copy.
func configWith(entries ...string) string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	Expect(os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "config")))).To(Succeed())
	editDefault(dir, func(k string) string { return uncomment(k, entries...) })
	return dir
}

// editDefault rewrites the default kustomization of the config/ copy dir.
func editDefault(dir string, edit func(string) string) {
	GinkgoHelper()
	path := filepath.Join(dir, "default", "kustomization.yaml")
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(path, []byte(edit(string(data))), 0o600)).To(Succeed())
}

var _ = Describe("kustomize config/default", func() {
	var objs []unstructured.Unstructured
	var rendered []byte

	BeforeEach(func(ctx SpecContext) {
		rendered = kustomize(ctx, filepath.Join(repoRoot, "config", "default"))
		objs = decode(rendered)
	})

	It("grants least privilege", func() {
		expectLeastPrivilege(objs)
	})

	It("runs one restricted manager with leader election, probes and secure metrics", func() {
		expectRestricted(objs)
		_, c := manager(objs)
		Expect(c.Args).To(ContainElements("--leader-elect", "--health-probe-bind-address=:8081",
			"--metrics-bind-address=:8443"))
		Expect(c.Args).NotTo(ContainElement(HavePrefix("--serve-api")), "the REST server is opt-in")
		namespaces := ofKind[corev1.Namespace](objs, "Namespace")
		Expect(namespaces).To(HaveLen(1))
		Expect(namespaces[0].Name).To(Equal("eval-operator-system"))
		Expect(namespaces[0].Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))
	})

	It("applies to a real API server", func(ctx SpecContext) {
		Expect(apply(ctx, "packaging-kustomize", rendered)).NotTo(ContainSubstring(podSecurityWarning))
		waitEstablished(ctx, crdNames...)
		kubectl(ctx, nil, "get", "-n", "eval-operator-system", "deployment/eval-operator-controller-manager",
			"serviceaccount/eval-operator-controller-manager",
			"service/eval-operator-controller-manager-metrics-service")
	}, SpecTimeout(2*time.Minute))

	It("applies with every opt-in turned on", func(ctx SpecContext) {
		all := kustomize(ctx, withOptIns())
		allObjs := decode(all)
		Expect(kinds(allObjs)).To(ContainElements("ServiceMonitor", "NetworkPolicy", "PrometheusRule",
			"Certificate", "Issuer", "PodDisruptionBudget"))
		expectLeastPrivilege(allObjs)
		expectRestricted(allObjs)
		_, c := manager(allObjs)
		Expect(c.Args).To(ContainElements("--serve-api=:8082", HavePrefix("--api-url=")))
		Expect(c.Ports).To(ContainElement(HaveField("Name", "api")))

		// Same field manager as the plain render: this is the upgrade path.
		Expect(apply(ctx, "packaging-kustomize", all)).NotTo(ContainSubstring(podSecurityWarning))
		Expect(c.Args).To(ContainElement("--metrics-cert-dir=/etc/eval-operator/serving-cert"))
		kubectl(ctx, nil, "get", "-n", "eval-operator-system",
			"servicemonitor/eval-operator-controller-manager-metrics-monitor",
			"prometheusrule/eval-operator-alerts", "configmap/eval-operator-grafana-dashboard",
			"certificate/eval-operator-serving-cert", "issuer/eval-operator-selfsigned-issuer",
			"networkpolicy/eval-operator-allow-metrics-traffic", "networkpolicy/eval-operator-allow-api-traffic",
			"service/eval-operator-api", "poddisruptionbudget/eval-operator-controller-manager")
	}, SpecTimeout(2*time.Minute))
})

var _ = Describe("Helm chart", func() {
	It("ships exactly the CRDs and manager RBAC rules of config/", func() {
		chart := filepath.Join(repoRoot, "charts", "eval-operator")
		bases := filepath.Join(repoRoot, "config", "crd", "bases")
		entries, err := os.ReadDir(bases)
		Expect(err).NotTo(HaveOccurred())
		copies, err := os.ReadDir(filepath.Join(chart, "files", "crds"))
		Expect(err).NotTo(HaveOccurred())
		Expect(copies).To(HaveLen(len(entries)), "charts/eval-operator/files/crds: run make manifests")
		for _, e := range entries {
			expectSameFile(filepath.Join(bases, e.Name()), filepath.Join(chart, "files", "crds", e.Name()))
		}
		expectSameFile(filepath.Join(repoRoot, "config", "rbac", "role.yaml"),
			filepath.Join(chart, "files", "manager-role.yaml"))
	})

	DescribeTable("grants least privilege and runs the manager restricted",
		func(ctx SpecContext, values []string) {
			objs := decode(helmTemplate(ctx, "eval-operator", "eval-operator-system", values...))
			expectLeastPrivilege(objs)
			expectRestricted(objs)
		},
		Entry("with the defaults", nil),
		Entry("with every option on", allOptions),
	)

	DescribeTable("turns values into manager flags",
		func(ctx SpecContext, values []string, want []string, unwanted []string) {
			objs := decode(helmTemplate(ctx, "eo", "ops", values...))
			_, c := manager(objs)
			Expect(c.Args).To(ContainElements(want))
			for _, prefix := range unwanted {
				Expect(c.Args).NotTo(ContainElement(HavePrefix(prefix)))
			}
		},
		Entry("defaults: standalone, leader election, secure metrics", nil,
			[]string{"--leader-elect", "--leader-election-namespace=ops", "--health-probe-bind-address=:8081",
				"--metrics-bind-address=:8443", "--metrics-secure=true", "--api-qps=20", "--api-burst=40",
				"--api-timeout=10s", "--bulk-delete-batch-size=100", "--max-concurrent-reconciles=8",
				"--drift-interval=10m", "--zap-log-level=info"},
			[]string{"--api-url", "--default-api-key-secret", "--serve-api", "--tls-"}),
		Entry("an upstream with a default key Secret",
			[]string{"apiUrl=https://evaluation.example.com/api/v2", "defaultApiKeySecret=eval-api-key",
				"apiQps=2.5", "apiTimeout=1m30s", "bulkDeleteBatchSize=500", "driftInterval=0s"},
			[]string{"--api-url=https://evaluation.example.com/api/v2", "--default-api-key-secret=eval-api-key",
				"--api-qps=2.5", "--api-timeout=1m30s", "--bulk-delete-batch-size=500", "--drift-interval=0s"},
			nil),
		Entry("the REST server with TLS",
			[]string{"serveApi.enabled=true", "serveApi.port=9443", "tls.certSecret=api-tls", "restSyncTimeout=30s",
				"restMaxInflight=64", "restTenantQps=2.5", "restTenantBurst=5"},
			[]string{"--serve-api=:9443", "--rest-sync-timeout=30s",
				"--rest-max-inflight=64", "--rest-tenant-qps=2.5", "--rest-tenant-burst=5",
				"--tls-cert-file=/etc/eval-operator/tls/tls.crt", "--tls-key-file=/etc/eval-operator/tls/tls.key"},
			nil),
		Entry("cert-manager serves metrics and the REST server",
			[]string{"certManager.enabled=true", "serveApi.enabled=true", "metrics.namespaceLabel=true"},
			[]string{"--metrics-cert-dir=/etc/eval-operator/serving-cert", "--metrics-namespace-label",
				"--tls-cert-file=/etc/eval-operator/serving-cert/tls.crt",
				"--tls-key-file=/etc/eval-operator/serving-cert/tls.key"},
			nil),
		Entry("metrics off, no leader election",
			[]string{"metrics.enabled=false", "leaderElection.enabled=false"},
			[]string{"--metrics-bind-address=0"},
			[]string{"--leader-elect", "--metrics-secure"}),
	)

	DescribeTable("applies to a real API server",
		func(ctx SpecContext, release string, values []string) {
			ns := "helm-" + release
			apply(ctx, "packaging-helm-"+release, namespace(ns))
			rendered := helmTemplate(ctx, release, ns, values...)
			Expect(apply(ctx, "packaging-helm-"+release, rendered)).NotTo(ContainSubstring(podSecurityWarning))
			waitEstablished(ctx, crdNames...)
			kubectl(ctx, nil, "get", "-n", ns, "deployment/"+release+"-eval-operator",
				"serviceaccount/"+release+"-eval-operator", "service/"+release+"-eval-operator-metrics")
		},
		Entry("with the defaults", SpecTimeout(2*time.Minute), "defaults", nil),
		Entry("with every option on", SpecTimeout(2*time.Minute), "all", allOptions),
	)
})

// expectSameFile checks that dup is byte for byte the same as orig.
func expectSameFile(orig, dup string) {
	GinkgoHelper()
	want, err := os.ReadFile(orig)
	Expect(err).NotTo(HaveOccurred())
	got, err := os.ReadFile(dup)
	Expect(err).NotTo(HaveOccurred(), "run make manifests")
	Expect(string(got)).To(Equal(string(want)), "%s differs from %s: run make manifests", dup, orig)
}

var _ = Describe("Helm chart monitoring", func() {
	It("has the ServiceMonitor verify the cert-manager certificate of the metrics Service", func(ctx SpecContext) {
		objs := decode(helmTemplate(ctx, "eo", "ops", "serviceMonitor.enabled=true", "certManager.enabled=true"))
		monitors := withKind(objs, "ServiceMonitor")
		Expect(monitors).To(HaveLen(1))
		endpoints, _, _ := unstructured.NestedSlice(monitors[0].Object, "spec", "endpoints")
		Expect(endpoints).To(HaveLen(1))
		Expect(endpoints[0]).To(HaveKeyWithValue("tlsConfig", map[string]any{
			"ca":         map[string]any{"secret": map[string]any{"name": "eo-eval-operator-serving-cert", "key": "ca.crt"}},
			"serverName": "eo-eval-operator-metrics.ops.svc",
		}))
		certs := withKind(objs, "Certificate")
		Expect(certs).To(HaveLen(1))
		dnsNames, _, _ := unstructured.NestedStringSlice(certs[0].Object, "spec", "dnsNames")
		Expect(dnsNames).To(ContainElement("eo-eval-operator-metrics.ops.svc"))
	})

	It("refuses a ServiceMonitor that could not verify the manager's certificate", func(ctx SpecContext) {
		Expect(helmRefusal(ctx, "serviceMonitor.enabled=true")).To(ContainSubstring("needs a verifiable certificate"))
	})

	It("has an Argo CD health check for every kind it ships, the same as config/argocd's", func(ctx SpecContext) {
		objs := decode(helmTemplate(ctx, "eo", "ops", "argocd.healthChecks.enabled=true"))
		var checks map[string]string
		for _, cm := range ofKind[corev1.ConfigMap](objs, "ConfigMap") {
			if strings.HasSuffix(cm.Name, "-argocd-health") {
				checks = cm.Data
			}
		}
		patch, err := os.ReadFile(filepath.Join(repoRoot, "config", "argocd", "argocd-cm-patch.yaml"))
		Expect(err).NotTo(HaveOccurred())
		var cm corev1.ConfigMap
		Expect(yaml.Unmarshal(patch, &cm)).To(Succeed())
		Expect(checks).To(Equal(cm.Data), "the chart and config/argocd check the same kinds with the same script")
		for _, crd := range ofKind[apiextensionsv1.CustomResourceDefinition](objs, "CustomResourceDefinition") {
			Expect(checks).To(HaveKey("resource.customizations.health."+crd.Spec.Group+"_"+crd.Spec.Names.Kind),
				"no health check for %s", crd.Name)
		}
	})

	It("ships the rules and the dashboard of config/", func(ctx SpecContext) {
		chart := filepath.Join(repoRoot, "charts", "eval-operator", "files")
		expectSameFile(filepath.Join(repoRoot, "config", "prometheus", "rules.yaml"),
			filepath.Join(chart, "prometheus-rules.yaml"))
		expectSameFile(filepath.Join(repoRoot, "config", "grafana", "eval-operator.json"),
			filepath.Join(chart, "grafana-dashboard.json"))
		objs := decode(helmTemplate(ctx, "eo", "ops", "grafanaDashboard.enabled=true"))
		dashboards := ofKind[corev1.ConfigMap](objs, "ConfigMap")
		Expect(dashboards).To(ContainElement(And(
			HaveField("ObjectMeta.Labels", HaveKeyWithValue("grafana_dashboard", "1")),
			HaveField("Data", HaveKey("eval-operator.json")))))
	})
})

// withKind returns the objects of one kind.
func withKind(objs []unstructured.Unstructured, kind string) []unstructured.Unstructured {
	var found []unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			found = append(found, o)
		}
	}
	return found
}

var _ = Describe("the manager", func() {
	It("defines every flag the installers pass", func(ctx SpecContext) {
		defined := managerFlags(ctx)
		renders := [][]byte{
			kustomize(ctx, withOptIns()),
			helmTemplate(ctx, "eo", "ops", allOptions...),
			helmTemplate(ctx, "eo", "ops", "metrics.enabled=false", "leaderElection.namespace=ops"),
			kustomize(ctx, filepath.Join(repoRoot, "config", "namespaced")),
			helmTemplate(ctx, "eo", "ops", "watchNamespaces={a,b}", "serveApi.enabled=true",
				"restNamespaceSelector=x=y", "allowInsecureApiUrl=true"),
		}
		for _, r := range renders {
			_, c := manager(decode(r))
			for _, arg := range c.Args {
				name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
				Expect(defined).To(HaveKey(name), "the manager has no flag for %s", arg)
			}
		}
	}, SpecTimeout(5*time.Minute))
})

// usageFlag matches a flag in Go's flag usage: "  -name type".
var usageFlag = regexp.MustCompile(`(?m)^\s+-([a-z0-9-]+)`)

// managerFlags builds the manager and returns the names of its flags.
func managerFlags(ctx context.Context) map[string]bool {
	GinkgoHelper()
	bin := filepath.Join(GinkgoT().TempDir(), "manager")
	run(ctx, nil, tool("GO", "go"), "build", "-o", bin, "./cmd")
	_, usage := run(ctx, nil, bin, "-h")
	flags := map[string]bool{}
	for _, m := range usageFlag.FindAllStringSubmatch(usage, -1) {
		flags[m[1]] = true
	}
	Expect(flags).To(HaveKey("api-url"), "unexpected usage output:\n%s", usage)
	return flags
}
