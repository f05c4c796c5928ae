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

package v1alpha1_test

import (
	. "github.com/onsi/ginkgo/v2"
)

// judgedService returns a valid standalone EvaluationService with every
// field of its judge set.
func judgedService() map[string]any {
	obj := standaloneService()
	obj["spec"].(map[string]any)["standalone"] = map[string]any{"judge": map[string]any{
		"url":             "http://vllm.models.svc:8000/v1",
		"apiKeySecretRef": map[string]any{"name": "judge-key", "key": "token"},
		"caBundle":        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
		"models":          []any{map[string]any{"evalModelName": "gpt-4o", "model": "Qwen/Qwen2.5-7B-Instruct"}},
		"defaultModel":    "Qwen/Qwen2.5-7B-Instruct", "maxInFlight": int64(8), "requestsPerSecond": int64(20),
		"maxRequestsPerRun": int64(5000), "maxTokens": int64(256), "timeout": "2m",
	}}
	return obj
}

// clusterJudgedService is judgedService as a ClusterEvaluationService.
func clusterJudgedService() map[string]any {
	obj := judgedService()
	obj["kind"] = "ClusterEvaluationService"
	judgeOf(obj)["apiKeySecretRef"].(map[string]any)["namespace"] = "models"
	return obj
}

func judgeOf(obj map[string]any) map[string]any {
	return obj["spec"].(map[string]any)["standalone"].(map[string]any)["judge"].(map[string]any)
}

const (
	judgeURL     = "spec.standalone.judge.url: judge url must be an absolute http(s) URL"
	judgeURLInfo = "spec.standalone.judge.url: judge url must carry no user info, query or fragment"
)

var _ = Describe("A standalone service's judge", func() {
	DescribeTable("on an EvaluationService",
		func(mutate mutation, wantErrs ...string) { expectCreate(judgedService, mutate, wantErrs) },
		Entry("with every field is valid", unchanged),
		Entry("an Ollama url is valid", set("http://ollama.models:11434/v1", "spec", "standalone", "judge", "url")),
		Entry("a url without a scheme", set("vllm:8000/v1", "spec", "standalone", "judge", "url"), judgeURL),
		Entry("an ftp url", set("ftp://vllm/v1", "spec", "standalone", "judge", "url"), judgeURL),
		Entry("a url with user info", set("https://k:sk@api.example.com/v1", "spec", "standalone", "judge", "url"), judgeURLInfo),
		Entry("a url with a query", set("https://api.example.com/v1?key=sk", "spec", "standalone", "judge", "url"), judgeURLInfo),
		Entry("no url", unset("spec", "standalone", "judge", "url"), required("standalone.judge.url")),
		Entry("a caBundle that is not PEM", set("nope", "spec", "standalone", "judge", "caBundle"),
			"spec.standalone.judge.caBundle: caBundle must hold PEM certificates"),
		Entry("a timeout of 0s", set("0s", "spec", "standalone", "judge", "timeout"),
			"spec.standalone.judge.timeout: judge timeout must be between 1s and 10m"),
		Entry("a timeout of an hour", set("1h", "spec", "standalone", "judge", "timeout"),
			"spec.standalone.judge.timeout: judge timeout must be between 1s and 10m"),
		Entry("maxInFlight 0", set(0, "spec", "standalone", "judge", "maxInFlight"),
			"spec.standalone.judge.maxInFlight: Invalid value: 0"),
		Entry("an evalModelName mapped twice", set([]any{map[string]any{"evalModelName": "a", "model": "x"},
			map[string]any{"evalModelName": "a", "model": "y"}}, "spec", "standalone", "judge", "models"),
			`spec.standalone.judge.models[1]: Duplicate value`),
		Entry("a model name with a space", set("my model", "spec", "standalone", "judge", "defaultModel"),
			"spec.standalone.judge.defaultModel: Invalid value"),
		Entry("another namespace's key Secret", set("other-team", "spec", "standalone", "judge", "apiKeySecretRef", "namespace"),
			"spec.standalone.judge.apiKeySecretRef.namespace: Forbidden: an EvaluationService's judge key is a Secret of its own namespace"),
	)

	DescribeTable("on a ClusterEvaluationService",
		func(mutate mutation, wantErrs ...string) { expectCreate(clusterJudgedService, mutate, wantErrs) },
		Entry("with every field is valid", unchanged),
		Entry("a key Secret without its namespace", unset("spec", "standalone", "judge", "apiKeySecretRef", "namespace"),
			"spec.standalone.judge.apiKeySecretRef: Required value: a ClusterEvaluationService's judge key names its Secret's namespace"),
		Entry("no key at all", unset("spec", "standalone", "judge", "apiKeySecretRef")),
	)
})
