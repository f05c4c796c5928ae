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
	"bytes"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("The samples", func() {
	It("all become Current, with one create per Metric and Testset upstream", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		ns := newNamespace(ctx, "samples")
		startManager(ctx, "manager", "--api-url="+upstream.URL())

		// The key Secret as a real cluster gets it: from the template, with a
		// key the service accepts in place of the placeholder.
		secret := loadYAML(filepath.Join(samplesDir(), "secret", "evaluation-api-key.yaml"))
		secret.SetNamespace(ns)
		Expect(unstructured.SetNestedField(secret.Object, evalapitest.DefaultKey, "stringData", "apiKey")).To(Succeed())
		Expect(k8s.Create(ctx, secret)).To(Succeed())

		samples := loadSamples()
		for _, obj := range samples {
			obj.SetNamespace(ns)
			Expect(k8s.Create(ctx, obj)).To(Succeed(), obj.GetName())
		}
		for _, obj := range samples {
			Eventually(kstatusOf(ctx, obj.GroupVersionKind(), client.ObjectKeyFromObject(obj))).
				Should(Equal(status.CurrentStatus), "%s %s", obj.GetKind(), obj.GetName())
		}

		remoteIDs := map[string]string{} // by Metric name
		for _, m := range upstream.CreatedMetrics() {
			Expect(remoteIDs).NotTo(HaveKey(m.Metric.Name), "created twice")
			remoteIDs[m.Metric.Name] = m.Metric.ID
		}
		var metrics, testsets int
		for _, obj := range samples {
			switch obj.GetKind() {
			case "Metric":
				metrics++
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				name := nested(obj, "spec", "name")
				Expect(remoteIDs).To(HaveKeyWithValue(name, nested(obj, "status", "id")), obj.GetName())
			case "Testset":
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				count, _, _ := unstructured.NestedInt64(obj.Object, "status", "testcases")
				Expect(count).To(BeNumerically(">", 0), obj.GetName())
				Expect(upstream.Testcases(nested(obj, "status", "id"))).To(HaveLen(int(count)), obj.GetName())
				testsets++
			case "TestsetDeletion":
				Expect(upstream.DeletedTestsets()).To(ConsistOf(nested(obj, "spec", "testsetId")))
			case "TestcaseDeletion":
				ids, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "testcaseIds")
				Expect(upstream.DeletedTestcases()).To(ConsistOf(ids))
			}
		}
		Expect(metrics).To(Equal(9), "one sample per Metric variant")
		Expect(testsets).To(Equal(2), "a Testset inline and one from a ConfigMap")
		Expect(upstream.Calls(evalapitest.OpCreateTestset)).To(Equal(testsets), "no create was retried")
		Expect(remoteIDs).To(HaveLen(metrics))
		Expect(upstream.Calls(evalapitest.OpCreateMetric)).To(Equal(metrics), "no create was retried")
	})
})

// samplesDir is config/samples.
func samplesDir() string { return filepath.Join(framework.RepoRoot(), "config", "samples") }

// loadSamples decodes every object of config/samples: what `kubectl apply -f
// config/samples/` applies.
func loadSamples() []*unstructured.Unstructured {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(samplesDir(), "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	objs := make([]*unstructured.Unstructured, 0, len(files))
	for _, f := range files {
		objs = append(objs, loadYAML(f))
	}
	return objs
}

// loadYAML decodes the one object of a YAML file.
func loadYAML(path string) *unstructured.Unstructured {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	obj := &unstructured.Unstructured{}
	Expect(utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&obj.Object)).To(Succeed(), path)
	return obj
}

// nested returns a string field of obj, or "" if it is not set.
func nested(obj *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj.Object, fields...)
	return s
}
