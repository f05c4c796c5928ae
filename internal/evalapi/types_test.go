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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

func ptr[T any](v T) *T { return &v }

// minimal is the smallest valid request of a variant.
func minimal(evalType, outputType string) evalapi.MetricRequest {
	req := evalapi.MetricRequest{Name: "m", EvalType: evalType, OutputType: outputType}
	if evalType == evalapi.EvalTypeAI {
		req.PromptTemplate = ptr("Rate {{outputs.response}}")
	}
	return req
}

var _ = Describe("ResponseFor", func() {
	DescribeTable("fills in the service's defaults for each variant",
		func(req evalapi.MetricRequest, want string) {
			got, err := json.Marshal(evalapi.ResponseFor("met_1", req))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(want))
		},
		Entry("ai/int", minimal("ai", "int"),
			`{"id":"met_1","name":"m","description":null,"evalType":"ai","outputType":"int","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0,"passingThreshold":4}`),
		Entry("ai/float", minimal("ai", "float"),
			`{"id":"met_1","name":"m","description":null,"evalType":"ai","outputType":"float","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0,"passingThreshold":0.9}`),
		Entry("ai/boolean", minimal("ai", "boolean"),
			`{"id":"met_1","name":"m","description":null,"evalType":"ai","outputType":"boolean","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0}`),
		Entry("human/int", minimal("human", "int"),
			`{"id":"met_1","name":"m","description":null,"evalType":"human","outputType":"int","guidelines":"","passingThreshold":4}`),
		Entry("human/float", minimal("human", "float"),
			`{"id":"met_1","name":"m","description":null,"evalType":"human","outputType":"float","guidelines":"","passingThreshold":0.9}`),
		Entry("human/boolean", minimal("human", "boolean"),
			`{"id":"met_1","name":"m","description":null,"evalType":"human","outputType":"boolean","guidelines":""}`),
		Entry("heuristic/int", minimal("heuristic", "int"),
			`{"id":"met_1","name":"m","description":null,"evalType":"heuristic","outputType":"int","guidelines":"","passingThreshold":4}`),
		Entry("heuristic/float", minimal("heuristic", "float"),
			`{"id":"met_1","name":"m","description":null,"evalType":"heuristic","outputType":"float","guidelines":"","passingThreshold":0.9}`),
		Entry("heuristic/boolean", minimal("heuristic", "boolean"),
			`{"id":"met_1","name":"m","description":null,"evalType":"heuristic","outputType":"boolean","guidelines":""}`),
	)

	It("keeps the values the request gives, without sharing them", func() {
		req := evalapi.MetricRequest{
			Name: "m", Description: ptr("d"), EvalType: "ai", OutputType: "float", Guidelines: ptr("g"),
			PromptTemplate: ptr("p"), EvalModelName: ptr("claude"), Temperature: ptr(1.5), PassingThreshold: ptr(0.5),
		}
		m := evalapi.ResponseFor("met_1", req)
		*req.Temperature, *req.PassingThreshold, *req.EvalModelName = 0, 0, "changed"
		Expect(*m.Description).To(Equal("d"))
		Expect(m.Guidelines).To(Equal("g"))
		Expect(*m.EvalModelName).To(Equal("claude"))
		Expect(*m.Temperature).To(Equal(1.5))
		Expect(*m.PassingThreshold).To(Equal(0.5))
	})
})
