//go:build bench

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

// Package bench measures the operator against the floors under it: the API
// server's own write rate and the upstream service's latency. It is not part
// of `make test`; run it with `make bench` (N=1000) or `make bench-long`
// (N=10000). It prints one markdown table; docs/performance.md records it.
package bench

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var (
	flagN           = flag.Int("n", 1000, "Metrics per throughput run")
	flagConcurrency = flag.String("c", "4,16", "comma-separated MaxConcurrentReconciles values to run; the floors use the same concurrency")
	flagLatency     = flag.Duration("latency", 20*time.Millisecond, "latency the upstream test server adds to every request")
	flagRSSN        = flag.Int("rss-n", 0, "Metrics for the memory run of the manager binary (default: -n); -1 skips it")
	flagRESTN       = flag.Int("rest-n", 1000, "POST requests of the REST server run; 0 skips it")
	flagRESTC       = flag.String("rest-c", "1,32", "comma-separated requests in flight of the REST server runs: 1 measures the path a request takes, more the server under load")
	flagOut         = flag.String("out", "", "also write the table to this file")
	flagWorkers     = flag.Int("workers", 0, "MaxConcurrentReconciles of the operator run (0: the -c value); above -c the upstream client keeps at most -c requests in flight (MaxInFlight), as the floors do")
	flagPprofDir    = flag.String("pprof-dir", "", "save the manager binary's heap profiles of the memory run in this directory")
	flagPromptBytes = flag.Int("prompt-bytes", 0, "pad each Metric's promptTemplate (ai) or guidelines (others) to this many bytes; 0 keeps the short defaults")
)

// bench is the control plane, the upstream test server and a client of the
// benchmark's own, shared by every run.
type bench struct {
	cp     *framework.ControlPlane
	cfg    *rest.Config // the API server, with client-side rate limiting off
	k8s    client.WithWatch
	server *evalapitest.Server
	dir    string
}

// TestBench runs every measurement and prints the table.
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("the benchmark takes minutes")
	}
	ctrl.SetLogger(logr.Discard()) // reconcile errors are counted from the metrics instead
	concurrencies, err := parseInts(*flagConcurrency)
	if err != nil {
		t.Fatal(err)
	}
	restConcurrencies, err := parseInts(*flagRESTC)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	b := setUp(t)
	tab := &table{}
	tab.note("N=%d Metrics, upstream latency %s, %d CPUs, prompt bytes %d (0: short defaults); the manager's API-server client has no client-side rate limit (QPS -1; the binary's --kube-api-qps is 300), the upstream client no QPS limit",
		*flagN, *flagLatency, runtimeCPUs(), *flagPromptBytes)

	for _, c := range concurrencies {
		if err := b.syncRun(ctx, tab, *flagN, c); err != nil {
			t.Fatalf("sync run with concurrency %d: %v", c, err)
		}
	}
	if rssN := cmp.Or(*flagRSSN, *flagN); rssN > 0 {
		if err := b.memoryRun(ctx, tab, rssN, concurrencies[len(concurrencies)-1]); err != nil {
			t.Fatalf("memory run: %v", err)
		}
	}
	if err := b.restRuns(ctx, tab, restConcurrencies, concurrencies[len(concurrencies)-1]); err != nil {
		t.Fatal(err)
	}

	b.kindRuns(ctx, t, tab, concurrencies[len(concurrencies)-1])

	out := tab.markdown()
	fmt.Println(out)
	if *flagOut != "" {
		if err := os.WriteFile(*flagOut, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// kindRuns runs the measurements of the other kinds and of isolation, each
// skipped when its flag is 0.
func (b *bench) kindRuns(ctx context.Context, t *testing.T, tab *table, concurrency int) {
	t.Helper()
	if *flagTestsetN > 0 {
		if err := b.testsetRun(ctx, tab, *flagTestsetN); err != nil {
			t.Fatalf("testset run: %v", err)
		}
	}
	if *flagVerdictN > 0 {
		if err := b.verdictRun(ctx, tab, *flagVerdictN); err != nil {
			t.Fatalf("verdict run: %v", err)
		}
	}
	if *flagVerdictHung > 0 {
		if err := b.verdictIsolationRun(ctx, tab, *flagVerdictHung, concurrency); err != nil {
			t.Fatalf("verdict isolation run: %v", err)
		}
	}
	if *flagIsolationN > 0 {
		if err := b.isolationRun(ctx, tab, *flagIsolationN, *flagIsolationHung, concurrency); err != nil {
			t.Fatalf("isolation run: %v", err)
		}
	}
	if *flagSystemVersionN > 0 {
		if err := b.systemVersionRun(ctx, tab, *flagSystemVersionN, concurrency); err != nil {
			t.Fatalf("SystemVersion run: %v", err)
		}
	}
	if err := executorRuns(ctx, tab); err != nil {
		t.Fatal(err)
	}
}

// restRuns runs the REST server runs, standalone and remote, at each
// number of requests in flight, with reconcilers workers.
func (b *bench) restRuns(ctx context.Context, tab *table, inFlight []int, reconcilers int) error {
	if *flagRESTN == 0 {
		return nil
	}
	for _, c := range inFlight {
		if err := b.restRun(ctx, tab, *flagRESTN, c, reconcilers); err != nil {
			return fmt.Errorf("REST run with %d in flight: %w", c, err)
		}
		if err := b.restRemoteRun(ctx, tab, *flagRESTN, c, reconcilers); err != nil {
			return fmt.Errorf("REST run in remote mode with %d in flight: %w", c, err)
		}
	}
	return nil
}

// setUp starts the control plane and the upstream test server, and builds
// the manager binary.
func setUp(t *testing.T) *bench {
	t.Helper()
	dir := t.TempDir()
	cp, err := framework.StartControlPlane(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	// No client-side limit: the runs measure what the operator's code costs;
	// the binary keeps one (--kube-api-qps, 300 by default) that a backlog
	// of creates can reach.
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1
	b := &bench{cp: cp, cfg: cfg, dir: dir}
	if b.k8s, err = client.NewWithWatch(cfg, client.Options{Scheme: framework.Scheme()}); err != nil {
		t.Fatal(err)
	}
	b.server = evalapitest.New(evalapitest.WithLatency(*flagLatency))
	t.Cleanup(b.server.Close)
	return b
}

func parseInts(list string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("-c %q: want positive integers separated by commas", list)
		}
		out = append(out, v)
	}
	return out, nil
}

// newMetric is framework.NewMetric with its text padded to -prompt-bytes:
// the promptTemplate of an ai Metric, the guidelines of the others (each
// within its CRD bound).
func newMetric(namespace, name string, i int) *v1alpha1.Metric {
	m := framework.NewMetric(namespace, name, i)
	if *flagPromptBytes <= 0 {
		return m
	}
	pad := func(s v1alpha1.Text, limit int) *v1alpha1.Text {
		return ptr.To(s + v1alpha1.Text(strings.Repeat(".", max(0, min(*flagPromptBytes, limit)-len(s)))))
	}
	if m.Spec.PromptTemplate != nil {
		m.Spec.PromptTemplate = pad(*m.Spec.PromptTemplate, 32768)
	} else {
		m.Spec.Guidelines = pad("Judge the response.", 16384)
	}
	return m
}

// newNamespace creates a namespace with a key Secret the test server accepts.
func (b *bench) newNamespace(ctx context.Context, prefix string) (string, error) {
	return framework.NewNamespace(ctx, b.k8s, prefix, evalapitest.DefaultKey)
}
