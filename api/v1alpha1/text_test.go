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
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/config/crd"
)

// metricSchema returns the Metric CRD's schema as it is installed.
func metricSchema() apiextensionsv1.JSONSchemaProps {
	data, err := crd.Bases.ReadFile("bases/evaluation.eval-operator.dev_metrics.yaml")
	Expect(err).NotTo(HaveOccurred())
	var def apiextensionsv1.CustomResourceDefinition
	Expect(yaml.Unmarshal(data, &def)).To(Succeed())
	return *def.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// The CRD markers repeat the patterns as text; these specs keep them equal
// to the constants the REST server's decoder checks with.
var _ = DescribeTable("the Metric CRD's text patterns are the API package's",
	func(path, want string) {
		props := metricSchema()
		for _, p := range strings.Split(path, ".") {
			props = props.Properties[p]
		}
		Expect(props.Pattern).To(Equal(want), path)
	},
	Entry(nil, "spec.name", v1alpha1.LineTextPattern),
	Entry(nil, "spec.description", v1alpha1.TextPattern),
	Entry(nil, "spec.guidelines", v1alpha1.TextPattern),
	Entry(nil, "spec.promptTemplate", v1alpha1.TextPattern),
	Entry(nil, "status.description", v1alpha1.TextPattern),
	Entry(nil, "status.guidelines", v1alpha1.TextPattern),
	Entry(nil, "spec.projectId", v1alpha1.ResourceIDPattern),
	Entry(nil, "spec.evalModelName", v1alpha1.ModelNamePattern),
)

var _ = Describe("Metric text", func() {
	refused := func(field, pattern string) func(r rune) {
		return func(r rune) {
			value := "ok" + string(r) + "ok"
			// The API server only: kubectl eval validate reads YAML, which
			// cannot carry most of these characters in the first place.
			content := aiInt()
			set(value, "spec", field)(content)
			Expect(k8sClient.Create(ctx, object(content))).To(matchAdmission([]string{
				"spec." + field + ": Invalid value: " + strconv.Quote(value) + ": spec." + field + " in body should match '" + pattern + "'",
			}))
		}
	}
	DescribeTable("a name holding a control character or a non-character is refused", refused("name", v1alpha1.LineTextPattern),
		Entry("NUL", '\x00'), Entry("line feed", '\n'), Entry("tab", '\t'), Entry("ESC", '\x1b'),
		Entry("DEL", '\x7f'), Entry("NEL (C1)", '\u0085'), Entry("C1 0x9F", '\u009f'),
		Entry("U+FDD0", '\ufdd0'), Entry("U+FFFE", '\ufffe'), Entry("U+FFFF", '\uffff'), Entry("U+10FFFF", '\U0010ffff'),
	)
	DescribeTable("multi-line text holding a control character or a non-character is refused", func(field string, r rune) {
		refused(field, v1alpha1.TextPattern)(r)
	},
		Entry("guidelines with DEL", "guidelines", '\x7f'),
		Entry("guidelines with U+FFFF", "guidelines", '\uffff'),
		Entry("description with C1 0x80", "description", '\u0080'),
		Entry("description with U+1FFFE", "description", '\U0001fffe'),
		Entry("promptTemplate with a form feed", "promptTemplate", '\f'),
		Entry("promptTemplate with U+FDEF", "promptTemplate", '\ufdef'),
	)
	DescribeTable("text that YAML carries is accepted", func(field, value string) {
		expectCreate(aiInt, set(value, "spec", field), nil)
	},
		Entry("a name in any script", "name", "Treue · 忠実 · вірність 🙂"),
		Entry("guidelines over several lines, with tabs", "guidelines", "line one\n\tline two\r\nline three"),
		Entry("a promptTemplate with U+FFFD and U+FEFF", "promptTemplate", "{{outputs.response}} \ufffd\ufeff"),
	)
	It("refuses status text that the service could not have stored", func() {
		obj := object(aiFloat())
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		set("ok\x7fok", "status", "guidelines")(obj.Object)
		Expect(k8sClient.Status().Update(ctx, obj)).To(MatchError(ContainSubstring(`status.guidelines: Invalid value: "ok\x7fok": guidelines in body should match`)))
	})
})

var _ = Describe("ValidText and ValidLineText", func() {
	It("agree with the patterns on every code point, alone and between other text", func() {
		text, line := regexp.MustCompile(v1alpha1.TextPattern), regexp.MustCompile(v1alpha1.LineTextPattern)
		var mismatches []string
		for r := rune(0); r <= utf8.MaxRune; r++ {
			if !utf8.ValidRune(r) {
				continue // a surrogate: no valid UTF-8 holds one
			}
			for _, s := range []string{string(r), "a" + string(r) + "é"} {
				if v1alpha1.ValidText(s) != text.MatchString(s) || v1alpha1.ValidLineText(s) != line.MatchString(s) {
					mismatches = append(mismatches, strconv.QuoteToASCII(s))
				}
			}
		}
		Expect(mismatches).To(BeEmpty())
	})
	It("refuse what is not UTF-8, which the patterns would read as U+FFFD", func() {
		for _, s := range []string{"caf\xe9", "\xff", "ok\xc3", "\xed\xa0\x80" /* a surrogate */} {
			Expect(v1alpha1.ValidText(s)).To(BeFalse(), "%q", s)
			Expect(v1alpha1.ValidLineText(s)).To(BeFalse(), "%q", s)
		}
		Expect(v1alpha1.ValidText("")).To(BeTrue())
	})
})
