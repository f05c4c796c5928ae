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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// helmRefusal renders the chart with values and returns helm's error output;
// the render must fail.
func helmRefusal(ctx context.Context, values ...string) string {
	GinkgoHelper()
	args := withValues([]string{"template", "eo", filepath.Join(repoRoot, "charts", "eval-operator")}, values)
	_, stderr, err := runErr(ctx, nil, helmBin(), args...)
	Expect(err).To(HaveOccurred(), "helm rendered %v", values)
	return stderr
}

// helmNotes renders the chart's NOTES.txt as `helm install` prints it.
// --take-ownership: other specs applied the CRDs outside this release.
func helmNotes(ctx context.Context, values ...string) string {
	GinkgoHelper()
	out := helm(ctx, withValues([]string{"install", "eo", filepath.Join(repoRoot, "charts", "eval-operator"),
		"--dry-run=client", "--take-ownership", "--namespace", "ops"}, values)...)
	_, notes, found := strings.Cut(string(out), "NOTES:\n")
	Expect(found).To(BeTrue(), "helm install --dry-run printed no NOTES:\n%s", out)
	return notes
}

// extensionValues set every extension point the chart has for the
// environment: a proxy, a private CA, a certificate for the metrics endpoint.
var extensionValues = []string{
	"extraEnv[0].name=HTTPS_PROXY", "extraEnv[0].value=http://proxy.corp.example:3128",
	"extraEnv[1].name=NO_PROXY", "extraEnv[1].value=10.96.0.1\\,.svc",
	"extraEnv[2].name=GOMEMLIMIT", "extraEnv[2].valueFrom.resourceFieldRef.resource=limits.memory",
	"extraEnvFrom[0].configMapRef.name=proxy-settings",
	"caBundle.configMapName=corp-ca",
	"extraVolumes[0].name=metrics-cert", "extraVolumes[0].secret.secretName=metrics-cert",
	"extraVolumeMounts[0].name=metrics-cert", "extraVolumeMounts[0].mountPath=/etc/metrics-cert",
	"extraVolumeMounts[0].readOnly=true",
	"extraArgs[0]=--metrics-cert-dir=/etc/metrics-cert",
	"podAnnotations.example\\.com/team=platform",
	"deploymentAnnotations.example\\.com/owner=sre",
}

var _ = Describe("Helm chart extension points", func() {
	It("adds the environment, volumes and annotations to the manager", func(ctx SpecContext) {
		objs := decode(helmTemplate(ctx, "eo", "ops", extensionValues...))
		spec, c := manager(objs)
		Expect(c.Env).To(ConsistOf(
			corev1.EnvVar{Name: "SSL_CERT_DIR", Value: "/etc/eval-operator/ca"},
			corev1.EnvVar{Name: "HTTPS_PROXY", Value: "http://proxy.corp.example:3128"},
			corev1.EnvVar{Name: "NO_PROXY", Value: "10.96.0.1,.svc"},
			HaveField("ValueFrom.ResourceFieldRef.Resource", "limits.memory"),
		))
		Expect(c.EnvFrom).To(ConsistOf(HaveField("ConfigMapRef.Name", "proxy-settings")))
		Expect(c.VolumeMounts).To(ConsistOf(
			corev1.VolumeMount{Name: "ca-bundle", MountPath: "/etc/eval-operator/ca", ReadOnly: true},
			corev1.VolumeMount{Name: "metrics-cert", MountPath: "/etc/metrics-cert", ReadOnly: true},
		))
		Expect(spec.Volumes).To(ConsistOf(
			HaveField("VolumeSource.ConfigMap.Name", "corp-ca"),
			HaveField("VolumeSource.Secret.SecretName", "metrics-cert"),
		))
		Expect(c.Args).To(ContainElement("--metrics-cert-dir=/etc/metrics-cert"))
		deployment := withKind(objs, "Deployment")[0]
		Expect(deployment.GetAnnotations()).To(HaveKeyWithValue("example.com/owner", "sre"))
		annotations, _, _ := unstructured.NestedStringMap(deployment.Object, "spec", "template", "metadata", "annotations")
		Expect(annotations).To(HaveKeyWithValue("example.com/team", "platform"))
	})

	It("applies to a real API server with every extension point set", func(ctx SpecContext) {
		ns := "helm-extensions"
		apply(ctx, "packaging-helm-extensions", namespace(ns))
		rendered := helmTemplate(ctx, "ext", ns, append(extensionValues, "crds.enabled=false")...)
		Expect(apply(ctx, "packaging-helm-extensions", rendered)).NotTo(ContainSubstring(podSecurityWarning))
	}, SpecTimeout(2*time.Minute))

	DescribeTable("refuses what would not run, naming the value",
		func(ctx SpecContext, want string, values ...string) {
			Expect(helmRefusal(ctx, values...)).To(ContainSubstring(want))
		},
		Entry("a misspelt mount field", "mountpath",
			"extraVolumeMounts[0].name=x", "extraVolumeMounts[0].mountpath=/x"),
		Entry("a mount without a path", "mountPath",
			"extraVolumeMounts[0].name=x"),
		Entry("an env var without a name", "name", "extraEnv[0].value=x"),
		Entry("an env var with a misspelt field", "valuefrom",
			"extraEnv[0].name=X", "extraEnv[0].valuefrom.secretKeyRef.name=s"),
		Entry("a volume named like the chart's own", "extraVolumes",
			"extraVolumes[0].name=ca-bundle", "extraVolumes[0].emptyDir.medium=Memory"),
		Entry("a volume without a source", "extraVolumes", "extraVolumes[0].name=x"),
		Entry("a misspelt caBundle field", "configmap", "caBundle.configmap=corp-ca"),
		Entry("replicas without leader election", "Set leaderElection.enabled=true, or replicaCount=1",
			"replicaCount=2", "leaderElection.enabled=false"),
		Entry("a LoadBalancer REST Service in plain HTTP", "serveApi.service.allowInsecure=true",
			"serveApi.enabled=true", "serveApi.service.type=LoadBalancer"),
		Entry("a NodePort REST Service in plain HTTP", "NodePort without TLS",
			"serveApi.enabled=true", "serveApi.service.type=NodePort"),
		Entry("an account the chart does not create, unnamed", "serviceAccount.name is required",
			"serviceAccount.create=false"),
	)

	DescribeTable("renders what is safe",
		func(ctx SpecContext, values ...string) {
			Expect(decode(helmTemplate(ctx, "eo", "ops", values...))).NotTo(BeEmpty())
		},
		Entry("a LoadBalancer REST Service with TLS", "serveApi.enabled=true",
			"serveApi.service.type=LoadBalancer", "tls.certSecret=api-tls"),
		Entry("a LoadBalancer REST Service in plain HTTP, said so", "serveApi.enabled=true",
			"serveApi.service.type=LoadBalancer", "serveApi.service.allowInsecure=true"),
		Entry("one replica without leader election", "leaderElection.enabled=false"),
		Entry("an account of your own", "serviceAccount.create=false", "serviceAccount.name=platform-eval"),
	)
})

// chartMeta is what Chart.yaml says about versions.
type chartMeta struct {
	Version    string `json:"version"`
	AppVersion string `json:"appVersion"`
}

// readChartMeta is the current chart's chartMeta.
func readChartMeta() chartMeta {
	GinkgoHelper()
	return chartMetaOf(filepath.Join(repoRoot, "charts", "eval-operator"))
}

// chartMetaOf reads the chartMeta of the chart in dir.
func chartMetaOf(dir string) chartMeta {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var meta chartMeta
	Expect(yaml.Unmarshal(data, &meta)).To(Succeed())
	return meta
}

// The README's release references: image tags, chart versions, packages
// and kustomize refs. Each must name the current release.
var (
	readmeImageTag     = regexp.MustCompile(`eval-operator:(v[0-9]+\.[0-9]+\.[0-9]+)`)
	readmeChartVersion = regexp.MustCompile(`--version ([0-9]+\.[0-9]+\.[0-9]+)`)
	readmeChartPackage = regexp.MustCompile(`eval-operator-([0-9]+\.[0-9]+\.[0-9]+)\.tgz`)
	readmeRef          = regexp.MustCompile(`ref=(v[0-9]+\.[0-9]+\.[0-9]+)|newTag: (v[0-9]+\.[0-9]+\.[0-9]+)`)
)

var _ = Describe("One release identity", func() {
	It("has the chart version, appVersion, image tag, Makefile VERSION and CHANGELOG agree", func(ctx SpecContext) {
		meta := readChartMeta()
		Expect(meta.AppVersion).To(Equal("v"+meta.Version), "Chart.yaml: appVersion must be v + version")
		version, _ := run(ctx, nil, tool("MAKE", "make"), "-s", "version")
		Expect(strings.TrimSpace(string(version))).To(Equal(meta.AppVersion), "make version")
		_, c := manager(decode(helmTemplate(ctx, "eo", "ops")))
		Expect(c.Image).To(HaveSuffix(":" + meta.AppVersion))
		_, c = manager(decode(kustomize(ctx, filepath.Join(repoRoot, "config", "default"))))
		Expect(c.Image).To(Equal("ghcr.io/eval-operator/eval-operator:"+meta.AppVersion), "config/manager/kustomization.yaml newTag")
		changelog, err := os.ReadFile(filepath.Join(repoRoot, "charts", "eval-operator", "CHANGELOG.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(changelog)).To(ContainSubstring("\n## "+meta.Version+"\n"),
			"charts/eval-operator/CHANGELOG.md has no entry for chart %s", meta.Version)
	})

	It("has the README name the current release wherever it names one", func() {
		meta := readChartMeta()
		readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
		Expect(err).NotTo(HaveOccurred())
		for _, re := range []*regexp.Regexp{readmeImageTag, readmeRef} {
			for _, m := range re.FindAllStringSubmatch(string(readme), -1) {
				named := strings.Join(m[1:], "") // the one group that matched
				Expect(named).To(Equal(meta.AppVersion), "README.md: %q", m[0])
			}
		}
		for _, re := range []*regexp.Regexp{readmeChartVersion, readmeChartPackage} {
			for _, m := range re.FindAllStringSubmatch(string(readme), -1) {
				Expect(m[1]).To(Equal(meta.Version), "README.md: %q", m[0])
			}
		}
	})

	DescribeTable("has NOTES.txt describe the CRDs as the chart ships them and the REST scheme it serves",
		func(ctx SpecContext, want, unwanted []string, values ...string) {
			notes := helmNotes(ctx, values...)
			Expect(notes).NotTo(ContainSubstring("crds/"), "the chart has no crds/ directory")
			for _, w := range want {
				Expect(notes).To(ContainSubstring(w))
			}
			for _, u := range unwanted {
				Expect(notes).NotTo(ContainSubstring(u))
			}
		},
		Entry("defaults", []string{"The CRDs are templates of this chart", "helm upgrade` upgrades them"},
			[]string{"curl"}),
		Entry("CRDs owned elsewhere", []string{"crds.enabled is false"}, []string{"The CRDs are templates"},
			"crds.enabled=false"),
		Entry("REST over plain HTTP", []string{"curl http://127.0.0.1:8082"}, []string{"https"},
			"serveApi.enabled=true"),
		Entry("REST with a TLS Secret", []string{"curl -k https://127.0.0.1:8082"}, nil,
			"serveApi.enabled=true", "tls.certSecret=api-tls"),
		Entry("REST with cert-manager's certificate", []string{"curl -k https://127.0.0.1:8082"}, nil,
			"serveApi.enabled=true", "certManager.enabled=true"),
	)
})
