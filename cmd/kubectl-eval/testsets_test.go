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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

const inlineTestsetYAML = `apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: Testset
metadata:
  name: smoke
spec:
  projectId: proj-42
  name: Smoke
  keyField: id
  inline:
  - {id: a, q: "1+1", answer: "2"}
  - {id: b, q: "2+2", answer: "4"}
`

const configMapTestsetYAML = `apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: Testset
metadata:
  name: faq
  namespace: team-a
spec:
  projectId: proj-42
  name: FAQ
  keyField: id
  configMapRef:
    name: faq-cases
`

const casesConfigMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: faq-cases
  namespace: team-a
data:
  testcases.jsonl: |
    {"id": "refund", "q": "How long?", "answer": "30 days"}
    {"id": "ship", "q": "EU?", "answer": "Yes"}
`

var _ = Describe("Testsets in validate and plan", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("admits a Testset whose testcases are valid, inline or in a ConfigMap among the manifests", func(ctx SpecContext) {
		writeManifest(dir, "a.yaml", stream(inlineTestsetYAML, configMapTestsetYAML, casesConfigMapYAML))
		out, code := runOffline(ctx, "", "validate", dir)
		Expect(code).To(Equal(0), out)
		Expect(out).To(Equal("2 objects valid, 0 invalid, 1 other objects ignored\n"))

		out, code = runOffline(ctx, "", "plan", dir)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("Testset smoke: create: a remote Testset in project proj-42 with 2 testcases from inline\n"))
		Expect(out).To(ContainSubstring("Testset team-a/faq: create: a remote Testset in project proj-42 with 2 testcases " +
			"from ConfigMap faq-cases key testcases.jsonl\n"))
	})

	It("rejects the testcases the operator would stop at, naming the line", func(ctx SpecContext) {
		path := writeManifest(dir, "a.yaml", stream(
			edit(inlineTestsetYAML, "{id: b,", "{id: a,"),
			configMapTestsetYAML,
			edit(casesConfigMapYAML, `{"id": "ship", "q": "EU?", "answer": "Yes"}`, `{"q": "EU?"}`)))
		out, code := runOffline(ctx, "", "validate", path)
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring(path + `:1: DuplicateKey: inline item 1 and 2 have the same id "a": keys must be unique` + "\n"))
		Expect(out).To(ContainSubstring(path + `:13: InvalidTestcases: ConfigMap faq-cases key testcases.jsonl: ` +
			`line 2: field "id" (the keyField) is missing` + "\n"))
	})

	It("counts the testcases an edit would create, update and delete against the revision", func(ctx SpecContext) {
		git := gitIn(dir)
		git("init", "-q")
		writeManifest(dir, "deploy/testsets.yaml", inlineTestsetYAML)
		git("add", ".")
		git("commit", "-q", "-m", "base")

		writeManifest(dir, "deploy/testsets.yaml", edit(edit(inlineTestsetYAML,
			`- {id: a, q: "1+1", answer: "2"}`, `- {id: c, q: "3+3", answer: "6"}`),
			`answer: "4"`, `answer: "four"`))
		out, code := runOffline(ctx, "", "plan", "--base", "HEAD", filepath.Join(dir, "deploy"))
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("Testset smoke: update: spec.inline; testcases: 1 to create, 1 to update, 1 to delete\n"))

		writeManifest(dir, "deploy/testsets.yaml", inlineTestsetYAML)
		out, _ = runOffline(ctx, "", "plan", "--base", "HEAD", filepath.Join(dir, "deploy"))
		Expect(out).To(ContainSubstring("Testset smoke: unchanged\n"))
	})
})

// gitIn runs git in dir as a test author; a failure fails the spec.
func gitIn(dir string) func(args ...string) {
	return func(args ...string) {
		GinkgoHelper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
	}
}

// faqKustomization is a kustomization that makes faq's ConfigMap from
// faq.jsonl with configMapGenerator, as docs/testsets.md recommends.
const faqKustomization = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: team-a
resources:
- testsets.yaml
configMapGenerator:
- name: faq-cases
  files:
  - testcases.jsonl=faq.jsonl
`

const faqLines = `{"id": "refund", "q": "How long?", "answer": "30 days"}
{"id": "ship", "q": "EU?", "answer": "Yes"}
{"id": "gift", "q": "Gift wrap?", "answer": "No"}
`

// faqEdited changes two testcases of faqLines and removes one.
func faqEdited() string {
	return edit(edit(edit(faqLines, `"30 days"`, `"60 days"`), `"Yes"`, `"Yes, in 3 days"`),
		`{"id": "gift", "q": "Gift wrap?", "answer": "No"}`+"\n", "")
}

var _ = Describe("Testsets from a configMapGenerator in plan", func() {
	It("counts the testcases an edit of the generator's file changes against the revision", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		git := gitIn(dir)
		git("init", "-q")
		writeManifest(dir, "deploy/kustomization.yaml", faqKustomization)
		// Its namespace is the kustomization's, as kustomize build gives it.
		writeManifest(dir, "deploy/testsets.yaml", edit(configMapTestsetYAML, "  namespace: team-a\n", ""))
		writeManifest(dir, "deploy/faq.jsonl", faqLines)
		git("add", ".")
		git("commit", "-q", "-m", "base")

		out, code := runOffline(ctx, "", "plan", "--base", "HEAD", filepath.Join(dir, "deploy"))
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("Testset team-a/faq: unchanged\n"))

		writeManifest(dir, "deploy/faq.jsonl", faqEdited())
		out, code = runOffline(ctx, "", "plan", "--base", "HEAD", filepath.Join(dir, "deploy"))
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("Testset team-a/faq: update: testcases: 0 to create, 2 to update, 1 to delete\n"))
	})

	It("reads a rendered ConfigMap whose name carries the generator's hash", func(ctx SpecContext) {
		rendered := stream(configMapTestsetYAML, edit(casesConfigMapYAML, "name: faq-cases", "name: faq-cases-5t4h2m8k9g"))
		out, code := runOffline(ctx, rendered, "plan", "-")
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("Testset team-a/faq: create: a remote Testset in project proj-42 with 2 testcases " +
			"from ConfigMap faq-cases-5t4h2m8k9g key testcases.jsonl\n"))

		By("two hashed ConfigMaps of one name are ambiguous")
		out, code = runOffline(ctx, stream(rendered, edit(casesConfigMapYAML, "name: faq-cases", "name: faq-cases-b7c2d9f4kk")),
			"validate", "-")
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("ConfigMaps faq-cases-"))
	})
})

var _ = Describe("import --testsets", func() {
	It("writes each Testset as a manifest that adopts it, its testcases as JSON Lines and a kustomization", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		c, err := evalapi.NewClient(evalapi.Options{BaseURL: upstream.URL()})
		Expect(err).NotTo(HaveOccurred())
		mapping := evalapi.FieldMapping{Inputs: []string{"q"}, Expected: []string{"answer"}, Metadata: []string{}}
		ts, err := c.CreateTestset(ctx, evalapitest.DefaultKey, importedProject, evalapi.TestsetRequest{
			Name: "Support FAQ", Description: "from the UI", JSONSchema: json.RawMessage(`{"type":"object"}`), FieldMapping: mapping})
		Expect(err).NotTo(HaveOccurred())
		data := make([]json.RawMessage, 0, 2)
		for _, line := range []string{`{"id":"a","q":"1+1","answer":"2"}`, `{"id":"b","q":"2+2","answer":"4"}`} {
			data = append(data, json.RawMessage(line))
		}
		_, err = c.CreateTestcases(ctx, evalapitest.DefaultKey, ts.ID, data)
		Expect(err).NotTo(HaveOccurred())
		dir := filepath.Join(GinkgoT().TempDir(), "testsets")

		_, stderr, err := run(ctx, map[string]string{envAPIKey: evalapitest.DefaultKey}, "import", "--project-id", importedProject,
			"--api-url", upstream.URL(), "--testsets", "--key-field", "id", "-o", dir)
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(stderr).To(ContainSubstring("wrote 1 Testsets with 2 testcases to " + dir))

		var t v1alpha1.Testset
		manifest, err := os.ReadFile(filepath.Join(dir, "support-faq.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.UnmarshalStrict(manifest, &t)).To(Succeed())
		Expect(t.Annotations).To(HaveKeyWithValue(v1alpha1.TestsetIDAnnotation, ts.ID))
		Expect(t.Spec.KeyField).To(BeEquivalentTo("id"))
		Expect(t.Spec.FieldMapping.Inputs).To(ConsistOf(v1alpha1.FieldName("q")))
		Expect(t.Spec.ConfigMapRef.Name).To(Equal("support-faq-testcases"))
		lines, err := os.ReadFile(filepath.Join(dir, "support-faq.jsonl"))
		Expect(err).NotTo(HaveOccurred())
		set, err := testcases.FromLines(strings.NewReader(string(lines)), "id")
		Expect(err).NotTo(HaveOccurred())
		Expect(set.Cases).To(HaveLen(2))
		kustomization, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(kustomization)).To(And(ContainSubstring("- support-faq.yaml"),
			ContainSubstring("testcases.jsonl=support-faq.jsonl"), ContainSubstring("disableNameSuffixHash: true")))

		By("a key field some testcase lacks is refused, naming the Testset")
		_, _, err = run(ctx, map[string]string{envAPIKey: evalapitest.DefaultKey}, "import", "--project-id", importedProject,
			"--api-url", upstream.URL(), "--testsets", "--key-field", "q2", "-o", GinkgoT().TempDir())
		Expect(err).To(MatchError(ContainSubstring(`Testset "Support FAQ" (` + ts.ID + `): line 1: field "q2" (the keyField) is missing`)))
	})
})
