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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The cert-manager opt-in with its names, and the HA one.
const (
	certManagerComponent = "../certmanager"
	haComponent          = "../ha"
)

// restTLSFlags are the manager's --tls-* flags.
func restTLSFlags(c corev1.Container) []string {
	var flags []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--tls-") {
			flags = append(flags, a)
		}
	}
	return flags
}

// flagValue is the value of --name in args, or "" when it is not there.
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// services are the names of the render's Services.
func services(objs []unstructured.Unstructured) []string {
	found := withKind(objs, "Service")
	names := make([]string, 0, len(found))
	for _, s := range found {
		names = append(names, s.GetName())
	}
	return names
}

// serviceDNS is the in-cluster DNS name of a Service.
func serviceDNS(s unstructured.Unstructured) string {
	return s.GetName() + "." + s.GetNamespace() + ".svc"
}

// executorURL is the manager's --serve-api-url as the kubelet passes it,
// its $(VAR)s filled in from the container's env (a value, or the Pod's
// namespace), and the URL the render's API Service is reached at, with
// scheme.
func executorURL(objs []unstructured.Unstructured, scheme string) (got, want string) {
	GinkgoHelper()
	_, c := manager(objs)
	namespace := withKind(objs, "Deployment")[0].GetNamespace()
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			vars[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			vars[e.Name] = namespace
		}
	}
	got = os.Expand(strings.NewReplacer("$(", "${", ")", "}").Replace(flagValue(c.Args, "serve-api-url")),
		func(v string) string { return vars[v] })
	return got, scheme + "://" + serviceDNS(named(objs, "Service", "api")) + ":8082/api/v2"
}

// named returns the one object of kind whose name has the suffix.
func named(objs []unstructured.Unstructured, kind, suffix string) unstructured.Unstructured {
	GinkgoHelper()
	var found []unstructured.Unstructured
	for _, o := range withKind(objs, kind) {
		if strings.HasSuffix(o.GetName(), suffix) {
			found = append(found, o)
		}
	}
	Expect(found).To(HaveLen(1), "%s *%s", kind, suffix)
	return found[0]
}

// expectCertificateNamesHold checks a render with cert-manager: the
// Certificate names both Services as rendered, its Issuer, and the Secret the
// manager mounts where its --tls-* and --metrics-cert-dir flags point; the
// ServiceMonitor, if any, verifies that Secret's CA for the metrics Service.
func expectCertificateNamesHold(objs []unstructured.Unstructured) {
	GinkgoHelper()
	cert := named(objs, "Certificate", "serving-cert")
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	metrics, api := named(objs, "Service", "metrics-service"), named(objs, "Service", "api")
	Expect(dnsNames).To(ConsistOf(serviceDNS(metrics), serviceDNS(metrics)+".cluster.local",
		serviceDNS(api), serviceDNS(api)+".cluster.local"))
	issuer, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
	issuerObj := named(objs, "Issuer", "issuer")
	Expect(issuer).To(Equal(issuerObj.GetName()))
	Expect(issuer).NotTo(BeEmpty())

	secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	pod, c := manager(objs)
	var dir string
	for _, v := range pod.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					dir = m.MountPath
				}
			}
		}
	}
	Expect(dir).NotTo(BeEmpty(), "the manager mounts no volume of Secret %s", secret)
	Expect(c.Args).To(ContainElements("--metrics-cert-dir="+dir, "--tls-cert-file="+dir+"/tls.crt",
		"--tls-key-file="+dir+"/tls.key"))

	for _, m := range withKind(objs, "ServiceMonitor") {
		endpoints, _, _ := unstructured.NestedSlice(m.Object, "spec", "endpoints")
		Expect(endpoints).To(HaveLen(1))
		tls, _, _ := unstructured.NestedMap(endpoints[0].(map[string]any), "tlsConfig")
		Expect(tls).To(HaveKeyWithValue("serverName", serviceDNS(metrics)))
		Expect(tls).To(HaveKeyWithValue("ca", HaveKeyWithValue("secret", HaveKeyWithValue("name", secret))))
	}
}

var _ = Describe("kustomize, level with the chart", func() {
	It("renders the REST Service, port and flags only with [API], as the chart with serveApi", func(ctx SpecContext) {
		for _, objs := range [][]unstructured.Unstructured{
			decode(kustomize(ctx, filepath.Join(repoRoot, "config", "default"))),
			decode(helmTemplate(ctx, "eo", "ops")),
		} {
			Expect(services(objs)).To(HaveLen(1), "only the metrics Service")
			Expect(services(objs)).NotTo(ContainElement(HaveSuffix("api")))
			_, c := manager(objs)
			Expect(c.Ports).NotTo(ContainElement(HaveField("Name", "api")))
			Expect(c.Args).NotTo(ContainElement(HavePrefix("--serve-api")))
		}
		for _, objs := range [][]unstructured.Unstructured{
			decode(kustomize(ctx, filepath.Join(configWith(restComponent), "default"))),
			decode(helmTemplate(ctx, "eo", "ops", "serveApi.enabled=true")),
		} {
			api := ofKind[corev1.Service](objs, "Service")
			Expect(api).To(ContainElement(And(HaveField("Name", HaveSuffix("api")),
				HaveField("Spec.Ports", ConsistOf(And(HaveField("Port", BeEquivalentTo(8082)),
					HaveField("TargetPort.StrVal", "api"))))))) // the container port named api
			_, c := manager(objs)
			Expect(c.Ports).To(ContainElement(And(HaveField("Name", "api"), HaveField("ContainerPort", BeEquivalentTo(8082)))))
			Expect(c.Args).To(ContainElement("--serve-api=:8082"))
			got, want := executorURL(objs, "http")
			Expect(got).To(Equal(want), "the executors' URL names the API Service")
		}
	})

	It("serves the REST API over TLS with cert-manager, with the flags the chart passes", func(ctx SpecContext) {
		objs := decode(kustomize(ctx, filepath.Join(configWith(restComponent, certManagerComponent, certManagerNames), "default")))
		expectCertificateNamesHold(objs)
		_, c := manager(objs)
		_, chart := manager(decode(helmTemplate(ctx, "eo", "ops", "serveApi.enabled=true", "certManager.enabled=true")))
		Expect(restTLSFlags(c)).To(HaveLen(2))
		Expect(restTLSFlags(c)).To(ConsistOf(restTLSFlags(chart)))
		got, want := executorURL(objs, "https")
		Expect(got).To(Equal(want), "the executors' URL names the API Service, over TLS")
	})

	It("keeps cert-manager's names right under any namePrefix and namespace", func(ctx SpecContext) {
		dir := configWith(restComponent, certManagerComponent, certManagerNames, "../prometheus")
		editDefault(dir, func(k string) string {
			k = strings.Replace(k, "\nnamePrefix: eval-operator-\n", "\nnamePrefix: acme-\n", 1)
			return strings.Replace(k, "\nnamespace: eval-operator-system\n", "\nnamespace: acme-ops\n", 1)
		})
		rendered := kustomize(ctx, filepath.Join(dir, "default"))
		objs := decode(rendered)
		deployment, cert := named(objs, "Deployment", "controller-manager"), named(objs, "Certificate", "serving-cert")
		Expect(deployment.GetName()).To(Equal("acme-controller-manager"), "the render did not take the new namePrefix")
		Expect(cert.GetNamespace()).To(Equal("acme-ops"))
		expectCertificateNamesHold(objs)
		got, want := executorURL(objs, "https")
		Expect(got).To(Equal("https://acme-api.acme-ops.svc:8082/api/v2"))
		Expect(got).To(Equal(want))
		Expect(string(rendered)).NotTo(ContainSubstring("eval-operator-system"))
		Expect(string(rendered)).NotTo(MatchRegexp(`eval-operator-(api|controller|serving|selfsigned)`))

		Expect(apply(ctx, "packaging-kustomize-prefix", rendered)).NotTo(ContainSubstring(podSecurityWarning))
		kubectl(ctx, nil, "get", "-n", "acme-ops", "certificate/acme-serving-cert", "issuer/acme-selfsigned-issuer",
			"service/acme-api", "servicemonitor/acme-controller-manager-metrics-monitor")
	}, SpecTimeout(2*time.Minute))

	DescribeTable("derives the grace period from the manager's timeouts as the chart does",
		func(ctx SpecContext, optIns, values []string, seconds int) {
			pod, c := manager(decode(kustomize(ctx, filepath.Join(configWith(optIns...), "default"))))
			chartPod, chart := manager(decode(helmTemplate(ctx, "eo", "ops", values...)))
			Expect(pod.TerminationGracePeriodSeconds).To(HaveValue(BeEquivalentTo(seconds)))
			Expect(pod.TerminationGracePeriodSeconds).To(Equal(chartPod.TerminationGracePeriodSeconds))
			// The timeouts it is derived from are the chart's too (the
			// manager's defaults where neither passes the flag).
			for _, flag := range []string{"api-timeout", "rest-drain-delay", "rest-sync-timeout"} {
				if v := flagValue(c.Args, flag); v != "" {
					Expect(flagValue(chart.Args, flag)).To(Equal(v), "--%s", flag)
				}
			}
		},
		Entry("without the REST server: --api-timeout 10s + 5s, + 10s", nil, nil, 25),
		Entry("with it: 5s drain + 10s sync + 5s, + 5s, + 10s", []string{restComponent},
			[]string{"serveApi.enabled=true"}, 35),
	)

	It("runs two replicas with a budget and a spread over nodes with [HA], as the chart with replicaCount 2", func(ctx SpecContext) {
		objs := decode(kustomize(ctx, filepath.Join(configWith(haComponent), "default")))
		chartObjs := decode(helmTemplate(ctx, "eo", "ops", "replicaCount=2"))
		deployment := ofKind[appsv1.Deployment](objs, "Deployment")[0]
		chartDeployment := ofKind[appsv1.Deployment](chartObjs, "Deployment")[0]
		Expect(deployment.Spec.Replicas).To(Equal(chartDeployment.Spec.Replicas))
		_, c := manager(objs)
		Expect(c.Args).To(ContainElement("--leader-elect"))

		pdbs := ofKind[policyv1.PodDisruptionBudget](objs, "PodDisruptionBudget")
		chartPDBs := ofKind[policyv1.PodDisruptionBudget](chartObjs, "PodDisruptionBudget")
		Expect(pdbs).To(HaveLen(1))
		Expect(chartPDBs).To(HaveLen(1))
		Expect(pdbs[0].Spec.Selector.MatchLabels).To(Equal(deployment.Spec.Selector.MatchLabels))
		pdbs[0].Spec.Selector, chartPDBs[0].Spec.Selector = nil, nil // each installer's own labels
		Expect(pdbs[0].Spec).To(Equal(chartPDBs[0].Spec))

		spread := deployment.Spec.Template.Spec.TopologySpreadConstraints
		chartSpread := chartDeployment.Spec.Template.Spec.TopologySpreadConstraints
		Expect(spread).To(HaveLen(1))
		Expect(chartSpread).To(HaveLen(1))
		Expect(spread[0].LabelSelector.MatchLabels).To(Equal(deployment.Spec.Selector.MatchLabels))
		spread[0].LabelSelector, chartSpread[0].LabelSelector = nil, nil
		Expect(spread[0]).To(Equal(chartSpread[0]))

		Expect(kinds(decode(kustomize(ctx, filepath.Join(repoRoot, "config", "default"))))).
			NotTo(ContainElement("PodDisruptionBudget"), "one replica, no budget")
	})

	It("runs the release's image in every render, never latest", func(ctx SpecContext) {
		want := "ghcr.io/eval-operator/eval-operator:" + readChartMeta().AppVersion
		for _, dir := range []string{withOptIns(), filepath.Join(repoRoot, "config", "namespaced"),
			filepath.Join(repoRoot, "config", "default")} {
			_, c := manager(decode(kustomize(ctx, dir)))
			Expect(c.Image).To(Equal(want), dir)
		}
	})
})
