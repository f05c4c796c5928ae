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

package v1alpha1_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/test/framework"
)

// The samples in config/samples are documentation users copy; creating each
// against the API server keeps them valid as the CRDs change.

var samplesDir = filepath.Join(framework.RepoRoot(), "config", "samples")

// kustomizationFile is named so that `kubectl apply -f config/samples/`, which
// reads only .yaml, .yml and .json files, skips it while `-k` reads it.
const kustomizationFile = "Kustomization"

// sampleFiles returns the names of the YAML files in config/samples. It runs
// while the spec tree is built, so it cannot fail a spec: an unreadable
// directory yields no files, which the kustomization spec then reports.
func sampleFiles() []string {
	paths, _ := filepath.Glob(filepath.Join(samplesDir, "*.yaml"))
	files := make([]string, len(paths))
	for i, path := range paths {
		files[i] = filepath.Base(path)
	}
	return files
}

// customResourceSampleEntries returns one entry per sample of this API's
// kinds: the samples folder's and the connection kinds' in services/.
func customResourceSampleEntries() []TableEntry {
	files := sampleFiles()
	services, _ := filepath.Glob(filepath.Join(samplesDir, "services", "evaluation_*.yaml"))
	entries := make([]TableEntry, 0, len(files)+len(services))
	for _, file := range files {
		entries = append(entries, Entry(file, file))
	}
	for _, path := range services {
		file := filepath.Join("services", filepath.Base(path))
		entries = append(entries, Entry(file, file))
	}
	return entries
}

func readYAML(file string, into any) {
	data, err := os.ReadFile(filepath.Join(samplesDir, file))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.UnmarshalStrict(data, into)).To(Succeed(), file)
}

var _ = Describe("config/samples", func() {
	DescribeTable("the API server accepts",
		func(file string) {
			content := map[string]any{}
			readYAML(file, &content)
			obj := &unstructured.Unstructured{Object: content}
			if obj.GetKind() != "ClusterEvaluationService" {
				obj.SetNamespace(namespace)
			}
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		},
		customResourceSampleEntries(),
	)

	It("lists every sample in its Kustomization, and no Secret", func() {
		var kustomization struct {
			Resources []string `json:"resources"`
		}
		readYAML(kustomizationFile, &kustomization)
		files := sampleFiles()
		Expect(files).NotTo(BeEmpty())
		Expect(kustomization.Resources).To(ConsistOf(files))
		for _, file := range files {
			content := map[string]any{}
			readYAML(file, &content)
			Expect(content["kind"]).NotTo(Equal("Secret"),
				"%s: applying the samples would replace the namespace's key", file)
		}
	})

	It("has one Metric sample per variant", func() {
		variants := map[string]int{}
		for _, file := range sampleFiles() {
			content := map[string]any{}
			readYAML(file, &content)
			if content["kind"] == "Metric" {
				evalType, _, _ := unstructured.NestedString(content, "spec", "evalType")
				outputType, _, _ := unstructured.NestedString(content, "spec", "outputType")
				variants[evalType+"/"+outputType]++
			}
		}
		Expect(variants).To(Equal(map[string]int{
			"ai/int": 1, "ai/float": 1, "ai/boolean": 1,
			"human/int": 1, "human/float": 1, "human/boolean": 1,
			"heuristic/int": 1, "heuristic/float": 1, "heuristic/boolean": 1,
		}))
	})
})
