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

// Package judge scores records with an OpenAI-compatible chat-completions
// endpoint (vLLM, KServe, Ollama, a hosted one): a Metric's promptTemplate
// filled with a record, the answer read for the Metric's output type. It
// knows nothing of the cluster: a caller gives it the URL, a key reader and
// the limits, and counts what it answers.
package judge

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Bounds on what a tenant's record puts into a prompt: a value is cut to
// MaxValueBytes where it is substituted, and the whole user message to
// MaxPromptBytes, so a huge record costs a bounded request.
const (
	MaxValueBytes  = 8 << 10
	MaxPromptBytes = 32 << 10
)

// Record is what a prompt is filled with: a record's inputs, outputs and
// expected values, each a JSON object (or nil).
type Record struct {
	Inputs, Outputs, Expected json.RawMessage
}

// placeholder matches {{ name }}: a name is letters, digits, _, - and dots.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}`)

// guidelinesName is the placeholder the service fills with a Metric's
// guidelines.
const guidelinesName = "gradingInstructionsAndExamples"

// Render fills template as the service does: {{inputs.<field>}},
// {{outputs.<field>}} and {{expected.<field>}} (nested fields by dots) with
// that value (a string as it is, anything else as JSON), {{allInputs}} and
// {{all.inputs}} / {{all.outputs}} / {{all.expected}} with every field as
// "name: value" lines, {{gradingInstructionsAndExamples}} with guidelines;
// any other name with nothing, as Jinja renders an undefined one.
// usedGuidelines reports whether the template placed the guidelines.
func Render(template, guidelines string, rec Record) (prompt string, usedGuidelines bool) {
	parts := map[string]json.RawMessage{"inputs": rec.Inputs, "outputs": rec.Outputs, "expected": rec.Expected}
	out := placeholder.ReplaceAllStringFunc(template, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		switch name {
		case guidelinesName:
			usedGuidelines = true
			return cut(guidelines, MaxValueBytes)
		case "allInputs", "all.inputs":
			return allOf(rec.Inputs)
		case "all.outputs":
			return allOf(rec.Outputs)
		case "all.expected":
			return allOf(rec.Expected)
		}
		part, path, _ := strings.Cut(name, ".")
		raw, ok := parts[part]
		if !ok || path == "" {
			return ""
		}
		return cut(text(lookup(raw, strings.Split(path, "."))), MaxValueBytes)
	})
	return cut(out, MaxPromptBytes), usedGuidelines
}

// lookup walks path into the JSON object raw; nil when it is not there.
func lookup(raw json.RawMessage, path []string) json.RawMessage {
	for _, field := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		raw = obj[field]
	}
	return raw
}

// text is a JSON value as a prompt shows it: a string unquoted, anything
// else as its JSON, nothing for a missing value or null.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if v := strings.TrimSpace(string(raw)); v != "null" {
		return v
	}
	return ""
}

// allOf is every field of the JSON object raw as "name: value" lines,
// sorted by name so a prompt does not change between two asks.
func allOf(raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	names := make([]string, 0, len(obj))
	for n := range obj {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + ": " + cut(text(obj[n]), MaxValueBytes) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cut is s in at most limit bytes, on a character boundary, marked where cut.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const marker = " [...]"
	n := limit - len(marker)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + marker
}

// Shrink is the JSON object raw in about limit bytes: raw itself when it
// fits, else its fields with each value cut to MaxValueBytes of text, as
// many as fit, so that what a prompt can use of a huge record is kept.
func Shrink(raw json.RawMessage, limit int) json.RawMessage {
	if len(raw) <= limit {
		return raw
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return json.RawMessage("{}")
	}
	names := make([]string, 0, len(obj))
	for n := range obj {
		names = append(names, n)
	}
	sort.Strings(names)
	kept, size := map[string]string{}, 2
	for _, n := range names {
		v := cut(text(obj[n]), MaxValueBytes)
		if size += len(n) + len(v) + 8; size > limit {
			break
		}
		kept[n] = v
	}
	out, _ := json.Marshal(kept)
	return out
}
