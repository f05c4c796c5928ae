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

package remote

import (
	"strings"
	"testing"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

func TestSummaryKeepsTheCodeAndABoundedPrintableMessage(t *testing.T) {
	msg := "line\nbreak\x1b[31m " + strings.Repeat("é", 500)
	err := &evalapi.Error{Kind: evalapi.KindRejected, StatusCode: 400,
		API: &evalapi.APIError{Code: "VALIDATION_ERROR", Message: msg, Details: map[string]any{}}}
	got := Summary(err)
	if !strings.HasPrefix(got, "HTTP 400 VALIDATION_ERROR: linebreak[31m ") {
		t.Errorf("summary = %q, want the status, the code and the message without control characters", got)
	}
	if n := len([]rune(got)); n > maxServiceMessage+64 {
		t.Errorf("summary has %d runes, want at most %d more than the bound", n, 64)
	}
}
