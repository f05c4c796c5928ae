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
	"encoding/json"
	"testing"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

func ptr[T any](v T) *T { return &v }

// TestResponseForDefaults checks that ResponseFor fills in the service's
// defaults for each variant.
func TestResponseForDefaults(t *testing.T) {
	cases := []struct {
		name string
		req  evalapi.MetricRequest
		want string
	}{
		{"ai/int", evalapitest.MinimalRequest("ai", "int"),
			`{"id":"met_1","name":"m","description":null,"evalType":"ai","outputType":"int","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0,"passingThreshold":4}`},
		{"ai/float", evalapitest.MinimalRequest("ai", "float"),
			`{"id":"met_1","name":"m","description":null,"evalType":"ai","outputType":"float","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0,"passingThreshold":0.9}`},
		{"ai/boolean", evalapitest.MinimalRequest("ai", "boolean"),
			`{"id":"met_1","name":"m","description":null,"evalType":"ai","outputType":"boolean","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0}`},
		{"human/int", evalapitest.MinimalRequest("human", "int"),
			`{"id":"met_1","name":"m","description":null,"evalType":"human","outputType":"int","guidelines":"","passingThreshold":4}`},
		{"human/float", evalapitest.MinimalRequest("human", "float"),
			`{"id":"met_1","name":"m","description":null,"evalType":"human","outputType":"float","guidelines":"","passingThreshold":0.9}`},
		{"human/boolean", evalapitest.MinimalRequest("human", "boolean"),
			`{"id":"met_1","name":"m","description":null,"evalType":"human","outputType":"boolean","guidelines":""}`},
		{"heuristic/int", evalapitest.MinimalRequest("heuristic", "int"),
			`{"id":"met_1","name":"m","description":null,"evalType":"heuristic","outputType":"int","guidelines":"","passingThreshold":4}`},
		{"heuristic/float", evalapitest.MinimalRequest("heuristic", "float"),
			`{"id":"met_1","name":"m","description":null,"evalType":"heuristic","outputType":"float","guidelines":"","passingThreshold":0.9}`},
		{"heuristic/boolean", evalapitest.MinimalRequest("heuristic", "boolean"),
			`{"id":"met_1","name":"m","description":null,"evalType":"heuristic","outputType":"boolean","guidelines":""}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(evalapi.ResponseFor("met_1", tc.req))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("ResponseFor = %s\nwant          %s", got, tc.want)
			}
		})
	}
}

// TestResponseForKeepsValues checks that ResponseFor keeps the values the
// request gives, without sharing them.
func TestResponseForKeepsValues(t *testing.T) {
	req := evalapi.MetricRequest{
		Name: "m", Description: ptr("d"), EvalType: "ai", OutputType: "float", Guidelines: ptr("g"),
		PromptTemplate: ptr("p"), EvalModelName: ptr("claude"), Temperature: ptr(1.5), PassingThreshold: ptr(0.5),
	}
	m := evalapi.ResponseFor("met_1", req)
	*req.Temperature, *req.PassingThreshold, *req.EvalModelName = 0, 0, "changed"
	if *m.Description != "d" || m.Guidelines != "g" || *m.EvalModelName != "claude" ||
		*m.Temperature != 1.5 || *m.PassingThreshold != 0.5 {
		t.Errorf("ResponseFor = description %q, guidelines %q, evalModelName %q, temperature %v, passingThreshold %v; "+
			"want d, g, claude, 1.5, 0.5", *m.Description, m.Guidelines, *m.EvalModelName, *m.Temperature, *m.PassingThreshold)
	}
}
