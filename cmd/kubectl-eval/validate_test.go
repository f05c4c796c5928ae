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
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// metricYAML is a valid Metric manifest; edits replace one of its lines.
const metricYAML = `apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: Metric
metadata:
  name: faithfulness
spec:
  projectId: proj-42
  name: Faithfulness
  description: Is the answer supported?
  evalType: ai
  outputType: int
  passingThreshold: 4
  promptTemplate: "Context: {{inputs.context}} Answer: {{outputs.response}}"
`

// deletionYAML is a valid TestcaseDeletion manifest.
const deletionYAML = `apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: TestcaseDeletion
metadata:
  name: drop-stale
spec:
  testcaseIds: [tc-1, tc-2]
`

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: other
`

// stream joins documents into one multi-document YAML stream.
func stream(docs ...string) string { return strings.Join(docs, "---\n") }

// edit replaces old with new in doc, which must contain it.
func edit(doc, old, new string) string {
	Expect(doc).To(ContainSubstring(old))
	return strings.Replace(doc, old, new, 1)
}

func writeManifest(dir, name, text string) string {
	path := filepath.Join(dir, name)
	Expect(os.MkdirAll(filepath.Dir(path), 0o750)).To(Succeed())
	Expect(os.WriteFile(path, []byte(text), 0o600)).To(Succeed())
	return path
}

// runOffline runs the plugin without a cluster, with stdin, and returns its
// stdout and exit code.
func runOffline(ctx SpecContext, stdin string, args ...string) (string, int) {
	var stdout, stderr strings.Builder
	cmd := newRootCommand(&stdout, &stderr, func(string) string { return "" })
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	GinkgoWriter.Println(stderr.String())
	return stdout.String(), exitCode(err)
}

var _ = Describe("validate", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })

	It("admits valid manifests, counts other kinds, and exits 0", func(ctx SpecContext) {
		writeManifest(dir, "metrics/a.yaml", stream(metricYAML, configMapYAML))
		writeManifest(dir, "deletions/b.yml", deletionYAML)
		writeManifest(dir, "README.md", "not YAML")

		out, code := runOffline(ctx, "", "validate", dir)
		Expect(code).To(Equal(0))
		Expect(out).To(Equal("2 objects valid, 0 invalid, 1 other objects ignored\n"))
	})

	It("reports the API server's messages at file:line and exits 1", func(ctx SpecContext) {
		bad := edit(metricYAML, "passingThreshold: 4", "passingThreshold: 4.5")
		path := writeManifest(dir, "m.yaml", stream(configMapYAML, "# a comment\n"+bad))

		out, code := runOffline(ctx, "", "validate", path)
		Expect(code).To(Equal(1))
		Expect(out).To(Equal(path + `:7: Metric.evaluation.eval-operator.dev "faithfulness" is invalid: ` +
			"spec.passingThreshold: Invalid value: passingThreshold must be a whole number from 1 to 5 when outputType is int\n" +
			"0 objects valid, 1 invalid, 1 other objects ignored\n"))
	})

	It("reads kustomize output from stdin and reports unknown fields as strict field validation does", func(ctx SpecContext) {
		out, code := runOffline(ctx, stream(deletionYAML, metricYAML+"  promptTemplat: typo\n"), "validate", "-")
		Expect(code).To(Equal(1))
		Expect(out).To(HavePrefix(`-:8: strict decoding error: unknown field "spec.promptTemplat"` + "\n"))
	})

	It("writes GitHub workflow annotations with -o github", func(ctx SpecContext) {
		path := writeManifest(dir, "d.yaml", edit(deletionYAML, "[tc-1, tc-2]", "[tc-1, tc-1]"))

		out, code := runOffline(ctx, "", "validate", "-o", "github", path)
		Expect(code).To(Equal(1))
		Expect(out).To(Equal("::error file=" + path + `,line=1::TestcaseDeletion.evaluation.eval-operator.dev "drop-stale" is invalid: ` +
			`spec.testcaseIds[1]: Duplicate value: "tc-1"` + "\n0 objects valid, 1 invalid, 0 other objects ignored\n"))
	})

	It("writes the causes with -o json", func(ctx SpecContext) {
		out, code := runOffline(ctx, edit(metricYAML, "evalType: ai", "evalType: robot"), "validate", "-o", "json")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring(`"field": "spec.evalType"`))
		Expect(out).To(ContainSubstring(`"invalid": 1`))
	})

	DescribeTable("exits 2 on bad usage or unreadable input",
		func(ctx SpecContext, args ...string) {
			_, code := runOffline(ctx, "", args...)
			Expect(code).To(Equal(2))
		},
		Entry("a missing file", "validate", "/nonexistent/metrics.yaml"),
		Entry("an unknown flag", "validate", "--bogus"),
		Entry("an unknown output format", "validate", "-o", "xml", "-"),
		Entry("--base with standard input", "validate", "-", "--base", "HEAD"),
	)

	Describe("with --base", func() {
		// repo is a throwaway Git repository whose HEAD holds the manifests.
		var repo string
		git := func(args ...string) {
			cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
			out, err := cmd.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
		}
		BeforeEach(func() {
			repo = dir
			git("init", "-q")
			writeManifest(repo, "deploy/metrics.yaml", metricYAML)
			writeManifest(repo, "deploy/deletions.yaml", deletionYAML)
			git("add", ".")
			git("commit", "-q", "-m", "base")
		})

		It("runs the transition rules against the objects at the revision", func(ctx SpecContext) {
			metrics := writeManifest(repo, "deploy/metrics.yaml", edit(metricYAML, "proj-42", "proj-43"))
			deletions := writeManifest(repo, "deploy/deletions.yaml", edit(deletionYAML, "[tc-1, tc-2]", "[tc-2, tc-1]"))

			out, code := runOffline(ctx, "", "validate", "--base", "HEAD", filepath.Join(repo, "deploy"))
			Expect(code).To(Equal(1))
			Expect(out).To(ContainSubstring(metrics + `:1: Metric.evaluation.eval-operator.dev "faithfulness" is invalid: ` +
				"spec.projectId: Invalid value: \"proj-43\": projectId is immutable: the service cannot move a Metric\n"))
			Expect(out).To(ContainSubstring(deletions + `:1: TestcaseDeletion.evaluation.eval-operator.dev "drop-stale" is invalid: ` +
				"spec.testcaseIds: Invalid value: testcaseIds is immutable, order included: create a new TestcaseDeletion instead\n"))

			// Without the old versions the same manifests are valid creates.
			_, code = runOffline(ctx, "", "validate", filepath.Join(repo, "deploy"))
			Expect(code).To(Equal(0))
		})

		It("admits edits the rules allow, objects moved between files, and new objects", func(ctx SpecContext) {
			Expect(os.Remove(filepath.Join(repo, "deploy", "metrics.yaml"))).To(Succeed())
			writeManifest(repo, "deploy/all.yaml", stream(edit(metricYAML, "Is the answer supported?", "Changed."), deletionYAML))
			writeManifest(repo, "deploy/deletions.yaml", edit(deletionYAML, "drop-stale", "drop-more"))

			out, code := runOffline(ctx, "", "validate", "--base", "HEAD", filepath.Join(repo, "deploy"))
			Expect(code).To(Equal(0), out)

			out, code = runOffline(ctx, "", "plan", "--base", "HEAD", filepath.Join(repo, "deploy"))
			Expect(code).To(Equal(0), out)
			Expect(out).To(ContainSubstring("Metric faithfulness: update: spec.description\n"))
			Expect(out).To(ContainSubstring("TestcaseDeletion drop-stale: unchanged\n"))
			Expect(out).To(ContainSubstring("TestcaseDeletion drop-more: delete\n"))
		})

		It("checks a single file against its version at the revision", func(ctx SpecContext) {
			path := writeManifest(repo, "deploy/metrics.yaml", edit(metricYAML, "proj-42", "proj-43"))
			_, code := runOffline(ctx, "", "validate", "--base", "HEAD", path)
			Expect(code).To(Equal(1))
		})

		It("exits 2 for a revision that does not exist", func(ctx SpecContext) {
			_, code := runOffline(ctx, "", "validate", "--base", "no-such-ref", repo)
			Expect(code).To(Equal(2))
		})
	})
})
