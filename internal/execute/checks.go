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

package execute

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CheckKind is what a check compares.
type CheckKind string

// The kinds of check.
const (
	// CheckExact: the output equals the expected value (as JSON values).
	CheckExact CheckKind = "exact"
	// CheckContains: the output (a string) contains the expected string, or
	// every string of an expected list.
	CheckContains CheckKind = "contains"
	// CheckRegex: the output (a string) matches the expected pattern.
	CheckRegex CheckKind = "regex"
	// CheckJSONSchema: the output is valid against the expected schema.
	CheckJSONSchema CheckKind = "jsonschema"
	// CheckNumber: the output is a number within a tolerance of the
	// expected one.
	CheckNumber CheckKind = "number"
	// CheckLatency: the system answered within a bound.
	CheckLatency CheckKind = "latency"
)

// Check scores one Metric of the run on each record: pass or fail.
type Check struct {
	// Metric is the Metric's name (or id) on the service.
	Metric string
	Kind   CheckKind
	// Field is the expected value's key; "" means the only key of the
	// testcase's expected object.
	Field string
	// pattern and schema are literal forms, compiled once.
	pattern *regexp.Regexp
	schema  *jsonschema.Schema
	// Tolerance is CheckNumber's absolute tolerance.
	Tolerance float64
	// MaxLatency is CheckLatency's bound.
	MaxLatency time.Duration
}

// Limits of what a check compiles from a testcase or the command line.
const (
	maxPatternBytes = 4 << 10
	maxSchemaBytes  = 64 << 10
)

// ParseCheck parses METRIC=KIND[:ARG...]:
//
//	correct=exact[:FIELD]           output == expected.FIELD
//	mentions=contains[:FIELD]       output contains expected.FIELD (a string, or each of a list)
//	format=regex:FIELD | regex:=RE  output matches expected.FIELD, or RE
//	shape=jsonschema:FIELD | jsonschema:=SCHEMA
//	close=number:[FIELD]:TOLERANCE  |output - expected.FIELD| <= TOLERANCE
//	fast=latency:DURATION           the answer came within DURATION
func ParseCheck(s string) (Check, error) {
	metric, spec, ok := strings.Cut(s, "=")
	if !ok || metric == "" {
		return Check{}, fmt.Errorf("check %q: want METRIC=KIND[:ARG], e.g. correct=exact:answer", s)
	}
	kind, arg, _ := strings.Cut(spec, ":")
	c := Check{Metric: metric, Kind: CheckKind(kind)}
	parse, ok := parsers[c.Kind]
	if !ok {
		return Check{}, fmt.Errorf("check %q: the kind must be one of exact, contains, regex, jsonschema, number or latency", s)
	}
	if err := parse(&c, arg); err != nil {
		return Check{}, fmt.Errorf("check %q: %w", s, err)
	}
	return c, nil
}

// parsers read each kind's argument into a Check.
var parsers = map[CheckKind]func(c *Check, arg string) error{
	CheckExact:    parseField,
	CheckContains: parseField,
	CheckRegex: func(c *Check, arg string) error {
		lit, ok := strings.CutPrefix(arg, "=")
		if !ok {
			return parseRequiredField(c, arg, "pattern", "regex:=PATTERN")
		}
		var err error
		c.pattern, err = compilePattern(lit)
		return err
	},
	CheckJSONSchema: func(c *Check, arg string) error {
		lit, ok := strings.CutPrefix(arg, "=")
		if !ok {
			return parseRequiredField(c, arg, "schema", "jsonschema:=SCHEMA")
		}
		var err error
		c.schema, err = compileSchema([]byte(lit))
		return err
	},
	CheckNumber: func(c *Check, arg string) error {
		field, tol, found := strings.Cut(arg, ":")
		c.Field = field
		var err error
		if c.Tolerance, err = strconv.ParseFloat(tol, 64); !found || err != nil || c.Tolerance < 0 ||
			math.IsNaN(c.Tolerance) || math.IsInf(c.Tolerance, 0) {
			return fmt.Errorf("want number:[FIELD]:TOLERANCE with a tolerance of 0 or more")
		}
		return nil
	},
	CheckLatency: func(c *Check, arg string) error {
		var err error
		if c.MaxLatency, err = time.ParseDuration(arg); err != nil || c.MaxLatency <= 0 {
			return fmt.Errorf("want latency:DURATION, e.g. latency:2s")
		}
		return nil
	},
}

func parseField(c *Check, arg string) error {
	c.Field = arg
	return nil
}

func parseRequiredField(c *Check, arg, what, literal string) error {
	if arg == "" {
		return fmt.Errorf("name the expected field holding the %s, or give one as %s", what, literal)
	}
	c.Field = arg
	return nil
}

func compilePattern(p string) (*regexp.Regexp, error) {
	if len(p) > maxPatternBytes {
		return nil, fmt.Errorf("the pattern is over %d bytes", maxPatternBytes)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("the pattern: %w", err)
	}
	return re, nil
}

// compileSchema compiles a JSON schema that may reference nothing outside
// itself (no file or URL is ever loaded).
func compileSchema(raw []byte) (*jsonschema.Schema, error) {
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("the schema is over %d bytes", maxSchemaBytes)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource("schema.json", doc); err != nil {
		return nil, fmt.Errorf("the schema: %w", err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		return nil, fmt.Errorf("the schema: %w", err)
	}
	return s, nil
}

// Judge is c's verdict on one record: pass, and why, in a line. A failed
// call (callErr set) fails every check.
func (c Check) Judge(output, expected json.RawMessage, latency time.Duration, callErr error) (bool, string) {
	if callErr != nil {
		return false, "the system failed: " + callErr.Error()
	}
	if c.Kind == CheckLatency {
		return latency <= c.MaxLatency, fmt.Sprintf("answered in %s, bound %s", latency.Round(time.Millisecond), c.MaxLatency)
	}
	var out any
	if err := json.Unmarshal(output, &out); err != nil {
		return false, "the output is not JSON"
	}
	want, err := c.expected(expected)
	if err != nil && c.pattern == nil && c.schema == nil {
		return false, err.Error()
	}
	switch c.Kind {
	case CheckExact:
		return reflect.DeepEqual(out, want), fmt.Sprintf("output %s, expected %s", brief(out), brief(want))
	case CheckContains:
		return contains(out, want)
	case CheckRegex:
		return c.matches(out, want)
	case CheckJSONSchema:
		return c.valid(output, want)
	default: // CheckNumber
		return c.near(out, want)
	}
}

// expected is the expected value c compares with.
func (c Check) expected(raw json.RawMessage) (any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("the testcase's expected values are not an object")
	}
	field := c.Field
	if field == "" {
		if len(m) != 1 {
			return nil, fmt.Errorf("the check names no expected field and the testcase expects %d", len(m))
		}
		for k := range m {
			field = k
		}
	}
	v, ok := m[field]
	if !ok {
		return nil, fmt.Errorf("the testcase expects no %q", field)
	}
	return v, nil
}

func contains(out, want any) (bool, string) {
	s, ok := out.(string)
	if !ok {
		return false, "the output is not a string"
	}
	var wants []string
	switch w := want.(type) {
	case string:
		wants = []string{w}
	case []any:
		for _, x := range w {
			if xs, ok := x.(string); ok {
				wants = append(wants, xs)
			}
		}
	}
	if len(wants) == 0 {
		return false, "the expected value is not a string or a list of strings"
	}
	if i := slices.IndexFunc(wants, func(w string) bool { return !strings.Contains(s, w) }); i >= 0 {
		return false, fmt.Sprintf("the output lacks %s", brief(wants[i]))
	}
	return true, fmt.Sprintf("the output contains %d expected string(s)", len(wants))
}

func (c Check) matches(out, want any) (bool, string) {
	re := c.pattern
	if re == nil {
		p, ok := want.(string)
		if !ok {
			return false, "the expected pattern is not a string"
		}
		var err error
		if re, err = compilePattern(p); err != nil {
			return false, "the expected " + err.Error()
		}
	}
	s, ok := out.(string)
	if !ok {
		return false, "the output is not a string"
	}
	if re.MatchString(s) {
		return true, "the output matches " + brief(re.String())
	}
	return false, "the output does not match " + brief(re.String())
}

func (c Check) valid(output json.RawMessage, want any) (bool, string) {
	sch := c.schema
	if sch == nil {
		raw, err := json.Marshal(want)
		if err == nil {
			sch, err = compileSchema(raw)
		}
		if err != nil {
			return false, "the expected " + err.Error()
		}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(output))
	if err != nil {
		return false, "the output is not JSON"
	}
	if err := sch.Validate(v); err != nil {
		return false, "the output is not valid: " + brief(err.Error())
	}
	return true, "the output is valid against the schema"
}

func (c Check) near(out, want any) (bool, string) {
	got, ok1 := number(out)
	exp, ok2 := number(want)
	if !ok1 || !ok2 {
		return false, fmt.Sprintf("output %s and expected %s are not both numbers", brief(out), brief(want))
	}
	return math.Abs(got-exp) <= c.Tolerance, fmt.Sprintf("output %g, expected %g ± %g", got, exp, c.Tolerance)
}

// number reads a JSON number, or a string holding one (systems often
// answer numbers as text).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil && !math.IsNaN(f)
	}
	return 0, false
}

// maxBrief bounds a value quoted in a reason.
const maxBrief = 120

// brief is v as short JSON, for reasons.
func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > maxBrief {
		return string(b[:maxBrief]) + "…"
	}
	return string(b)
}
