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

package evalapi

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Derived is tc with inputs, expected and validationErrors derived from its
// data by t's fieldMapping and jsonSchema, as the service derives them.
// The schema is checked at its top level only: required fields, and each
// property's type and enum.
func Derived(t Testset, tc Testcase) Testcase {
	var data map[string]json.RawMessage
	_ = json.Unmarshal(tc.JSONData, &data) // an object: checked on the way in
	pick := func(fields []string) json.RawMessage {
		out := map[string]json.RawMessage{}
		for _, f := range fields {
			if v, ok := data[f]; ok {
				out[f] = v
			}
		}
		b, _ := json.Marshal(out)
		return b
	}
	tc.Inputs, tc.Expected = pick(t.FieldMapping.Inputs), pick(t.FieldMapping.Expected)
	tc.ValidationErrors = validateData(t.JSONSchema, data)
	return tc
}

// validateData checks data against the top level of schema: required
// fields, and each property's type and enum. Extra fields are ignored.
func validateData(schema json.RawMessage, data map[string]json.RawMessage) []ValidationError {
	var sch struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &sch) != nil {
		return nil
	}
	var errs []ValidationError
	for _, f := range sch.Required {
		if _, ok := data[f]; !ok {
			errs = append(errs, ValidationError{Path: "/data/" + f, Message: "Required field missing"})
		}
	}
	names := make([]string, 0, len(sch.Properties))
	for name := range sch.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		raw, ok := data[name]
		if !ok {
			continue
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		p := sch.Properties[name]
		if !hasType(v, p.Type) {
			errs = append(errs, ValidationError{Path: "/data/" + name, Message: fmt.Sprintf("must be of type %v", p.Type)})
		}
		if p.Enum != nil && !slices.ContainsFunc(p.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
			errs = append(errs, ValidationError{Path: "/data/" + name, Message: "must be one of the enum values"})
		}
	}
	return errs
}

// hasType reports whether v is of the JSON Schema type t: a name, a list of
// names, or nil for any.
func hasType(v any, t any) bool {
	switch t := t.(type) {
	case nil:
		return true
	case []any:
		return slices.ContainsFunc(t, func(one any) bool { return hasType(v, one) })
	case string:
		switch t {
		case "string":
			_, ok := v.(string)
			return ok
		case "number":
			_, ok := v.(float64)
			return ok
		case "integer":
			f, ok := v.(float64)
			return ok && f == float64(int64(f))
		case "boolean":
			_, ok := v.(bool)
			return ok
		case "object":
			_, ok := v.(map[string]any)
			return ok
		case "array":
			_, ok := v.([]any)
			return ok
		case "null":
			return v == nil
		}
	}
	return true
}
