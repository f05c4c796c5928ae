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

package convert

import (
	"bytes"
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// defaultSchema is the jsonSchema of a Testset whose spec names none: the
// service requires one, and any object conforms to it.
var defaultSchema = json.RawMessage(`{"type":"object"}`)

// TestsetRequestFor is the create request of the Testset s asks for.
func TestsetRequestFor(s *v1alpha1.TestsetSpec) evalapi.TestsetRequest {
	return evalapi.TestsetRequest{
		Name:         string(s.Name),
		Description:  string(s.Description),
		JSONSchema:   schemaOf(s),
		FieldMapping: fieldMappingOf(s.FieldMapping),
	}
}

// TestsetUpdateFor is the PATCH that makes a Testset what s asks for.
func TestsetUpdateFor(s *v1alpha1.TestsetSpec) evalapi.TestsetUpdate {
	req := TestsetRequestFor(s)
	return evalapi.TestsetUpdate{Name: &req.Name, Description: &req.Description,
		JSONSchema: req.JSONSchema, FieldMapping: &req.FieldMapping}
}

// TestsetMatches reports whether the service's Testset is what s asks for:
// name, description, field mapping (as sets) and, when s names one, the
// JSON Schema (as JSON, whatever its spacing and key order).
func TestsetMatches(t evalapi.Testset, s *v1alpha1.TestsetSpec) bool {
	want := fieldMappingOf(s.FieldMapping)
	return t.Name == string(s.Name) && t.Description == string(s.Description) &&
		sameSet(t.FieldMapping.Inputs, want.Inputs) && sameSet(t.FieldMapping.Expected, want.Expected) &&
		sameSet(t.FieldMapping.Metadata, want.Metadata) &&
		(s.JSONSchema == nil || SameJSON(t.JSONSchema, s.JSONSchema.Raw))
}

func schemaOf(s *v1alpha1.TestsetSpec) json.RawMessage {
	if s.JSONSchema == nil || len(s.JSONSchema.Raw) == 0 {
		return defaultSchema
	}
	return s.JSONSchema.Raw
}

func fieldMappingOf(m v1alpha1.TestsetFieldMapping) evalapi.FieldMapping {
	names := func(fs []v1alpha1.FieldName) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = string(f)
		}
		return out
	}
	return evalapi.FieldMapping{Inputs: names(m.Inputs), Expected: names(m.Expected), Metadata: names(m.Metadata)}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// Canonical is data, a JSON value, with its object keys sorted and no
// spacing, numbers kept as written: two testcases hold the same data when
// their canonical forms are equal. Data that is not JSON is returned as is.
func Canonical(data []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return data
	}
	out, err := json.Marshal(v)
	if err != nil {
		return data
	}
	return out
}

// SameJSON reports whether a and b are the same JSON value.
func SameJSON(a, b []byte) bool { return bytes.Equal(Canonical(a), Canonical(b)) }

// TestsetResponseOf is t as the service answers it: its remote id and its
// own fields, the JSON Schema defaulted as the create sends it.
func TestsetResponseOf(t *v1alpha1.Testset) evalapi.Testset {
	req := TestsetRequestFor(&t.Spec)
	return evalapi.Testset{ID: t.RecordedID(), Name: req.Name, Description: req.Description,
		JSONSchema: req.JSONSchema, FieldMapping: req.FieldMapping}
}

// ApplyTestsetUpdate sets the fields u sends in s; a field u leaves out
// keeps its value. A create's request is an update that sends every field.
func ApplyTestsetUpdate(s *v1alpha1.TestsetSpec, u evalapi.TestsetUpdate) {
	if u.Name != nil {
		s.Name = v1alpha1.LineText(*u.Name)
	}
	if u.Description != nil {
		s.Description = v1alpha1.Text(*u.Description)
	}
	if u.JSONSchema != nil {
		s.JSONSchema = &runtime.RawExtension{Raw: slices.Clone(u.JSONSchema)}
	}
	if m := u.FieldMapping; m != nil {
		s.FieldMapping = v1alpha1.TestsetFieldMapping{
			Inputs: fieldNames(m.Inputs), Expected: fieldNames(m.Expected), Metadata: fieldNames(m.Metadata)}
	}
}

func fieldNames(names []string) []v1alpha1.FieldName {
	if len(names) == 0 {
		return nil
	}
	out := make([]v1alpha1.FieldName, len(names))
	for i, n := range names {
		out[i] = v1alpha1.FieldName(n)
	}
	return out
}
