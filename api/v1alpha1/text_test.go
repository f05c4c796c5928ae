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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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

// schemaAt returns the property at a dotted path of the Metric's schema.
func schemaAt(path string) apiextensionsv1.JSONSchemaProps {
	props := metricSchema()
	for _, p := range strings.Split(path, ".") {
		props = props.Properties[p]
	}
	return props
}

// The CRD markers repeat the patterns as text; these specs keep them equal
// to the constants the REST server's decoder checks with.
var _ = DescribeTable("the Metric CRD's patterns are the API package's",
	func(path, want string) {
		Expect(schemaAt(path).Pattern).To(Equal(want), path)
	},
	Entry(nil, "spec.projectId", v1alpha1.ResourceIDPattern),
	Entry(nil, "spec.evalModelName", v1alpha1.ModelNamePattern),
)

// Text is checked by a CEL rule of its type (LineText, Text), whose message
// says the rule; the field keeps its own maxLength, which bounds the rule's
// cost, and no pattern, whose message would be the pattern.
var _ = DescribeTable("the Metric CRD's text rules are the API package's",
	func(path, pattern, message string, maxLength int64) {
		props := schemaAt(path)
		Expect(props.Pattern).To(BeEmpty(), path)
		Expect(props.MaxLength).To(HaveValue(Equal(maxLength)), path)
		Expect(props.XValidations).To(ConsistOf(apiextensionsv1.ValidationRule{
			Rule:    "self.matches(r'" + pattern + "')",
			Message: message,
			Reason:  ptr.To(apiextensionsv1.FieldValueInvalid),
		}), path)
	},
	Entry(nil, "spec.name", v1alpha1.LineTextPattern, v1alpha1.LineTextRule, int64(256)),
	Entry(nil, "spec.description", v1alpha1.TextPattern, v1alpha1.TextRule, int64(4096)),
	Entry(nil, "spec.guidelines", v1alpha1.TextPattern, v1alpha1.TextRule, int64(16384)),
	Entry(nil, "spec.promptTemplate", v1alpha1.TextPattern, v1alpha1.TextRule, int64(32768)),
	Entry(nil, "status.description", v1alpha1.TextPattern, v1alpha1.TextRule, int64(4096)),
	Entry(nil, "status.guidelines", v1alpha1.TextPattern, v1alpha1.TextRule, int64(16384)),
)

// The messages the API server gives for text with a character YAML cannot
// carry, written out here as a user reads them (the constants in text.go
// must say the same, and the REST server's decoder uses those).
const (
	lineTextMessage = "must not contain control characters or Unicode non-characters (line breaks and tabs included)"
	textMessage     = "must not contain control characters or Unicode non-characters (tab, line feed and carriage return are allowed)"
)

// expectTextCause asserts the one field cause a refused text gives: the
// field and the value, named, and the rule in words, not the pattern. Older
// API servers name the value's type ("string") instead of the value.
func expectTextCause(err error, field, value, message string) {
	GinkgoHelper()
	Expect(apierrors.ReasonForError(err)).To(Equal(metav1.StatusReasonInvalid), "%v", err)
	Expect(err.Error()).NotTo(ContainSubstring("should match"), "the message says the rule, not the pattern")
	if !exactMessages {
		Expect(causes(err)).To(ConsistOf(SatisfyAll(
			HaveField("Type", metav1.CauseTypeFieldValueInvalid),
			HaveField("Field", field),
			HaveField("Message", HaveSuffix(": "+message)))))
		return
	}
	Expect(causes(err)).To(Equal([]metav1.StatusCause{{
		Type:    metav1.CauseTypeFieldValueInvalid,
		Field:   field,
		Message: "Invalid value: " + strconv.Quote(value) + ": " + message,
	}}))
}

var _ = Describe("Metric text", func() {
	refused := func(field, message string) func(r rune) {
		return func(r rune) {
			value := "ok" + string(r) + "ok"
			// The API server only: kubectl eval validate reads YAML, which
			// cannot carry most of these characters in the first place.
			content := aiInt()
			set(value, "spec", field)(content)
			expectTextCause(k8sClient.Create(ctx, object(content)), "spec."+field, value, message)
		}
	}
	DescribeTable("a name holding a control character or a non-character is refused", refused("name", lineTextMessage),
		Entry("NUL", '\x00'), Entry("line feed", '\n'), Entry("tab", '\t'), Entry("ESC", '\x1b'),
		Entry("DEL", '\x7f'), Entry("NEL (C1)", '\u0085'), Entry("C1 0x9F", '\u009f'),
		Entry("U+FDD0", '\ufdd0'), Entry("U+FFFE", '\ufffe'), Entry("U+FFFF", '\uffff'), Entry("U+10FFFF", '\U0010ffff'),
	)
	DescribeTable("multi-line text holding a control character or a non-character is refused", func(field string, r rune) {
		refused(field, textMessage)(r)
	},
		Entry("guidelines with DEL", "guidelines", '\x7f'),
		Entry("guidelines with U+FFFF", "guidelines", '\uffff'),
		Entry("description with NUL", "description", '\x00'),
		Entry("description with C1 0x80", "description", '\u0080'),
		Entry("description with U+FFFE", "description", '\ufffe'),
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
		Entry("a description at its longest, in four-byte characters", "description", strings.Repeat("🙂", 4096)),
		Entry("a promptTemplate at its longest", "promptTemplate", strings.Repeat("p", 32768)),
	)
	It("refuses status text that the service could not have stored", func() {
		obj := object(aiFloat())
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		set("ok\x7fok", "status", "guidelines")(obj.Object)
		expectTextCause(k8sClient.Status().Update(ctx, obj), "status.guidelines", "ok\x7fok", textMessage)
	})
	It("says the rule with the words of the REST server's decoder", func() {
		Expect(v1alpha1.LineTextRule).To(Equal(lineTextMessage))
		Expect(v1alpha1.TextRule).To(Equal(textMessage))
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
