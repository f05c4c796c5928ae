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
	"strings"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// The free text of a Metric request is checked here, before anything is
// written, with the rules the CRD's CEL rules state (one definition, in the
// API package): no control characters, no non-characters, valid UTF-8. The
// API server would refuse the same values with the same words; checking
// here means no write is attempted.

// requestTextErrors checks the text of a create.
func requestTextErrors(req evalapi.MetricRequest) []apierror.Field {
	return textErrors(&req.Name, req.Description, req.Guidelines, req.PromptTemplate)
}

// updateTextErrors checks the text of an update.
func updateTextErrors(u evalapi.MetricUpdate) []apierror.Field {
	return textErrors(u.Name, u.Description.Get(), u.Guidelines, u.PromptTemplate)
}

func textErrors(name, description, guidelines, promptTemplate *string) []apierror.Field {
	var errs []apierror.Field
	if name != nil && !evaluationv1alpha1.ValidLineText(*name) {
		errs = append(errs, apierror.Field{Field: "name", Message: evaluationv1alpha1.LineTextRule})
	}
	for _, f := range []struct {
		field string
		value *string
	}{{"description", description}, {"guidelines", guidelines}, {"promptTemplate", promptTemplate}} {
		if f.value != nil && !evaluationv1alpha1.ValidText(*f.value) {
			errs = append(errs, apierror.Field{Field: f.field, Message: evaluationv1alpha1.TextRule})
		}
	}
	return errs
}

// isUTF8Charset reports whether a Content-Type's parameters name no charset
// or UTF-8 (RFC 8259: JSON is UTF-8). A body in another charset would be
// decoded as UTF-8 and stored altered, so it is refused with a 415.
func isUTF8Charset(params map[string]string) bool {
	charset, ok := params["charset"]
	return !ok || strings.EqualFold(charset, "utf-8") || strings.EqualFold(charset, "utf8")
}
