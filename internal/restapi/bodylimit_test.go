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

package restapi

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp/syntax"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

// Bytes a JSON encoder may spend on one character of a string: an ASCII
// character that needs no escaping takes one; any other character at most
// twelve (one outside the Basic Multilingual Plane, written as a surrogate
// pair of \uXXXX escapes, as Python's json.dumps does by default).
const (
	plainCharBytes   = 1
	escapedCharBytes = 12
	// numberBytes is the longest JSON number Go writes for a float64,
	// -1.7976931348623157e+308, rounded up.
	numberBytes = 32
)

// jsonSchema is the part of a CRD's OpenAPI schema that bounds a JSON value.
type jsonSchema struct {
	Type                 string                `json:"type"`
	Properties           map[string]jsonSchema `json:"properties"`
	AdditionalProperties any                   `json:"additionalProperties"`
	Items                *jsonSchema           `json:"items"`
	MaxItems             *int64                `json:"maxItems"`
	MaxLength            *int64                `json:"maxLength"`
	Pattern              string                `json:"pattern"`
	Enum                 []string              `json:"enum"`
}

// crd is the part of a CRD that holds its schemas.
type crd struct {
	Spec struct {
		Names    struct{ Kind string } `json:"names"`
		Versions []struct {
			Schema struct {
				OpenAPIV3Schema jsonSchema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// jsonBound is the size of the largest JSON value s admits, or an error
// when s leaves it unbounded.
func jsonBound(s jsonSchema, path string) (int64, error) {
	switch s.Type {
	case "object":
		if s.AdditionalProperties != nil {
			return 0, fmt.Errorf("%s: a map has no bound", path)
		}
		total := int64(2) // {}
		for name, prop := range s.Properties {
			b, err := jsonBound(prop, path+"."+name)
			if err != nil {
				return 0, err
			}
			total += int64(len(name)) + 3 + b + 1 // "name": value,
		}
		return total, nil
	case "array":
		if s.MaxItems == nil || s.Items == nil {
			return 0, fmt.Errorf("%s: no maxItems", path)
		}
		item, err := jsonBound(*s.Items, path+"[]")
		if err != nil {
			return 0, err
		}
		return 2 + *s.MaxItems*(item+1), nil
	case "string":
		return stringBound(s, path)
	case "number", "integer":
		return numberBytes, nil
	case "boolean":
		return len64("false"), nil
	}
	return 0, fmt.Errorf("%s: type %q has no bound", path, s.Type)
}

// stringBound is jsonBound of a string.
func stringBound(s jsonSchema, path string) (int64, error) {
	if len(s.Enum) > 0 {
		longest := 0
		for _, e := range s.Enum {
			longest = max(longest, len(e))
		}
		return 2 + int64(longest), nil
	}
	if s.MaxLength == nil {
		return 0, fmt.Errorf("%s: no maxLength", path)
	}
	perChar, err := charBytes(s.Pattern)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return 2 + *s.MaxLength*perChar, nil
}

func len64(s string) int64 { return int64(len(s)) }

// charBytes is what one character of a string matching pattern may take:
// plainCharBytes when the pattern admits only ASCII characters no encoder
// escapes, escapedCharBytes otherwise (and without a pattern).
func charBytes(pattern string) (int64, error) {
	if pattern == "" {
		return escapedCharBytes, nil
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	if onlyPlainASCII(re) {
		return plainCharBytes, nil
	}
	return escapedCharBytes, nil
}

// onlyPlainASCII reports whether every character re can match is printable
// ASCII that JSON encoders write as is (not ", \, or HTML's <, >, &).
func onlyPlainASCII(re *syntax.Regexp) bool {
	plain := func(r rune) bool { return r >= 0x20 && r < 0x7f && !strings.ContainsRune(`"\<>&`, r) }
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if !plain(r) {
				return false
			}
		}
	case syntax.OpCharClass:
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if !plain(r) {
					return false
				}
			}
		}
	}
	for _, sub := range re.Sub {
		if !onlyPlainASCII(sub) {
			return false
		}
	}
	return true
}

// restKinds are the kinds whose resources requests become.
var restKinds = map[string]bool{"Metric": true, "TestsetDeletion": true, "TestcaseDeletion": true}

// largestSpec is the largest JSON spec of the CRDs in config/crd/bases
// whose resources the server creates (restKinds). A request body holds a
// subset of its resource's spec fields, under names no longer than the
// spec's, so it is no larger.
func largestSpec() (int64, string, error) {
	paths, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "config", "crd", "bases", "*.yaml"))
	if err != nil || len(paths) == 0 {
		return 0, "", fmt.Errorf("no CRDs found: %w", err)
	}
	var largest int64
	var kind string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return 0, "", err
		}
		var c crd
		if err := yaml.Unmarshal(data, &c); err != nil {
			return 0, "", fmt.Errorf("%s: %w", p, err)
		}
		if !restKinds[c.Spec.Names.Kind] {
			continue
		}
		for _, v := range c.Spec.Versions {
			b, err := jsonBound(v.Schema.OpenAPIV3Schema.Properties["spec"], c.Spec.Names.Kind+".spec")
			if err != nil {
				return 0, "", err
			}
			if b > largest {
				largest, kind = b, c.Spec.Names.Kind
			}
		}
	}
	return largest, kind, nil
}

var _ = Describe("The body limit", func() {
	It("holds the largest valid request the CRDs admit, with a tenth to spare", func() {
		largest, kind, err := largestSpec()
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("largest valid request: %s, %d bytes; limit %d bytes\n", kind, largest, DefaultMaxBodyBytes)
		Expect(int64(DefaultMaxBodyBytes)).To(BeNumerically(">=", largest+largest/10),
			"a bound in the CRDs grew: raise DefaultMaxBodyBytes, or valid requests are answered 413")
	})

	It("admits a bulk-delete of the most ids, each of the longest length", func() {
		t := newTenant()
		ids := make([]string, 10000)
		for i := range ids {
			ids[i] = fmt.Sprintf("%0128d", i)
		}
		body := `{"ids":["` + strings.Join(ids, `","`) + `"]}`
		Expect(len(body)).To(BeNumerically(">", 1<<20), "larger than the old 1 MiB limit")
		// The impatient server answers once the TestcaseDeletion is created:
		// the body was read whole and the CRD accepted the resource.
		rep := sendTo(h.impatientURL, request{method: http.MethodPost, path: bulkDeletePath, key: t.key, body: body})
		Expect(rep.status).To(Equal(http.StatusGatewayTimeout), "body: %.300s", rep.body)
		Expect(deletionsIn(t.namespace)).To(Equal(1))
		// Deleting 10,000 testcases is not this test's business.
		Expect(h.k8s.DeleteAllOf(context.Background(), &evaluationv1alpha1.TestcaseDeletion{},
			client.InNamespace(t.namespace))).To(Succeed())
	})
})
