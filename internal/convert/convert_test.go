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

package convert_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

// full is an ai/int request with every field set to a value other than its default.
func full() evalapi.MetricRequest {
	return evalapi.MetricRequest{
		Name: "m", Description: ptr("d"), EvalType: "ai", OutputType: "int", Guidelines: ptr("g"),
		PromptTemplate: ptr("p"), EvalModelName: ptr("claude"), Temperature: ptr(0.5), PassingThreshold: ptr(3.0),
	}
}

var _ = Describe("DesiredVariant", func() {
	DescribeTable("sends every field of the spec's variant, with the service's default for each one the spec leaves unset",
		func(req evalapi.MetricRequest, want string) {
			spec := convert.SpecFor("p", req)
			got, err := json.Marshal(convert.DesiredVariant(&spec))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(want))
		},
		Entry("ai/int", evalapitest.MinimalRequest("ai", "int"),
			`{"name":"m","description":null,"evalType":"ai","outputType":"int","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0,"passingThreshold":4}`),
		Entry("ai/float", evalapitest.MinimalRequest("ai", "float"),
			`{"name":"m","description":null,"evalType":"ai","outputType":"float","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0,"passingThreshold":0.9}`),
		Entry("ai/boolean", evalapitest.MinimalRequest("ai", "boolean"),
			`{"name":"m","description":null,"evalType":"ai","outputType":"boolean","guidelines":"","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o","temperature":0}`),
		Entry("human/int", evalapitest.MinimalRequest("human", "int"),
			`{"name":"m","description":null,"evalType":"human","outputType":"int","guidelines":"","passingThreshold":4}`),
		Entry("human/float", evalapitest.MinimalRequest("human", "float"),
			`{"name":"m","description":null,"evalType":"human","outputType":"float","guidelines":"","passingThreshold":0.9}`),
		Entry("human/boolean", evalapitest.MinimalRequest("human", "boolean"),
			`{"name":"m","description":null,"evalType":"human","outputType":"boolean","guidelines":""}`),
		Entry("heuristic/int", evalapitest.MinimalRequest("heuristic", "int"),
			`{"name":"m","description":null,"evalType":"heuristic","outputType":"int","guidelines":"","passingThreshold":4}`),
		Entry("heuristic/float", evalapitest.MinimalRequest("heuristic", "float"),
			`{"name":"m","description":null,"evalType":"heuristic","outputType":"float","guidelines":"","passingThreshold":0.9}`),
		Entry("heuristic/boolean", evalapitest.MinimalRequest("heuristic", "boolean"),
			`{"name":"m","description":null,"evalType":"heuristic","outputType":"boolean","guidelines":""}`),
		Entry("every field set", full(),
			`{"name":"m","description":"d","evalType":"ai","outputType":"int","guidelines":"g","promptTemplate":"p","evalModelName":"claude","temperature":0.5,"passingThreshold":3}`),
		Entry("an empty description, which is not null", evalapi.MetricRequest{Name: "m", Description: ptr(""), EvalType: "human", OutputType: "boolean"},
			`{"name":"m","description":"","evalType":"human","outputType":"boolean","guidelines":""}`),
		Entry("fields of another variant, left out",
			evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "boolean", PromptTemplate: ptr("p"), Temperature: ptr(1.0), PassingThreshold: ptr(1.0)},
			`{"name":"m","description":null,"evalType":"human","outputType":"boolean","guidelines":""}`),
	)

	It("shares no memory with the spec", func() {
		spec := convert.SpecFor("p", full())
		want := convert.DesiredVariant(&spec)
		*spec.Description, *spec.PromptTemplate, *spec.Temperature = "changed", "changed", 2
		Expect(*want.Description.Get()).To(Equal("d"))
		Expect(*want.PromptTemplate).To(Equal("p"))
		Expect(*want.Temperature).To(Equal(0.5))
	})
})

var _ = Describe("Differs", func() {
	DescribeTable("compares the remote Metric with the desired variant",
		func(mutate func(remote *evalapi.Metric, spec *v1alpha1.MetricSpec), want bool) {
			got := evalapi.ResponseFor("met_1", full())
			spec := convert.SpecFor("p", full())
			mutate(&got, &spec)
			Expect(evalapi.Differs(got, convert.DesiredVariant(&spec))).To(Equal(want))
		},
		Entry("the same", func(*evalapi.Metric, *v1alpha1.MetricSpec) {}, false),
		Entry("the spec leaves defaults unset that the remote shows", func(r *evalapi.Metric, s *v1alpha1.MetricSpec) {
			s.EvalModelName, s.Temperature, s.PassingThreshold, s.Description, s.Guidelines = nil, nil, nil, nil, nil
			r.EvalModelName, r.Temperature, r.PassingThreshold, r.Description, r.Guidelines = ptr("gpt-4o"), ptr(0.0), ptr(4.0), nil, ""
		}, false),
		Entry("name", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.Name = "renamed" }, true),
		Entry("description null, desired empty", func(r *evalapi.Metric, s *v1alpha1.MetricSpec) {
			r.Description, s.Description = nil, ptr[v1alpha1.Text]("")
		}, true),
		Entry("description empty, desired null", func(r *evalapi.Metric, s *v1alpha1.MetricSpec) { r.Description, s.Description = ptr(""), nil }, true),
		Entry("description", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.Description = ptr("other") }, true),
		Entry("evalType", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.EvalType = "heuristic" }, true),
		Entry("outputType", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.OutputType = "float" }, true),
		Entry("guidelines", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.Guidelines = "" }, true),
		Entry("promptTemplate", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.PromptTemplate = ptr("q") }, true),
		Entry("evalModelName", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.EvalModelName = ptr("gpt-4o") }, true),
		Entry("evalModelName missing remotely", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.EvalModelName = nil }, true),
		Entry("temperature", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.Temperature = ptr(0.0) }, true),
		Entry("passingThreshold", func(r *evalapi.Metric, _ *v1alpha1.MetricSpec) { r.PassingThreshold = ptr(4.0) }, true),
		Entry("a remote field the desired variant lacks", func(r *evalapi.Metric, s *v1alpha1.MetricSpec) {
			s.OutputType, s.PassingThreshold = v1alpha1.OutputType("boolean"), nil
			r.OutputType = "boolean" // the remote still shows its passingThreshold
		}, true),
	)

	It("compares numbers as numbers", func() {
		var got evalapi.Metric
		Expect(json.Unmarshal([]byte(`{"id":"met_1","name":"m","description":null,"evalType":"ai","outputType":"int",`+
			`"guidelines":"","promptTemplate":"p","evalModelName":"gpt-4o","temperature":0.0,"passingThreshold":4.0}`), &got)).To(Succeed())
		spec := convert.SpecFor("p", evalapi.MetricRequest{Name: "m", EvalType: "ai", OutputType: "int", PromptTemplate: ptr("p"), PassingThreshold: ptr(4.0)})
		Expect(evalapi.Differs(got, convert.DesiredVariant(&spec))).To(BeFalse())
	})

	It("takes the fields an update does not send as the remote has them", func() {
		got := evalapi.ResponseFor("met_1", full())
		Expect(evalapi.Differs(got, evalapi.MetricUpdate{EvalType: "ai", OutputType: "int", Name: ptr("m")})).To(BeFalse())
		Expect(evalapi.Differs(got, evalapi.MetricUpdate{EvalType: "ai", OutputType: "int", Name: ptr("n")})).To(BeTrue())
	})
})

var _ = Describe("MetricUpdate", func() {
	DescribeTable("sends a description only when set, null included",
		func(description evalapi.Nullable[string], want string) {
			got, err := json.Marshal(evalapi.MetricUpdate{EvalType: "human", OutputType: "int", Description: description})
			Expect(err).NotTo(HaveOccurred())
			Expect(string(got)).To(Equal(want))

			var back evalapi.MetricUpdate
			Expect(json.Unmarshal(got, &back)).To(Succeed())
			Expect(back.Description).To(Equal(description))
		},
		Entry("unset", evalapi.Nullable[string]{}, `{"evalType":"human","outputType":"int"}`),
		Entry("null", evalapi.NullableFrom[string](nil), `{"description":null,"evalType":"human","outputType":"int"}`),
		Entry("a value", evalapi.NullableFrom(ptr("d")), `{"description":"d","evalType":"human","outputType":"int"}`),
		Entry("an empty value", evalapi.NullableFrom(ptr("")), `{"description":"","evalType":"human","outputType":"int"}`),
	)

	It("refuses a description of the wrong type", func() {
		var u evalapi.MetricUpdate
		Expect(json.Unmarshal([]byte(`{"description":5}`), &u)).NotTo(Succeed())
	})
})
