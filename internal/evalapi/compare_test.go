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

package evalapi_test

import (
	"slices"
	"testing"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// The Synced condition names the fields that drifted, in the API's names,
// and never their values.
func TestDifferingFields(t *testing.T) {
	remote := evalapi.Metric{ID: "met_1", Name: "m", EvalType: "ai", OutputType: "int",
		PromptTemplate: ptr("secret prompt"), EvalModelName: ptr("gpt-4o"), Temperature: ptr(0.0), PassingThreshold: ptr(4.0)}
	same := evalapi.MetricUpdate{Name: ptr("m"), Description: evalapi.NullableFrom[string](nil), EvalType: "ai", OutputType: "int",
		Guidelines: ptr(""), PromptTemplate: ptr("secret prompt"), EvalModelName: ptr("gpt-4o"), Temperature: ptr(0.0),
		PassingThreshold: ptr(4.0)}
	if got := evalapi.DifferingFields(remote, same); got != nil {
		t.Fatalf("an equal Metric: got %v, want none", got)
	}
	if evalapi.Differs(remote, same) {
		t.Fatal("Differs: an equal Metric differs")
	}

	edited := same
	edited.PromptTemplate, edited.Temperature, edited.Description = ptr("another prompt"), ptr(1.5), evalapi.NullableFrom(ptr("d"))
	got := evalapi.DifferingFields(remote, edited)
	if want := []string{"description", "promptTemplate", "temperature"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if !evalapi.Differs(remote, edited) {
		t.Fatal("Differs: an edited Metric does not differ")
	}
}
