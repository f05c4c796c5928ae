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
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/config/crd"
	"github.com/eval-operator/eval-operator/test/framework"
)

// A page that says "the three CRDs" after a fourth kind was added is wrong
// in a way no reader can tell. Every page that states how many kinds there
// are must state the number of CRDs the operator installs.
var _ = Describe("The number of kinds the docs name", func() {
	It("is the number of CRDs in config/crd/bases, which are the kinds the scheme registers", func() {
		kinds := crdKinds()
		Expect(kinds).To(ConsistOf(schemeKinds()), "config/crd/bases and the scheme disagree: run make manifests")

		var wrong []string
		for _, page := range docPages() {
			for _, c := range kindCounts(page) {
				if c.count != len(kinds) {
					wrong = append(wrong, fmt.Sprintf("%s:%d: %q", c.file, c.line, c.phrase))
				}
			}
		}
		Expect(wrong).To(BeEmpty(), "these pages name a number of kinds other than the %d CRDs (%s); "+
			"say %d, or name the kinds meant", len(kinds), strings.Join(kinds, ", "), len(kinds))
	})

	It("finds the phrases it is meant to find, and only those", func() {
		counts := func(text string) []int {
			found := countsIn("page.md", text)
			out := make([]int, 0, len(found))
			for _, c := range found {
				out = append(out, c.count)
			}
			return out
		}
		Expect(counts("Every install creates the three CRDs; the five kinds; the 5 custom resources.")).
			To(Equal([]int{3, 5, 5}))
		Expect(counts("Four\nCustomResourceDefinitions, seven custom resource definitions, 2 CRD kinds")).
			To(Equal([]int{4, 7, 2}))
		Expect(counts("the two deletion kinds; one kind of request; the one CRD metrics; 2 connection kinds")).
			To(BeEmpty(), "a named subset, or one, is not a count of all kinds")
		found := countsIn("docs/a.md", "line one\nline two has six kinds")
		Expect(found).To(HaveLen(1))
		Expect(fmt.Sprintf("%s:%d: %s", found[0].file, found[0].line, found[0].phrase)).To(Equal("docs/a.md:2: six kinds"))
	})
})

// crdKinds returns the kinds of the CRDs `make manifests` writes.
func crdKinds() []string {
	GinkgoHelper()
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	Expect(err).NotTo(HaveOccurred())
	kinds := make([]string, 0, len(files))
	for _, f := range files {
		data, err := crd.Bases.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		var def apiextensionsv1.CustomResourceDefinition
		Expect(yaml.Unmarshal(data, &def)).To(Succeed())
		kinds = append(kinds, def.Spec.Names.Kind)
	}
	return kinds
}

// schemeKinds returns the kinds the API package registers: the types of
// the group version that have a list type.
func schemeKinds() []string {
	GinkgoHelper()
	scheme := runtime.NewScheme()
	Expect(v1alpha1.AddToScheme(scheme)).To(Succeed())
	known := scheme.KnownTypes(v1alpha1.GroupVersion)
	var kinds []string
	for kind := range known {
		if _, listed := known[kind+"List"]; listed && !strings.HasSuffix(kind, "List") {
			kinds = append(kinds, kind)
		}
	}
	return kinds
}

// docPages returns README.md and every page under docs/.
func docPages() []string {
	GinkgoHelper()
	root := framework.RepoRoot()
	pages := []string{filepath.Join(root, "README.md")}
	Expect(filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})).To(Succeed())
	return pages
}

// kindCount is one phrase of a page that says how many kinds there are.
type kindCount struct {
	file   string
	line   int
	phrase string
	count  int
}

// countPhrase matches a number, as a word or in digits, followed by a noun
// for the operator's kinds, with only words that qualify the noun itself
// between them ("five kinds", "the 5 custom resources", "three CRDs").
// A number with another word between ("two deletion kinds") names a subset
// and is not matched; neither is one ("one kind of request", "the one CRD
// metrics...").
var countPhrase = regexp.MustCompile(`(?i)\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|[0-9]+)` +
	`\s+((?:(?:custom|resource|crd|api)\s+)*` +
	`(?:kinds?|crds?|custom\s*resources?|custom\s*resource\s+definitions?|customresourcedefinitions?|resource\s+types?))\b`)

var numberWords = map[string]int{
	"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}

// kindCounts returns the phrases of the page at path that count kinds.
func kindCounts(path string) []kindCount {
	GinkgoHelper()
	text, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	rel, err := filepath.Rel(framework.RepoRoot(), path)
	Expect(err).NotTo(HaveOccurred())
	return countsIn(rel, string(text))
}

func countsIn(file, text string) []kindCount {
	var out []kindCount
	for _, m := range countPhrase.FindAllStringSubmatchIndex(text, -1) {
		word := strings.ToLower(text[m[2]:m[3]])
		n, ok := numberWords[word]
		if !ok {
			n, _ = strconv.Atoi(word)
		}
		if n < 2 {
			continue
		}
		out = append(out, kindCount{
			file:   file,
			line:   1 + strings.Count(text[:m[0]], "\n"),
			phrase: strings.Join(strings.Fields(text[m[0]:m[1]]), " "),
			count:  n,
		})
	}
	return out
}
