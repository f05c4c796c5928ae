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

// Differs reports whether sending want would change remote, a Metric in
// response form: whether name, description, evalType, outputType,
// guidelines, the ai fields or passingThreshold differ from what want asks
// for. Numbers compare as numbers (4 and 4.0 are equal). A field want does
// not send is taken as remote has it, as a PATCH would keep it.
func Differs(remote Metric, want MetricUpdate) bool {
	return len(DifferingFields(remote, want)) > 0
}

// DifferingFields names, in the API's JSON names, the fields of remote that
// sending want would change (see Differs); none when it would change nothing.
func DifferingFields(remote Metric, want MetricUpdate) []string {
	return differingFields(remote, ResponseFor(remote.ID, MergeUpdate(remote, want)))
}

func differingFields(a, b Metric) []string {
	var fields []string
	for _, f := range []struct {
		name string
		same bool
	}{
		{"name", a.Name == b.Name},
		{"description", equalPtr(a.Description, b.Description)},
		{"evalType", a.EvalType == b.EvalType},
		{"outputType", a.OutputType == b.OutputType},
		{"guidelines", a.Guidelines == b.Guidelines},
		{"promptTemplate", equalPtr(a.PromptTemplate, b.PromptTemplate)},
		{"evalModelName", equalPtr(a.EvalModelName, b.EvalModelName)},
		{"temperature", equalPtr(a.Temperature, b.Temperature)},
		{"passingThreshold", equalPtr(a.PassingThreshold, b.PassingThreshold)},
	} {
		if !f.same {
			fields = append(fields, f.name)
		}
	}
	return fields
}

// equalPtr reports whether both are unset or both hold equal values.
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
