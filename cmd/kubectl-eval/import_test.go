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
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

// importedProject is the project the import specs import.
const importedProject = "proj-a"

// createRemote creates n Metrics of every variant in importedProject.
func createRemote(ctx SpecContext, upstream *evalapitest.Server, n int) {
	GinkgoHelper()
	c, err := evalapi.NewClient(evalapi.Options{BaseURL: upstream.URL()})
	Expect(err).NotTo(HaveOccurred())
	for i := range n {
		spec := framework.NewMetric("", fmt.Sprintf("Metric %d", i), i).Spec
		_, err := c.CreateMetric(ctx, evalapitest.DefaultKey, importedProject, convert.RequestFor(&spec))
		Expect(err).NotTo(HaveOccurred())
	}
}

// decodeMetrics reads a multi-document YAML stream of Metrics.
func decodeMetrics(r io.Reader) []v1alpha1.Metric {
	GinkgoHelper()
	dec := yaml.NewYAMLReader(bufio.NewReader(r))
	var out []v1alpha1.Metric
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		Expect(err).NotTo(HaveOccurred())
		var m v1alpha1.Metric
		Expect(yaml.UnmarshalStrict(doc, &m)).To(Succeed())
		out = append(out, m)
	}
}

var _ = Describe("import", func() {
	var upstream *evalapitest.Server
	BeforeEach(func() {
		upstream = evalapitest.New()
		DeferCleanup(upstream.Close)
	})

	It("writes every page's Metrics as manifests the API server accepts", func(ctx SpecContext) {
		createRemote(ctx, upstream, 120)
		ns, err := framework.NewNamespace(ctx, k8s, "import-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())

		// The key comes from the Secret in the cluster, and is never printed.
		stdout, stderr, err := run(ctx, nil, "import", "--project-id", "proj-a", "-n", ns,
			"--secret", framework.KeySecretName, "--api-url", upstream.URL())

		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(stdout + stderr).NotTo(ContainSubstring(evalapitest.DefaultKey))
		Expect(upstream.Calls(evalapitest.OpListMetrics)).To(Equal(2))
		ms := decodeMetrics(strings.NewReader(stdout))
		Expect(ms).To(HaveLen(120))
		ids := map[string]bool{}
		for i := range ms {
			Expect(k8s.Create(ctx, &ms[i])).To(Succeed(), "Metric %s", ms[i].Name)
			ids[ms[i].Annotations[v1alpha1.MetricIDAnnotation]] = true
		}
		Expect(ids).To(HaveLen(120))
		for _, r := range upstream.Metrics() {
			Expect(ids).To(HaveKey(r.Metric.ID))
		}
		Expect(upstream.Creates()).To(Equal(120), "importing created nothing")
	})

	It("takes the URL and key of a ClusterEvaluationService of the cluster with --service", func(ctx SpecContext) {
		createRemote(ctx, upstream, 2)
		keys, err := framework.NewNamespace(ctx, k8s, "import-keys-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		svc := &v1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{GenerateName: "import-"},
			Spec: v1alpha1.ClusterEvaluationServiceSpec{
				ServiceConnection: v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL(upstream.URL())},
				APIKeySecretRef: &v1alpha1.NamespacedSecretKeySelector{Namespace: keys,
					SecretKeySelector: v1alpha1.SecretKeySelector{Name: framework.KeySecretName}}}}
		Expect(k8s.Create(ctx, svc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(k8s.Delete(ctx, svc)).To(Succeed()) })

		stdout, stderr, err := run(ctx, nil, "import", "--project-id", "proj-a", "--service", "ClusterEvaluationService/"+svc.Name)

		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(decodeMetrics(strings.NewReader(stdout))).To(HaveLen(2))
		Expect(stdout + stderr).NotTo(ContainSubstring(evalapitest.DefaultKey))

		Expect(stderr).To(ContainSubstring("sending the API key of Secret " + keys + "/" + framework.KeySecretName +
			" key apiKey to " + upstream.URL()))

		_, _, err = run(ctx, nil, "import", "--project-id", "proj-a", "--service", "Cluster/"+svc.Name)
		Expect(err).To(MatchError(ContainSubstring("the kind must be EvaluationService or ClusterEvaluationService")))
		_, _, err = run(ctx, nil, "import", "--project-id", "proj-a", "-n", keys, "--service", "missing")
		Expect(err).To(MatchError(ContainSubstring("--service EvaluationService/missing: EvaluationService/missing not found in namespace " + keys)))
	})

	It("refuses a --service that does not allow the namespace, as the manager does, and sends nothing", func(ctx SpecContext) {
		keys, err := framework.NewNamespace(ctx, k8s, "import-elsewhere-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		svc := &v1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{GenerateName: "import-"},
			Spec: v1alpha1.ClusterEvaluationServiceSpec{Namespaces: []string{keys},
				ServiceConnection: v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL(upstream.URL())},
				APIKeySecretRef: &v1alpha1.NamespacedSecretKeySelector{Namespace: keys,
					SecretKeySelector: v1alpha1.SecretKeySelector{Name: framework.KeySecretName}}}}
		Expect(k8s.Create(ctx, svc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(k8s.Delete(ctx, svc)).To(Succeed()) })

		_, _, err = run(ctx, nil, "import", "--project-id", "proj-a", "-n", "default", "--service", "ClusterEvaluationService/"+svc.Name)
		Expect(err).To(MatchError(ContainSubstring("does not allow namespace default")))
		Expect(upstream.Calls(evalapitest.OpListMetrics)).To(BeZero(), "nothing was sent")

		_, _, err = run(ctx, nil, "import", "--project-id", "proj-a", "-n", keys, "--service", "ClusterEvaluationService/"+svc.Name)
		Expect(err).NotTo(HaveOccurred())
	})

	It("never sends the caller's key to a --service's url unless --own-key says so", func(ctx SpecContext) {
		createRemote(ctx, upstream, 1)
		ns, err := framework.NewNamespace(ctx, k8s, "import-tenant-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		// A tenant's service, with no key of its own, at a URL the tenant chose.
		var seen []string
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = append(seen, r.Header.Get("Authorization"))
			http.NotFound(w, r)
		}))
		DeferCleanup(evil.Close)
		svc := &v1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evil"},
			Spec: v1alpha1.EvaluationServiceSpec{ServiceConnection: v1alpha1.ServiceConnection{
				URL: v1alpha1.ServiceURL(evil.URL + "/api/v2")}}}
		Expect(k8s.Create(ctx, svc)).To(Succeed())
		const adminKey = "ak_admin_0123456789abcdef"

		_, stderr, err := run(ctx, map[string]string{envAPIKey: adminKey},
			"import", "--project-id", "proj-a", "-n", ns, "--service", "evil")
		Expect(err).To(MatchError(And(ContainSubstring("names no apiKeySecretRef"), ContainSubstring("--own-key"),
			ContainSubstring(evil.URL))))
		Expect(stderr + err.Error()).NotTo(ContainSubstring(adminKey))
		Expect(seen).To(BeEmpty(), "nothing was sent")

		_, stderr, _ = run(ctx, map[string]string{envAPIKey: adminKey},
			"import", "--project-id", "proj-a", "-n", ns, "--service", "evil", "--own-key")
		Expect(stderr).To(ContainSubstring("sending the API key of $" + envAPIKey + " to " + evil.URL + "/api/v2"))
		Expect(seen).To(ConsistOf("Bearer "+adminKey), "sent where the caller explicitly said")
	})

	It("writes read-only mirrors with --observe", func(ctx SpecContext) {
		createRemote(ctx, upstream, 3)
		ns, err := framework.NewNamespace(ctx, k8s, "import-observe-", evalapitest.DefaultKey)
		Expect(err).NotTo(HaveOccurred())
		stdout, stderr, err := run(ctx, map[string]string{envAPIKey: evalapitest.DefaultKey},
			"import", "--project-id", "proj-a", "-n", ns, "--observe", "--api-url", upstream.URL())
		Expect(err).NotTo(HaveOccurred(), stderr)
		ms := decodeMetrics(strings.NewReader(stdout))
		Expect(ms).To(HaveLen(3))
		for i := range ms {
			Expect(ms[i].Spec.ManagementPolicies).To(Equal([]v1alpha1.ManagementAction{v1alpha1.ManagementObserve}))
			Expect(k8s.Create(ctx, &ms[i])).To(Succeed(), "Metric %s", ms[i].Name)
		}
		Expect(stdout).To(ContainSubstring("managementPolicies:\n  - Observe\n"))
	})

	It("writes one file per Metric with -o DIR, the key read from a file", func(ctx SpecContext) {
		createRemote(ctx, upstream, 3)
		dir := GinkgoT().TempDir()
		keyFile := filepath.Join(dir, "key")
		Expect(os.WriteFile(keyFile, []byte(evalapitest.DefaultKey+"\n"), 0o600)).To(Succeed())
		out := filepath.Join(dir, "metrics")

		_, stderr, err := run(ctx, nil, "import", "--project-id", "proj-a", "--api-url", upstream.URL(),
			"--key-file", keyFile, "-o", out)

		Expect(err).NotTo(HaveOccurred(), stderr)
		files, err := filepath.Glob(filepath.Join(out, "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(ConsistOf(filepath.Join(out, "metric-0.yaml"), filepath.Join(out, "metric-1.yaml"), filepath.Join(out, "metric-2.yaml")))
	})

	It("refuses a Secret's key the operator would refuse: a line break is not trimmed away", func(ctx SpecContext) {
		ns, err := framework.NewNamespace(ctx, k8s, "import-newline-", evalapitest.DefaultKey+"\n")
		Expect(err).NotTo(HaveOccurred())
		_, stderr, err := run(ctx, nil, "import", "--project-id", "proj-a", "-n", ns, "--api-url", upstream.URL(),
			"--secret", framework.KeySecretName)
		Expect(err).To(MatchError(ContainSubstring("no whitespace or line break")))
		Expect(stderr + err.Error()).NotTo(ContainSubstring(evalapitest.DefaultKey))
		Expect(upstream.Calls(evalapitest.OpListMetrics)).To(BeZero(), "nothing was sent")
	})

	It("fails on a refused key without printing it", func(ctx SpecContext) {
		const wrong = "ak_refused_key_value"

		stdout, stderr, err := run(ctx, map[string]string{envAPIKey: wrong, envAPIURL: upstream.URL()},
			"import", "--project-id", "proj-a")

		Expect(err).To(HaveOccurred())
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindUnauthorized))
		Expect(stdout + stderr + err.Error()).NotTo(ContainSubstring(wrong))
	})

	It("does not send a key that is not an ak_ key", func(ctx SpecContext) {
		_, _, err := run(ctx, map[string]string{envAPIKey: "sk_secret"}, "import", "--project-id", "p", "--api-url", upstream.URL())

		Expect(err).To(MatchError(ContainSubstring("is not an API key (ak_ followed by")))
		Expect(err.Error()).NotTo(ContainSubstring("sk_secret"))
		Expect(upstream.Calls(evalapitest.OpListMetrics)).To(BeZero())
	})
})
