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

package evalapitest

import "github.com/eval-operator/eval-operator/internal/evalapi"

// MinimalRequest is the smallest valid create request of a variant, named
// "m": an ai Metric's prompt template is the one field beyond the variant
// that the service requires.
func MinimalRequest(evalType, outputType string) evalapi.MetricRequest {
	req := evalapi.MetricRequest{Name: "m", EvalType: evalType, OutputType: outputType}
	if evalType == evalapi.EvalTypeAI {
		prompt := "Rate {{outputs.response}}"
		req.PromptTemplate = &prompt
	}
	return req
}
