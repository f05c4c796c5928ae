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
	"flag"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/eval-operator/eval-operator/internal/restapi"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
)

func parse(args []string, env map[string]string) (config, error) {
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return parseFlags(fs, args, lookup, &zap.Options{})
}

func TestParseFlagsDefaults(t *testing.T) {
	c, err := parse(nil, nil)
	if err != nil {
		t.Fatalf("defaults must be valid: %v", err)
	}
	if c.apiURL != "" || c.serveAPI != "" || c.bulkDeleteBatchSize != 100 || c.maxConcurrentReconciles != 8 ||
		c.restSyncTimeout != 10*time.Second || c.restMaxInflight != restapi.DefaultMaxInflight || c.driftInterval != 10*time.Minute || !c.secureMetrics {
		t.Errorf("unexpected defaults: %+v", c)
	}
}

func TestParseFlagsEnvironment(t *testing.T) {
	env := map[string]string{
		"EVAL_OPERATOR_API_URL":        "https://eval.example.com/api/v2",
		"EVAL_OPERATOR_API_QPS":        "5",
		"EVAL_OPERATOR_SERVE_API":      ":9000",
		"EVAL_OPERATOR_DRIFT_INTERVAL": "0",
	}
	c, err := parse([]string{"--serve-api=:8082"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.apiURL != env["EVAL_OPERATOR_API_URL"] || c.apiQPS != 5 || c.driftInterval != 0 {
		t.Errorf("environment not applied: %+v", c)
	}
	if c.serveAPI != ":8082" {
		t.Errorf("the command line must win over the environment, got %q", c.serveAPI)
	}
}

func TestParseFlagsVersionOnlyFromTheCommandLine(t *testing.T) {
	c, err := parse(nil, map[string]string{"EVAL_OPERATOR_VERSION": "true"})
	if err != nil || c.printVersion {
		t.Errorf("EVAL_OPERATOR_VERSION must not stop the manager: printVersion %v, err %v", c.printVersion, err)
	}
	if c, err = parse([]string{"--version"}, nil); err != nil || !c.printVersion {
		t.Errorf("--version: printVersion %v, err %v", c.printVersion, err)
	}
}

func TestParseFlagsRejectsBadValues(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--api-url=ftp://x"}, nil, "--api-url"},
		{[]string{"--api-url=eval.example.com/api/v2"}, nil, "--api-url"},
		{[]string{"--serve-api=:8082", "--serve-api-url=ftp://x"}, nil, "--serve-api-url \"ftp://x\": want an http or https URL"},
		{[]string{"--serve-api=:8082", "--serve-api-url=http://api.ops.svc:8082/api/v2?x=1"}, nil, "--serve-api-url"},
		{[]string{"--api-qps=0"}, nil, "--api-qps 0: must be greater than 0"},
		{[]string{"--api-burst=0"}, nil, "--api-burst 0"},
		{[]string{"--api-timeout=0s"}, nil, "--api-timeout"},
		{[]string{"--bulk-delete-batch-size=10001"}, nil, "--bulk-delete-batch-size 10001: must be from 1 to 10000"},
		{[]string{"--max-concurrent-reconciles=0"}, nil, "--max-concurrent-reconciles 0"},
		{[]string{"--rest-drain-delay=-1s"}, nil, "--rest-drain-delay -1s: must be 0 or more"},
		{[]string{"--rest-sync-timeout=-1s"}, nil, "--rest-sync-timeout"},
		{[]string{"--rest-max-inflight=0"}, nil, "--rest-max-inflight 0"},
		{[]string{"--rest-tenant-burst=-1"}, nil, "--rest-tenant-burst -1: must be 0 (derived) or more"},
		{[]string{"--rest-tenant-qps=-1"}, nil, "--rest-tenant-qps -1: must be 0 (derived) or more"},
		{[]string{"--rest-tenant-read-burst=0"}, nil, "--rest-tenant-read-burst 0"},
		{[]string{"--rest-tenant-read-qps=0"}, nil, "--rest-tenant-read-qps 0: must be greater than 0"},
		{[]string{"--testset-memory-bytes=83000000"}, nil, "--testset-memory-bytes 83000000: must be at least 86308864"},
		{[]string{"--testset-max-bytes=33554432"}, nil, "--testset-memory-bytes 100663296: must be at least"},
		{[]string{"--drift-interval=-1m"}, nil, "--drift-interval -1m0s: must be 0 (off) or more"},
		{[]string{"--tls-cert-file=tls.crt"}, nil, "--tls-cert-file and --tls-key-file must be given together"},
		{nil, map[string]string{"EVAL_OPERATOR_API_QPS": "fast"}, "EVAL_OPERATOR_API_QPS"},
		{[]string{"--no-such-flag"}, nil, "no-such-flag"},
	}
	for _, tc := range cases {
		_, err := parse(tc.args, tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse(%v, %v) = %v, want an error containing %q", tc.args, tc.env, err, tc.want)
		}
	}
}

func TestGracefulShutdownTimeout(t *testing.T) {
	cases := []struct {
		args []string
		want time.Duration
	}{
		{nil, 15 * time.Second}, // --api-timeout 10s + 5s
		// --rest-drain-delay 5s + --rest-sync-timeout 10s + 5s for requests in flight + 5s
		{[]string{"--serve-api=:8082"}, 25 * time.Second},
		{[]string{"--serve-api=:8082", "--rest-drain-delay=0s"}, 20 * time.Second},
		{[]string{"--serve-api=:8082", "--rest-drain-delay=30s"}, 50 * time.Second},
		{[]string{"--serve-api=:8082", "--api-timeout=30s"}, 35 * time.Second},
		{[]string{"--rest-sync-timeout=1m"}, 15 * time.Second}, // no REST server, nothing to drain
	}
	for _, tc := range cases {
		c, err := parse(tc.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.gracefulShutdownTimeout(); got != tc.want {
			t.Errorf("%v: gracefulShutdownTimeout() = %s, want %s", tc.args, got, tc.want)
		}
	}
}

// A namespace's write budget follows what bounds writes: the API server
// standalone, the service's own budget with --api-url; flags override both.
func TestTenantWrites(t *testing.T) {
	cases := []struct {
		args []string
		want tenantBudget
	}{
		{nil, tenantBudget{qps: restapi.DefaultTenantQPS, burst: restapi.DefaultTenantBurst}},
		{[]string{"--api-url=https://eval.example.com/api/v2"}, tenantBudget{qps: 5, burst: 20}},
		{[]string{"--api-url=https://eval.example.com/api/v2", "--api-qps=100", "--api-burst=200"}, tenantBudget{qps: 25, burst: 100}},
		{[]string{"--rest-tenant-qps=7", "--rest-tenant-burst=9"}, tenantBudget{qps: 7, burst: 9}},
		{[]string{"--api-url=https://eval.example.com/api/v2", "--api-burst=1"}, tenantBudget{qps: 5, burst: 1}},
	}
	for _, tc := range cases {
		c, err := parse(tc.args, nil)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := c.tenantWrites(); got != tc.want {
			t.Errorf("%v: tenantWrites() = %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// --rest-tenant-max sets the budget of the kinds it names, over the
// registry's defaults; the per-kind flags it replaced still work.
func TestTenantMax(t *testing.T) {
	want := tenancy.DefaultBudget()
	want["Metric"], want["Testset"], want["EvaluationRun"] = 5, 7, 9
	c, err := parse([]string{"--rest-tenant-max=Metric=5,Testset=1", "--rest-tenant-max", "Testset=7",
		"--rest-tenant-max-evaluation-runs=9"}, map[string]string{"EVAL_OPERATOR_REST_TENANT_MAX": "TestcaseDeletion=3"})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(c.restBudget, want) {
		t.Errorf("budget = %v, want %v (the command line wins over the environment)", c.restBudget, want)
	}
	c, err = parse(nil, map[string]string{"EVAL_OPERATOR_REST_TENANT_MAX": "TestcaseDeletion=3"})
	if err != nil || c.restBudget["TestcaseDeletion"] != 3 || c.restBudget["Metric"] != 500 {
		t.Errorf("from the environment: budget = %v, err %v", c.restBudget, err)
	}
	for _, bad := range []struct{ arg, want string }{
		{"--rest-tenant-max=Metric", `"Metric" is not Kind=N`},
		{"--rest-tenant-max=Metric=0", "Metric=0: the budget must be a positive integer"},
		{"--rest-tenant-max=Metrics=5", `"Metrics" is not a kind with a budget; they are Metric, Testset`},
		{"--rest-tenant-max=EvaluationService=5", `"EvaluationService" is not a kind with a budget`},
		{"--rest-tenant-max-testsets=many", "Testset=many: the budget must be a positive integer"},
	} {
		if _, err := parse([]string{bad.arg}, nil); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err = %v, want %q", bad.arg, err, bad.want)
		}
	}
}
