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
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// evaluationService returns a valid EvaluationService with every optional
// field of a remote service set.
func evaluationService() map[string]any {
	obj := typeMeta("EvaluationService")
	obj["spec"] = map[string]any{
		"url":             "https://eval.example.com/api/v2",
		"apiKeySecretRef": map[string]any{"name": "eval-api-key"},
		"caBundle":        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
		"limits": map[string]any{
			"requestsPerSecond": int64(5), "burst": int64(10), "maxInFlight": int64(4),
			"timeout": "30s", "driftInterval": "1h",
		},
		"executor": map[string]any{"serviceAccountName": "evaluator", "secrets": []any{"model-token", "registry"}},
	}
	return obj
}

// clusterEvaluationService returns a valid ClusterEvaluationService with
// every optional field of a remote service set.
func clusterEvaluationService() map[string]any {
	obj := evaluationService()
	obj["kind"] = "ClusterEvaluationService"
	spec := obj["spec"].(map[string]any)
	spec["apiKeySecretRef"] = map[string]any{"name": "eval-api-key", "namespace": "eval-system"}
	spec["namespaces"] = []any{"team-a", "team-b"}
	spec["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{"eval": "prod"}}
	return obj
}

// standaloneService is a valid standalone EvaluationService.
func standaloneService() map[string]any {
	obj := typeMeta("EvaluationService")
	obj["spec"] = map[string]any{"standalone": map[string]any{}}
	return obj
}

const (
	exactlyOne     = "spec: set exactly one of url and standalone"
	urlNotAbsolute = "spec.url: url must be an absolute URL"
	urlScheme      = "spec.url: url must start with https://"
	urlUserInfo    = "spec.url: url must not carry user info"
	urlPath        = "spec.url: url must end in /api/v2"
	urlQuery       = "spec.url: url must have no query or fragment"
)

// serviceURLCases are the url rules, the same on both kinds.
func serviceURLCases() []TableEntry {
	return []TableEntry{
		Entry("with every field is valid", unchanged),
		Entry("an http url is valid", set("http://eval.eval-system.svc:8082/api/v2", "spec", "url")),
		Entry("a url with a trailing slash is valid", set("https://eval.example.com/api/v2/", "spec", "url")),
		Entry("a url under a path prefix is valid", set("https://gw.example.com/eval/api/v2", "spec", "url")),
		Entry("standalone is valid", func(obj map[string]any) {
			spec := obj["spec"].(map[string]any)
			delete(spec, "url")
			delete(spec, "caBundle")
			spec["standalone"] = map[string]any{}
		}),
		Entry("neither url nor standalone", unset("spec", "url"), exactlyOne),
		Entry("both url and standalone", set(map[string]any{}, "spec", "standalone"), exactlyOne),
		Entry("a url without a scheme", set("eval.example.com/api/v2", "spec", "url"), urlNotAbsolute, urlScheme),
		Entry("an ftp url", set("ftp://eval.example.com/api/v2", "spec", "url"), urlScheme),
		Entry("a url with user info", set("https://user:pass@eval.example.com/api/v2", "spec", "url"), urlUserInfo),
		Entry("a url not ending in /api/v2", set("https://eval.example.com/api/v1", "spec", "url"), urlPath),
		Entry("a url with a query", set("https://eval.example.com/api/v2?x=1", "spec", "url"), urlQuery, urlPath),
		Entry("a url of 2049 bytes", set("https://e.example.com/"+strings.Repeat("a", 2020)+"/api/v2", "spec", "url"),
			tooLong("url", "2048")),
		Entry("caBundle that is not PEM", set("not a certificate", "spec", "caBundle"),
			"spec.caBundle: caBundle must hold PEM certificates"),
		Entry("requestsPerSecond 0", set(0, "spec", "limits", "requestsPerSecond"),
			"spec.limits.requestsPerSecond: Invalid value: 0: spec.limits.requestsPerSecond in body should be greater than or equal to 1"),
		Entry("burst above 10000", set(10001, "spec", "limits", "burst"),
			"spec.limits.burst: Invalid value: 10001: spec.limits.burst in body should be less than or equal to 10000"),
		Entry("negative maxInFlight", set(-1, "spec", "limits", "maxInFlight"),
			"spec.limits.maxInFlight: Invalid value: -1: spec.limits.maxInFlight in body should be greater than or equal to 0"),
		Entry("a timeout of 0s", set("0s", "spec", "limits", "timeout"),
			"spec.limits.timeout: timeout must be between 1s and 5m"),
		Entry("a timeout of an hour", set("1h", "spec", "limits", "timeout"),
			"spec.limits.timeout: timeout must be between 1s and 5m"),
		Entry("an executor ServiceAccount that is not a name", set("Deployer!", "spec", "executor", "serviceAccountName"),
			`spec.executor.serviceAccountName: Invalid value: "Deployer!"`),
		Entry("an empty executor ServiceAccount", set("", "spec", "executor", "serviceAccountName"),
			"spec.executor.serviceAccountName: Invalid value"),
		Entry("33 executor Secrets", set(func() []any {
			names := make([]any, 33)
			for i := range names {
				names[i] = fmt.Sprintf("secret-%d", i)
			}
			return names
		}(), "spec", "executor", "secrets"), "spec.executor.secrets: Too many: 33: must have at most 32 items"),
		Entry("an executor Secret named twice", set([]any{"a", "a"}, "spec", "executor", "secrets"),
			`spec.executor.secrets[1]: Duplicate value: "a"`),
		Entry("driftInterval 0s turns drift checks off", set("0s", "spec", "limits", "driftInterval")),
		Entry("a driftInterval of 1s", set("1s", "spec", "limits", "driftInterval"),
			"spec.limits.driftInterval: driftInterval must be 0s (off) or between 10s and 24h"),
		Entry("a driftInterval of two days", set("48h", "spec", "limits", "driftInterval"),
			"spec.limits.driftInterval: driftInterval must be 0s (off) or between 10s and 24h"),
	}
}

var _ = Describe("EvaluationService validation", func() {
	DescribeTable("creating an EvaluationService",
		func(mutate mutation, wantErrs ...string) {
			expectCreate(evaluationService, mutate, wantErrs)
		},
		append(serviceURLCases(),
			Entry("caBundle with standalone", func(obj map[string]any) {
				spec := obj["spec"].(map[string]any)
				delete(spec, "url")
				spec["standalone"] = map[string]any{}
			}, "spec.caBundle: caBundle applies to url only"),
		),
	)

	It("defaults the limits to the operator's flags", func() {
		expectCreate(standaloneService, unchanged, nil)
	})

	DescribeTable("the passCriteria of the runs the REST server creates",
		func(mutate mutation, wantErrs ...string) {
			expectCreate(standaloneService, mutate, wantErrs)
		},
		Entry("a baseline by name is valid", set(map[string]any{"baseline": map[string]any{"runRef": map[string]any{"name": "prod"}}},
			"spec", "standalone", "runPassCriteria")),
		Entry("the production baseline", set(map[string]any{"baseline": map[string]any{"production": map[string]any{}}},
			"spec", "standalone", "runPassCriteria"),
			"spec.standalone.runPassCriteria.baseline: Invalid value: runPassCriteria.baseline.production compares with the "+
				"production version of a run's SystemVersion, and the runs the REST server creates name none: use "+
				"baseline.runRef, or no baseline"),
	)
})

var _ = Describe("ClusterEvaluationService validation", func() {
	DescribeTable("creating a ClusterEvaluationService",
		func(mutate mutation, wantErrs ...string) {
			expectCreate(clusterEvaluationService, mutate, wantErrs)
		},
		append(serviceURLCases(),
			Entry("apiKeySecretRef without a namespace", unset("spec", "apiKeySecretRef", "namespace"),
				required("apiKeySecretRef.namespace")),
			Entry("a namespace that is not a DNS label", set([]any{"Team_A"}, "spec", "namespaces"),
				mismatch("namespaces[0]", "Team_A", `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)),
			Entry("a namespace listed twice", set([]any{"team-a", "team-a"}, "spec", "namespaces"),
				`spec.namespaces[1]: Duplicate value: "team-a"`),
			Entry("no namespaces and no selector allows every namespace", func(obj map[string]any) {
				spec := obj["spec"].(map[string]any)
				delete(spec, "namespaces")
				delete(spec, "namespaceSelector")
			}),
		),
	)
})
