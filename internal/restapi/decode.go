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
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	kjson "sigs.k8s.io/json"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/quote"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// decodeStrict decodes exactly one JSON value into v, refusing unknown and
// duplicate fields, fields that match only case-insensitively, trailing data
// and values of the wrong JSON type. Deciding which values are valid is left
// to the CRD; this only makes sure the body means one thing. The error lists
// every problem found, each naming the field where possible.
func decodeStrict(data []byte, v any) []apierror.Field {
	if len(data) == 0 {
		return []apierror.Field{{Field: apierror.BodyField, Message: "the request body is empty; it must be a JSON object"}}
	}
	if !utf8.Valid(data) {
		// The JSON decoder would store U+FFFD in place of the bad bytes: a changed value.
		return []apierror.Field{{Field: apierror.BodyField, Message: "the request body is not valid UTF-8"}}
	}
	strictErrs, err := kjson.UnmarshalStrict(data, v)
	if err != nil {
		return []apierror.Field{decodeError(err)}
	}
	errs := make([]apierror.Field, 0, len(strictErrs))
	for _, e := range strictErrs {
		errs = append(errs, strictError(e))
	}
	return errs
}

func decodeError(err error) apierror.Field {
	if isSyntax, offset := kjson.SyntaxErrorOffset(err); isSyntax {
		return apierror.Field{Field: apierror.BodyField, Message: fmt.Sprintf("the request body is not valid JSON (at byte %d)", offset)}
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			field = apierror.BodyField
		}
		want := jsonKind(typeErr.Type)
		if want == "a number" && strings.HasPrefix(typeErr.Value, "number") {
			return apierror.Field{Field: field, Message: "must be a number within range"}
		}
		return apierror.Field{Field: field, Message: fmt.Sprintf("must be %s, not %s", want, typeErr.Value)}
	}
	return apierror.Field{Field: apierror.BodyField, Message: "the request body is not valid JSON"}
}

// strictError names the field of an unknown- or duplicate-field error. The
// error text is e.g. `unknown field "foo"`; its path is a member of its own.
func strictError(err error) apierror.Field {
	var fe kjson.FieldError
	if !errors.As(err, &fe) || fe.FieldPath() == "" {
		return apierror.Field{Field: apierror.BodyField, Message: quote.Bounded(err.Error())}
	}
	msg := err.Error()
	for _, kind := range []string{"unknown field", "duplicate field"} {
		if strings.HasPrefix(msg, kind) {
			msg = kind
		}
	}
	return apierror.Field{Field: quote.Bounded(fe.FieldPath()), Message: quote.Bounded(msg)}
}

// jsonKind names the JSON type that decodes into t, for error messages.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	default:
		return t.String()
	}
}

// decodeMetricRequest decodes the body of POST /projects/{projectId}/metrics.
func decodeMetricRequest(data []byte) (evalapi.MetricRequest, []apierror.Field) {
	var req evalapi.MetricRequest
	if errs := decodeStrict(data, &req); len(errs) > 0 {
		return req, errs
	}
	return req, requestTextErrors(req)
}

// decodeBulkDeleteRequest decodes the body of POST /testcases/bulk-delete.
func decodeBulkDeleteRequest(data []byte) (evalapi.BulkDeleteRequest, []apierror.Field) {
	var req evalapi.BulkDeleteRequest
	return req, decodeStrict(data, &req)
}
