//go:build cluster

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

package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

// gitopsService is the service of examples/gitops whose loop runs on the
// node: its folder, its namespace and its Rollout's name.
const gitopsService = "support-assistant"

// gitopsRelease is examples/gitops as production applies it, for
// gitopsService alone: the service's folder rendered by kustomize and the
// cluster's service connection, changed only where this node differs from
// a cluster the example is written for. The key Secret stands in for the
// ExternalSecret (no External Secrets Operator here); the service's URL is
// the fake's; the Rollout runs the test's assistant at version, answering
// right; the executor finds the canary by its Service's environment
// variables (no cluster DNS); the images are the node's.
//
// It returns the cluster's service connection apart from the service's
// objects: a first sync that applies both at once can let the manager
// reconcile the Metrics before it sees the connection, on the standalone
// service it falls back to, where they stay (a sync wave, or Flux's
// dependsOn, applies the connection first).
func gitopsRelease(ctx context.Context, key, version string) (connection, objects []byte) {
	GinkgoHelper()
	root := filepath.Join(framework.RepoRoot(), "examples", "gitops")
	rendered := run(ctx, nil, tool("KUSTOMIZE", "kustomize"), "build", filepath.Join(root, "services", gitopsService))
	shipped, err := os.ReadFile(filepath.Join(root, "clusters", "production", "service.yaml"))
	Expect(err).NotTo(HaveOccurred())
	const shippedImage = "image: ghcr.io/eval-operator/eval-operator:v0.2.0"
	var out []string
	kinds := map[string]int{}
	for doc := range strings.SplitSeq(string(rendered)+"\n---\n"+string(shipped), "\n---\n") {
		u := &unstructured.Unstructured{}
		Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
		kinds[u.GetKind()]++
		switch u.GetKind() {
		case "ExternalSecret":
			// What External Secrets Operator would make of it.
			Expect(u.GetName()).To(Equal("evaluation-api-key"))
			doc = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: evaluation-api-key\n  namespace: " + gitopsService +
				"\nstringData:\n  apiKey: " + key
		case "ClusterEvaluationService":
			Expect(unstructured.SetNestedField(u.Object, fake.URL(), "spec", "url")).To(Succeed())
			connection = must(yaml.Marshal(u.Object))
			continue
		case "Rollout":
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			Expect(containers).To(HaveLen(1))
			c := containers[0].(map[string]any)
			c["image"], c["imagePullPolicy"], c["args"] = assistantImage, "Never", []any{"serve"}
			c["env"] = []any{map[string]any{"name": "ANSWERS", "value": "right"}, map[string]any{"name": "VERSION", "value": version}}
			Expect(unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")).To(Succeed())
			doc = string(must(yaml.Marshal(u.Object)))
		case "ConfigMap", "AnalysisTemplate":
			doc = strings.ReplaceAll(doc, shippedImage, "image: "+img)
			doc = strings.Replace(doc, "--url=http://support-assistant-canary/answer",
				"--url=http://$(SUPPORT_ASSISTANT_CANARY_SERVICE_HOST)/answer", 1)
		}
		out = append(out, doc)
	}
	Expect(kinds).To(And(HaveKeyWithValue("ExternalSecret", 1), HaveKeyWithValue("ClusterEvaluationService", 1),
		HaveKeyWithValue("Rollout", 1), HaveKeyWithValue("AnalysisTemplate", 1), HaveKeyWithValue("Testset", 1),
		HaveKeyWithValue("System", 1)))
	release := strings.Join(out, "\n---\n")
	Expect(release).NotTo(ContainSubstring("support-assistant-canary/answer"), "the executor's URL")
	return connection, []byte(release)
}

func must[T any](v T, err error) T {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	return v
}

// gitopsLoop runs examples/gitops' release loop for one service: applied as
// production applies it, against the fake service, a new release passes
// its gate and is promoted.
func gitopsLoop() {
	It("runs the example GitOps repository's release loop for a service: a release that passes its gate is promoted", func() {
		ctx := ctxFor(8 * time.Minute)
		key := framework.NewKey("gitops")
		fake.AddTenant(key)
		DeferCleanup(func(ctx SpecContext) {
			if CurrentSpecReport().Failed() {
				dumpNamespace(ctx, gitopsService)
			}
			deleteNamespace(ctx, gitopsService)
			kubectl(ctx, nil, "delete", "--ignore-not-found", "--timeout=2m", "clusterevaluationservice", "default")
		})
		connection, v1 := gitopsRelease(ctx, key, "1")
		kubectl(ctx, connection, "apply", "-f", "-")
		kubectl(ctx, nil, "wait", "--for=condition=Ready", "--timeout=1m", "clusterevaluationservice/default")
		kubectl(ctx, v1, "apply", "-f", "-")
		kubectl(ctx, nil, "wait", "-n", gitopsService, "--for=condition=Ready", "--timeout=2m", "metrics", "--all")
		kubectl(ctx, nil, "wait", "-n", gitopsService, "--for=condition=Ready", "--timeout=2m", "testsets,systems", "--all")
		Eventually(func(g Gomega) string { return rolloutOf(ctx, g, gitopsService).Phase }).Should(Equal("Healthy"))

		By("a new release passes its gate: both Metrics, the executor's check and the service's ai score, pass on every testcase")
		_, v2objects := gitopsRelease(ctx, key, "2")
		kubectl(ctx, v2objects, "apply", "-f", "-")
		var v2 rolloutStatus
		Eventually(func(g Gomega) {
			v2 = rolloutOf(ctx, g, gitopsService)
			if v2.Aborted {
				StopTrying("the canary of the new release was aborted").Now()
			}
			g.Expect(v2.Phase).To(Equal("Healthy"))
			g.Expect(v2.Stable).To(Equal(v2.Current))
			g.Expect(runsOf(ctx, g, gitopsService)).To(HaveKey(v2.Current))
		}).WithTimeout(6 * time.Minute).Should(Succeed())
		runs := runsOf(ctx, Default, gitopsService)
		Expect(runs).To(HaveLen(1))
		passed := runs[v2.Current]
		Expect(passed.Status.Verdict).To(BeEquivalentTo("Passed"))
		Expect(passed.Labels).To(HaveKeyWithValue(v1alpha1.CanaryLabel, gitopsService))
		expectLinked(ctx, gitopsService, v2.Current, passed)
		Expect(passed.Status.Metrics).To(ConsistOf(
			And(HaveField("Name", "valid-json-output"), HaveField("Passed", BeEquivalentTo(4))),
			And(HaveField("Name", "answer-faithfulness"), HaveField("Passed", BeEquivalentTo(4)))))
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(gitopsService),
			client.MatchingLabels{"job-name": passed.Status.ExecutorJob})).To(Succeed())
		Expect(pods.Items).To(HaveLen(2), "one executor Pod a share")
		for _, p := range pods.Items {
			Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), p.Name)
			Expect(p.Spec.ServiceAccountName).To(Equal("evaluation-executor"), "the ServiceAccount the cluster's service grants")
		}
	})
}
