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
	return !sameFields(remote, ResponseFor(remote.ID, MergeUpdate(remote, want)))
}

func sameFields(a, b Metric) bool {
	return a.Name == b.Name &&
		equalPtr(a.Description, b.Description) &&
		a.EvalType == b.EvalType &&
		a.OutputType == b.OutputType &&
		a.Guidelines == b.Guidelines &&
		equalPtr(a.PromptTemplate, b.PromptTemplate) &&
		equalPtr(a.EvalModelName, b.EvalModelName) &&
		equalPtr(a.Temperature, b.Temperature) &&
		equalPtr(a.PassingThreshold, b.PassingThreshold)
}

// equalPtr reports whether both are unset or both hold equal values.
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
