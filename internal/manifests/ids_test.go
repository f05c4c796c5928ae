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

package manifests_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/manifests"
	"github.com/eval-operator/eval-operator/test/framework"
)

// writeFile writes text to dir/name and returns its path.
func writeFile(dir, name, text string) string {
	GinkgoHelper()
	path := filepath.Join(dir, name)
	Expect(os.MkdirAll(filepath.Dir(path), 0o750)).To(Succeed())
	Expect(os.WriteFile(path, []byte(text), 0o600)).To(Succeed())
	return path
}

func readFile(path string) string {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return string(data)
}

// kustomizeBuild runs bin/kustomize build on dir and returns the Metrics'
// metric-id annotations by namespace/name.
func kustomizeBuild(dir string) map[string]string {
	GinkgoHelper()
	cmd := exec.Command(filepath.Join(framework.RepoRoot(), "bin", "kustomize"), "build", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), stderr.String())
	ids := map[string]string{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var m v1alpha1.Metric
		Expect(yaml.Unmarshal([]byte(doc), &m)).To(Succeed())
		ids[m.Namespace+"/"+m.Name] = m.Annotations[v1alpha1.MetricIDAnnotation]
	}
	return ids
}

const metricsYAML = `# Metrics of team a.
apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: Metric
metadata:
  name: tone # keep
spec:
  projectId: p
  name: Tone
  evalType: human
  outputType: boolean
---
apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: Metric
metadata:
    name: care
    annotations:
        note: "hand written"
spec:
    projectId: p
    name: Care
    evalType: human
    outputType: boolean
---
apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: Metric
metadata:
  name: made-by-hand
spec:
  projectId: p
  name: Hand
  evalType: human
  outputType: boolean
`

var _ = Describe("IDComponent", func() {
	It("adopts through kustomize build, skipping Metrics the repository does not hold", func() {
		dir := GinkgoT().TempDir()
		writeFile(dir, "metrics.yaml", metricsYAML)
		writeFile(dir, "kustomization.yaml", "namespace: team-a\nresources: [metrics.yaml]\ncomponents: [metric-ids]\n")
		component, err := manifests.IDComponent([]manifests.ID{
			{Namespace: "team-a", Name: "tone", ID: "m-tone"},
			{Namespace: "team-a", Name: "care", ID: "m-care"},
			{Namespace: "team-a", Name: "only-in-the-cluster", ID: "m-other"},
		})
		Expect(err).NotTo(HaveOccurred())
		writeFile(dir, "metric-ids/kustomization.yaml", string(component))

		Expect(kustomizeBuild(dir)).To(Equal(map[string]string{
			"team-a/tone":         "m-tone",
			"team-a/care":         "m-care",
			"team-a/made-by-hand": "",
		}))
	})

	It("tells apart namesakes of different namespaces", func() {
		dir := GinkgoT().TempDir()
		for _, ns := range []string{"a", "b"} {
			writeFile(dir, ns+".yaml", strings.Replace(strings.Split(metricsYAML, "---\n")[0], "  name: tone # keep", "  name: tone\n  namespace: "+ns, 1))
		}
		writeFile(dir, "kustomization.yaml", "resources: [a.yaml, b.yaml]\ncomponents: [metric-ids]\n")
		component, err := manifests.IDComponent([]manifests.ID{
			{Namespace: "a", Name: "tone", ID: "m-a"},
			{Namespace: "b", Name: "tone", ID: "m-b"},
		})
		Expect(err).NotTo(HaveOccurred())
		writeFile(dir, "metric-ids/kustomization.yaml", string(component))

		ids := kustomizeBuild(dir)
		Expect(ids).To(HaveKeyWithValue("a/tone", "m-a"))
		Expect(ids).To(HaveKeyWithValue("b/tone", "m-b"))
	})
})

var _ = Describe("AnnotateFiles", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("inserts the annotation and changes nothing else", func() {
		path := writeFile(dir, "metrics.yaml", metricsYAML)

		done, err := manifests.AnnotateFiles([]string{dir}, []manifests.ID{
			{Namespace: "team-a", Name: "tone", ID: "m-tone"},
			{Namespace: "team-a", Name: "care", ID: "m-care"},
		})

		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(HaveLen(2))
		Expect(done[0]).To(Equal(manifests.Annotation{Path: path, Line: 4, Name: "tone", ID: "m-tone"}))
		want := strings.Replace(metricsYAML, "metadata:\n  name: tone # keep\n",
			"metadata:\n  annotations:\n    evaluation.eval-operator.dev/metric-id: \"m-tone\"\n  name: tone # keep\n", 1)
		want = strings.Replace(want, "        note: \"hand written\"\n",
			"        evaluation.eval-operator.dev/metric-id: \"m-care\"\n        note: \"hand written\"\n", 1)
		Expect(readFile(path)).To(Equal(want))
	})

	It("is idempotent", func() {
		path := writeFile(dir, "metrics.yaml", metricsYAML)
		ids := []manifests.ID{{Namespace: "team-a", Name: "tone", ID: "m-tone"}}
		_, err := manifests.AnnotateFiles([]string{path}, ids)
		Expect(err).NotTo(HaveOccurred())
		once := readFile(path)

		done, err := manifests.AnnotateFiles([]string{path}, ids)

		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(ConsistOf(HaveField("Problem", "")))
		Expect(readFile(path)).To(Equal(once))
	})

	It("matches a manifest's own namespace", func() {
		path := writeFile(dir, "metrics.yaml", strings.Replace(metricsYAML, "  name: tone # keep", "  name: tone\n  namespace: team-b", 1))

		done, err := manifests.AnnotateFiles([]string{path}, []manifests.ID{{Namespace: "team-a", Name: "tone", ID: "m-tone"}})

		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(BeEmpty())
		Expect(readFile(path)).NotTo(ContainSubstring("m-tone"))
	})

	DescribeTable("leaves alone and reports what it cannot annotate safely",
		func(text string, ids []manifests.ID, problem string) {
			path := writeFile(dir, "metrics.yaml", text)

			done, err := manifests.AnnotateFiles([]string{path}, ids)

			Expect(err).NotTo(HaveOccurred())
			Expect(done).To(ConsistOf(HaveField("Problem", ContainSubstring(problem))))
			Expect(readFile(path)).To(Equal(text))
		},
		Entry("another id recorded", strings.Replace(metricsYAML, "note: \"hand written\"", "evaluation.eval-operator.dev/metric-id: m-old", 1),
			[]manifests.ID{{Namespace: "a", Name: "care", ID: "m-new"}}, `already names remote Metric "m-old"`),
		Entry("a name in two namespaces", metricsYAML,
			[]manifests.ID{{Namespace: "a", Name: "tone", ID: "m-a"}, {Namespace: "b", Name: "tone", ID: "m-b"}}, "several namespaces"),
		Entry("flow style", "apiVersion: evaluation.eval-operator.dev/v1alpha1\nkind: Metric\nmetadata: {name: tone}\n",
			[]manifests.ID{{Name: "tone", ID: "m-tone"}}, "flow style"),
	)

	It("fails on a file that is not YAML", func() {
		path := writeFile(dir, "broken.yaml", "kind: [\n")
		_, err := manifests.AnnotateFiles([]string{path}, nil)
		Expect(err).To(MatchError(ContainSubstring(path)))
	})
})
