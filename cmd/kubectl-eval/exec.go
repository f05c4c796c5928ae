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
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/execute"
)

// Bounds of exec's flags.
const (
	maxConcurrency = 64
	maxShares      = 64
)

// execOptions are exec's flags.
type execOptions struct {
	apiURL, runID, testsetID  string
	url, method, body, output string
	headers, headersFromEnv   []string
	checks                    []string
	timeout, maxBackoff       time.Duration
	progressEvery             time.Duration
	attempts, concurrency     int
	share, shares, maxErrors  int
	maxAnswerBytes            int64
}

func newExecCommand(getenv func(string) string) *cobra.Command {
	o := &execOptions{}
	cmd := &cobra.Command{
		Use:   "exec --url URL [flags]",
		Short: "Execute a run: call the system under test for each testcase and write its records and checks' scores",
		Long: `exec is an EvaluationRun's executor (spec.executor, in the operator's image as /kubectl-eval) or a CI
job's: for each testcase of the run's Testset it sends the body template, built from the testcase, to
--url, picks the output from the answer with --output, and writes one record per testcase (inputs,
expected, outputs {response, latencyMs} or {error, latencyMs}) to the run. Each --check scores a
heuristic Metric of the run from the record. Records the run already holds are skipped, so a rerun
finishes the run without writing a record twice.

The run, its service and its key come from the environment the operator sets in the executor's
Pods: EVAL_API_URL, EVAL_API_KEY (never a flag), EVAL_RUN_ID, EVAL_TESTSET_ID; an Indexed Job's
JOB_COMPLETION_INDEX and EVAL_SHARES pick this Pod's share. See docs/executor.md.`,
		Example: `  kubectl eval exec --url http://shop.demo:8080/answer \
    --body '{"question": {{json .inputs.question}}}' --output answer \
    --check correct=exact:answer --check fast=latency:2s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, api, err := o.config(getenv)
			if err != nil {
				return usageError(err)
			}
			cfg.Progress = cmd.ErrOrStderr()
			sum, err := execute.Run(cmd.Context(), api, cfg)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "run %s share %d/%d: %d testcases, %d already recorded, %d recorded "+
				"(%d with the system's error), %d scores\n", cfg.RunID, cfg.Share, cfg.Shares, sum.Listed, sum.Existing,
				sum.Recorded, sum.Failed, sum.Scores)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.apiURL, "api-url", getenv("EVAL_API_URL"), "the Evaluation Service API's base URL, ending in /api/v2 ($EVAL_API_URL)")
	f.StringVar(&o.runID, "run", getenv("EVAL_RUN_ID"), "the run's id ($EVAL_RUN_ID)")
	f.StringVar(&o.testsetID, "testset", getenv("EVAL_TESTSET_ID"), "the Testset's id ($EVAL_TESTSET_ID; default the run's)")
	f.StringVar(&o.url, "url", "", "the system under test's URL, called once per testcase")
	f.StringVar(&o.method, "method", http.MethodPost, "the HTTP method")
	f.StringArrayVar(&o.headers, "header", nil, "a header sent with each call, 'Name: value' (repeatable)")
	f.StringArrayVar(&o.headersFromEnv, "header-from-env", nil,
		"a header whose value is an environment variable's, 'Name=VARIABLE', e.g. a secretKeyRef's (repeatable)")
	f.StringVar(&o.body, "body", "{{json .inputs}}",
		"the body template (Go text/template over .inputs, .expected and .id; functions json and string)")
	f.StringVar(&o.output, "output", "", "the output's path in the JSON answer, e.g. choices[0].message.content (default: the whole answer)")
	f.StringArrayVar(&o.checks, "check", nil, "METRIC=KIND[:ARG], scores a heuristic Metric of the run (repeatable; see docs/executor.md)")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "the bound of one call to the system")
	f.IntVar(&o.attempts, "attempts", 4, "attempts per call: 429, 5xx, resets and timeouts are tried again")
	f.DurationVar(&o.maxBackoff, "max-backoff", 30*time.Second, "the longest wait between attempts, Retry-After included")
	f.Int64Var(&o.maxAnswerBytes, "max-answer-bytes", 1<<20, "the largest answer read; a longer one fails the call")
	f.IntVar(&o.concurrency, "concurrency", 8, fmt.Sprintf("testcases in flight at once (1-%d)", maxConcurrency))
	f.IntVar(&o.share, "share", envInt(getenv, "JOB_COMPLETION_INDEX", 0), "this execution's share, 0 to --shares-1 ($JOB_COMPLETION_INDEX)")
	f.IntVar(&o.shares, "shares", envInt(getenv, "EVAL_SHARES", 1), fmt.Sprintf("how many shares the Testset is split into (1-%d; $EVAL_SHARES)", maxShares))
	f.IntVar(&o.maxErrors, "max-errors", 10, "testcases whose call may fail (each recorded with its error) before exec stops")
	f.DurationVar(&o.progressEvery, "progress-every", 10*time.Second, "how often a progress line is printed (stderr)")
	return cmd
}

// envInt is variable name of getenv as an int, or def when unset or not one.
func envInt(getenv func(string) string, name string, def int) int {
	if n, err := strconv.Atoi(getenv(name)); err == nil {
		return n
	}
	return def
}

// config checks the flags and makes the execution's config and client.
func (o *execOptions) config(getenv func(string) string) (execute.Config, *evalapi.Client, error) {
	var errs []error
	need := func(v, what string) {
		if v == "" {
			errs = append(errs, errors.New(what))
		}
	}
	need(o.url, "--url is required: the system under test's URL")
	need(o.apiURL, "--api-url or $EVAL_API_URL is required")
	need(o.runID, "--run or $EVAL_RUN_ID is required")
	key := getenv("EVAL_API_KEY")
	need(key, "$EVAL_API_KEY is required (the run's key; never a flag, so it stays out of the process list)")
	for _, c := range []struct {
		ok   bool
		what string
	}{
		{o.concurrency >= 1 && o.concurrency <= maxConcurrency, fmt.Sprintf("--concurrency must be 1 to %d", maxConcurrency)},
		{o.shares >= 1 && o.shares <= maxShares, fmt.Sprintf("--shares must be 1 to %d", maxShares)},
		{o.share >= 0 && o.share < o.shares, "--share must be 0 to --shares-1"},
		{o.timeout > 0 && o.maxBackoff >= 0 && o.progressEvery > 0, "--timeout and --progress-every must be positive"},
		{o.attempts >= 1 && o.attempts <= 20, "--attempts must be 1 to 20"},
		{o.maxAnswerBytes >= 1 && o.maxAnswerBytes <= 64<<20, "--max-answer-bytes must be 1 to 64 MiB"},
		{o.maxErrors >= 0, "--max-errors must be 0 or more"},
	} {
		if !c.ok {
			errs = append(errs, errors.New(c.what))
		}
	}
	headers, err := o.header(getenv)
	errs = append(errs, err)
	body, err := execute.ParseBody(o.body)
	errs = append(errs, err)
	if err := execute.CheckPath(o.output); err != nil {
		errs = append(errs, fmt.Errorf("--output: %w", err))
	}
	checks := make([]execute.Check, 0, len(o.checks))
	for _, s := range o.checks {
		c, err := execute.ParseCheck(s)
		errs = append(errs, err)
		checks = append(checks, c)
	}
	api, err := evalapi.NewClient(evalapi.Options{BaseURL: o.apiURL, MaxInFlight: 2 * o.concurrency,
		UserAgent: "kubectl-eval-exec"})
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return execute.Config{}, nil, err
	}
	return execute.Config{
		Key: evalapi.APIKey(key), RunID: o.runID, TestsetID: o.testsetID, Checks: checks,
		Concurrency: o.concurrency, Share: o.share, Shares: o.shares, MaxErrors: o.maxErrors,
		ProgressEvery: o.progressEvery,
		System: execute.System{URL: o.url, Method: o.method, Headers: headers, Body: body, Output: o.output,
			Timeout: o.timeout, Attempts: o.attempts, MaxBackoff: o.maxBackoff, MaxAnswerBytes: o.maxAnswerBytes,
			HTTP: &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment,
				MaxIdleConnsPerHost: o.concurrency, ResponseHeaderTimeout: o.timeout}}},
	}, api, nil
}

// header is the calls' headers; a --header-from-env naming an unset
// variable is an error that names the variable, never a value.
func (o *execOptions) header(getenv func(string) string) (http.Header, error) {
	h := http.Header{}
	var errs []error
	for _, s := range o.headers {
		name, value, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(name) == "" {
			errs = append(errs, fmt.Errorf("--header wants 'Name: value', not one without a colon"))
			continue
		}
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	for _, s := range o.headersFromEnv {
		name, variable, ok := strings.Cut(s, "=")
		if !ok || name == "" || variable == "" {
			errs = append(errs, fmt.Errorf("--header-from-env %q: want Name=VARIABLE", s))
			continue
		}
		v := getenv(variable)
		if v == "" {
			errs = append(errs, fmt.Errorf("--header-from-env %q: $%s is empty or unset", s, variable))
			continue
		}
		h.Add(name, v)
	}
	return h, errors.Join(errs...)
}
