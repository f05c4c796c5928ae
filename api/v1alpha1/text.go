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

package v1alpha1

import (
	"regexp"
	"unicode/utf8"
)

// The one definition of the characters a tenant's free text may hold. The
// CRDs hold it as the CEL rules of LineText and Text (kept equal to the
// patterns below by a test), and the REST server's decoder applies it with
// ValidLineText and ValidText: no control character (C0, DEL, C1) and no
// Unicode non-character (U+FDD0..U+FDEF and the last two code points of
// every plane). Such characters are refused because YAML cannot carry them:
// one of them in one object breaks `kubectl get -A -o yaml` for every
// namespace. Multi-line text keeps tab, line feed and carriage return.
//
// A CEL rule, not an OpenAPI pattern: the API server answers a pattern
// with the whole pattern, hundreds of characters; a rule with its message.
// Each field keeps its own maxLength, which bounds the rule's cost.

// LineText is single-line free text (a Metric's name): no control
// characters, line breaks and tabs included, and no Unicode
// non-characters.
// +kubebuilder:validation:XValidation:rule=`self.matches(r'^[^\x00-\x1F\x7F-\x9F\x{FDD0}-\x{FDEF}\x{FFFE}\x{FFFF}\x{1FFFE}\x{1FFFF}\x{2FFFE}\x{2FFFF}\x{3FFFE}\x{3FFFF}\x{4FFFE}\x{4FFFF}\x{5FFFE}\x{5FFFF}\x{6FFFE}\x{6FFFF}\x{7FFFE}\x{7FFFF}\x{8FFFE}\x{8FFFF}\x{9FFFE}\x{9FFFF}\x{AFFFE}\x{AFFFF}\x{BFFFE}\x{BFFFF}\x{CFFFE}\x{CFFFF}\x{DFFFE}\x{DFFFF}\x{EFFFE}\x{EFFFF}\x{FFFFE}\x{FFFFF}\x{10FFFE}\x{10FFFF}]*$')`,message="must not contain control characters or Unicode non-characters (line breaks and tabs included)",reason=FieldValueInvalid
type LineText string

// Text is multi-line free text (descriptions, guidelines, prompt
// templates): no control characters but tab, line feed and carriage
// return, and no Unicode non-characters.
// +kubebuilder:validation:XValidation:rule=`self.matches(r'^[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\x{FDD0}-\x{FDEF}\x{FFFE}\x{FFFF}\x{1FFFE}\x{1FFFF}\x{2FFFE}\x{2FFFF}\x{3FFFE}\x{3FFFF}\x{4FFFE}\x{4FFFF}\x{5FFFE}\x{5FFFF}\x{6FFFE}\x{6FFFF}\x{7FFFE}\x{7FFFF}\x{8FFFE}\x{8FFFF}\x{9FFFE}\x{9FFFF}\x{AFFFE}\x{AFFFF}\x{BFFFE}\x{BFFFF}\x{CFFFE}\x{CFFFF}\x{DFFFE}\x{DFFFF}\x{EFFFE}\x{EFFFF}\x{FFFFE}\x{FFFFF}\x{10FFFE}\x{10FFFF}]*$')`,message="must not contain control characters or Unicode non-characters (tab, line feed and carriage return are allowed)",reason=FieldValueInvalid
type Text string

const (
	// LineTextPattern is the pattern of single-line text (names).
	LineTextPattern = `^[^\x00-\x1F\x7F-\x9F` + nonCharacters + `]*$`
	// TextPattern is the pattern of multi-line text (descriptions,
	// guidelines, prompt templates).
	TextPattern = `^[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F` + nonCharacters + `]*$`

	nonCharacters = `\x{FDD0}-\x{FDEF}\x{FFFE}\x{FFFF}` +
		`\x{1FFFE}\x{1FFFF}\x{2FFFE}\x{2FFFF}\x{3FFFE}\x{3FFFF}\x{4FFFE}\x{4FFFF}` +
		`\x{5FFFE}\x{5FFFF}\x{6FFFE}\x{6FFFF}\x{7FFFE}\x{7FFFF}\x{8FFFE}\x{8FFFF}` +
		`\x{9FFFE}\x{9FFFF}\x{AFFFE}\x{AFFFF}\x{BFFFE}\x{BFFFF}\x{CFFFE}\x{CFFFF}` +
		`\x{DFFFE}\x{DFFFF}\x{EFFFE}\x{EFFFF}\x{FFFFE}\x{FFFFF}\x{10FFFE}\x{10FFFF}`

	// ResourceIDPattern and ResourceIDMaxLength are the rules of ResourceID,
	// which remote Metric ids follow too.
	ResourceIDPattern   = `^[A-Za-z0-9][A-Za-z0-9._:-]*$`
	ResourceIDMaxLength = 128

	// ModelNamePattern is the pattern of evalModelName (at most 128 bytes).
	ModelNamePattern = `^[A-Za-z0-9][A-Za-z0-9._:/@-]*$`

	// LineTextRule and TextRule say in words what LineTextPattern and
	// TextPattern refuse: the API server's message (the CEL rules of
	// LineText and Text) and the REST server's.
	LineTextRule = "must not contain control characters or Unicode non-characters (line breaks and tabs included)"
	TextRule     = "must not contain control characters or Unicode non-characters (tab, line feed and carriage return are allowed)"
)

var (
	resourceID = regexp.MustCompile(ResourceIDPattern)
	modelName  = regexp.MustCompile(ModelNamePattern)
)

// ValidModelName reports whether s is a valid evalModelName.
func ValidModelName(s string) bool { return len(s) <= 128 && modelName.MatchString(s) }

// ValidLineText reports whether s is valid UTF-8 that LineTextPattern allows.
func ValidLineText(s string) bool { return validText(s, false) }

// ValidText reports whether s is valid UTF-8 that TextPattern allows.
func ValidText(s string) bool { return validText(s, true) }

// validText applies LineTextPattern, or TextPattern when multiLine is set,
// rune by rune. The REST server checks every text it decodes and every
// Metric text a page serves: the regular expressions read 36 MB/s, this 460
// (mixed scripts), and were a tenth of the manager's CPU under a flood of
// list pages. A test holds this equal to the patterns on every code point.
func validText(s string, multiLine bool) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			control := c < 0x20 || c == 0x7F
			kept := c == '\t' || c == '\n' || c == '\r' // in multi-line text
			if control && (!multiLine || !kept) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 || r <= 0x9F || r >= 0xFDD0 && r <= 0xFDEF || r&0xFFFE == 0xFFFE {
			return false // invalid UTF-8, C1, or a non-character
		}
		i += size
	}
	return true
}

// ValidResourceID reports whether id is a valid ResourceID: a remote id
// that may be recorded, looked up and served.
func ValidResourceID(id string) bool {
	return len(id) <= ResourceIDMaxLength && resourceID.MatchString(id)
}
