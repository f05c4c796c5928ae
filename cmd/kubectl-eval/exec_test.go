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

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var _ = Describe("kubectl eval exec", func() {
	const token = "sut-token-s3cret"
	var (
		srv *evalapitest.Server
		sut *httptest.Server
		env map[string]string
	)

	BeforeEach(func(ctx SpecContext) {
		srv = evalapitest.New()
		DeferCleanup(srv.Close)
		srv.SetScorer(nil)
		api, err := evalapi.NewClient(evalapi.Options{BaseURL: srv.URL()})
		Expect(err).NotTo(HaveOccurred())
		key := evalapi.APIKey(evalapitest.DefaultKey)
		ts, err := api.CreateTestset(ctx, key, "p1", evalapi.TestsetRequest{Name: "faq", JSONSchema: json.RawMessage(`{}`),
			FieldMapping: evalapi.FieldMapping{Inputs: []string{"question"}, Expected: []string{"answer"}, Metadata: []string{}}})
		Expect(err).NotTo(HaveOccurred())
		_, err = api.CreateTestcases(ctx, key, ts.ID, []json.RawMessage{
			json.RawMessage(`{"question":"hello","answer":"HELLO"}`), json.RawMessage(`{"question":"bye","answer":"BYE"}`)})
		Expect(err).NotTo(HaveOccurred())
		req := evalapitest.MinimalRequest("heuristic", "boolean")
		req.Name = "correct"
		m, err := api.CreateMetric(ctx, key, "p1", req)
		Expect(err).NotTo(HaveOccurred())
		run, err := api.CreateRun(ctx, key, "p1", evalapi.RunRequest{TestsetID: &ts.ID, MetricIDs: []string{m.ID}})
		Expect(err).NotTo(HaveOccurred())
		sut = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "who are you", http.StatusUnauthorized)
				return
			}
			var q struct{ Question string }
			_ = json.NewDecoder(r.Body).Decode(&q)
			_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]string{"text": strings.ToUpper(q.Question)}})
		}))
		DeferCleanup(sut.Close)
		env = map[string]string{"EVAL_API_URL": srv.URL(), "EVAL_API_KEY": evalapitest.DefaultKey, "EVAL_RUN_ID": run.ID,
			"EVAL_TESTSET_ID": ts.ID, "SUT_AUTH": "Bearer " + token}
	})

	It("records and scores each testcase from the operator's environment, and a rerun writes nothing", func(ctx SpecContext) {
		args := []string{"exec", "--url", sut.URL, "--header-from-env", "Authorization=SUT_AUTH",
			"--body", `{"question": {{json .inputs.question}}}`, "--output", "data.text", "--check", "correct=exact:answer"}
		stdout, stderr, err := run(ctx, env, args...)
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(stdout).To(ContainSubstring("2 testcases, 0 already recorded, 2 recorded (0 with the system's error), 2 scores"))
		Expect(stderr).To(ContainSubstring("exec: finished:"))
		Expect(stdout + stderr).NotTo(ContainSubstring(token))
		r, _ := srv.Run(env["EVAL_RUN_ID"])
		Expect(r.NumRecords).To(Equal(2))
		Expect(r.NumScores).To(Equal(2))

		stdout, _, err = run(ctx, env, args...)
		Expect(err).NotTo(HaveOccurred())
		Expect(stdout).To(ContainSubstring("2 testcases, 2 already recorded, 0 recorded"))
		r, _ = srv.Run(env["EVAL_RUN_ID"])
		Expect(r.NumRecords).To(Equal(2))
	})

	It("refuses bad flags at once, with exit code 2, naming each and never a secret", func(ctx SpecContext) {
		delete(env, "EVAL_API_KEY")
		env["SUT_AUTH"] = ""
		_, _, err := run(ctx, env, "exec", "--concurrency", "0", "--header-from-env", "Authorization=SUT_AUTH",
			"--check", "correct=similar", "--body", "{{.inputs", "--output", "a..b")
		Expect(exitCode(err)).To(Equal(2))
		for _, want := range []string{"--url is required", "$EVAL_API_KEY is required", "--concurrency must be 1 to 64",
			"$SUT_AUTH is empty or unset", `check "correct=similar": the kind must be one of`, "the body template",
			"--output: path \"a..b\" has an empty key"} {
			Expect(err.Error()).To(ContainSubstring(want))
		}
	})

	It("fails when the system refuses every call, after recording what it said", func(ctx SpecContext) {
		env["SUT_AUTH"] = "Bearer wrong"
		_, _, err := run(ctx, env, "exec", "--url", sut.URL, "--header-from-env", "Authorization=SUT_AUTH",
			"--max-errors", "0", "--concurrency", "1")
		Expect(err).To(MatchError(ContainSubstring("stopped after 1 testcases failed")))
		Expect(err.Error()).To(ContainSubstring("401 Unauthorized"))
		Expect(err.Error()).NotTo(ContainSubstring("wrong"))
	})
})
