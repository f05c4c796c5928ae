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

package restapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
)

// benchConcurrency is the number of requests in flight in the benchmarks.
const benchConcurrency = 32

// The benchmarks start their own control plane on first use (the Ginkgo
// suite's lives only while RunSpecs runs); TestMain stops it.
var (
	benchOnce    sync.Once
	benchHarness *harness
	benchTenant  tenant
	benchErr     error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchHarness != nil {
		if err := benchHarness.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the benchmark control plane:", err)
		}
	}
	os.Exit(code)
}

func benchEnv(b *testing.B) (*harness, tenant) {
	b.Helper()
	benchOnce.Do(func() {
		ctrl.SetLogger(logr.Discard())
		if benchHarness, benchErr = startHarness(logr.Discard()); benchErr == nil {
			benchTenant, benchErr = benchHarness.newTenant(context.Background())
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	if err := benchHarness.settle(benchTenant.namespace); err != nil {
		b.Fatal(err)
	}
	return benchHarness, benchTenant
}

// settle waits until the reconciler has caught up with every Metric in
// namespace, so one benchmark's backlog does not slow down the next.
func (h *harness) settle(namespace string) error {
	return wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 5*time.Minute, true,
		func(ctx context.Context) (bool, error) {
			var l evaluationv1alpha1.MetricList
			if err := h.k8s.List(ctx, &l, client.InNamespace(namespace)); err != nil {
				return false, err
			}
			for i := range l.Items {
				if !meta.IsStatusConditionTrue(l.Items[i].Status.Conditions, evaluationv1alpha1.ConditionReady) {
					return false, nil
				}
			}
			return true, nil
		})
}

// BenchmarkPostMetric measures POST /projects/{projectId}/metrics end to end
// in standalone mode: create, reconcile, answer. The benchmarks share one
// namespace, whose default budget is 500 Metrics: run this one alone, at
// most 450 times:
//
//	go test ./internal/restapi -run '^$' -bench PostMetric -benchtime 450x
func BenchmarkPostMetric(b *testing.B) {
	h, t := benchEnv(b)
	body := variantBody("ai", "int")
	measureParallel(b, func(ctx context.Context) error {
		rep, err := h.do(ctx, h.url, request{method: http.MethodPost, path: projectPath, key: t.key, body: body})
		if err == nil && rep.status != http.StatusCreated {
			err = fmt.Errorf("answer %d: %s", rep.status, rep.body)
		}
		return err
	})
}

// BenchmarkRawCreate measures creating the same Metric straight through the
// API server: the floor of one write, without waiting for the reconciler.
func BenchmarkRawCreate(b *testing.B) {
	h, t := benchEnv(b)
	measureParallel(b, func(ctx context.Context) error {
		return h.k8s.Create(ctx, benchMetric(t))
	})
}

// BenchmarkRawCreateAndReconcile measures creating the Metric straight
// through the API server and waiting until the reconciler made it Ready:
// BenchmarkPostMetric without HTTP, authentication and decoding.
func BenchmarkRawCreateAndReconcile(b *testing.B) {
	h, t := benchEnv(b)
	ep := createMetric()
	measureParallel(b, func(ctx context.Context) error {
		m := benchMetric(t)
		if err := h.k8s.Create(ctx, m); err != nil {
			return err
		}
		if res := h.server.await(ctx, ep, client.ObjectKeyFromObject(m), "", 0); res.Status != http.StatusCreated {
			return fmt.Errorf("answer %d: %+v", res.Status, res.Body)
		}
		return nil
	})
}

// BenchmarkListMetrics measures GET /projects/{projectId}/metrics, the
// first page of 20, in a namespace of 20 Metrics and in one of 2,000: a
// page should cost about the same whatever the namespace holds.
//
//	go test ./internal/restapi -run '^$' -bench ListMetrics -benchtime 2000x
func BenchmarkListMetrics(b *testing.B) {
	for _, size := range []int{20, 2000} {
		b.Run(fmt.Sprintf("namespace=%d", size), func(b *testing.B) {
			h, t := benchNamespace(b, size)
			measureParallel(b, func(ctx context.Context) error {
				rep, err := h.do(ctx, h.url, request{method: http.MethodGet, path: projectPath + "?limit=20", key: t.key})
				if err == nil && rep.status != http.StatusOK {
					err = fmt.Errorf("answer %d: %s", rep.status, rep.body)
				}
				return err
			})
		})
	}
}

// benchNamespaces are the tenants of BenchmarkListMetrics by size, made once.
var benchNamespaces = map[int]tenant{}

// benchNamespace returns a tenant whose namespace holds size settled
// Metrics, created straight through the API server.
func benchNamespace(b *testing.B, size int) (*harness, tenant) {
	b.Helper()
	h, _ := benchEnv(b)
	if t, ok := benchNamespaces[size]; ok {
		return h, t
	}
	ctx := context.Background()
	t, err := h.newTenant(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var g errgroup.Group
	g.SetLimit(benchConcurrency)
	for range size {
		g.Go(func() error { return h.k8s.Create(ctx, benchMetric(t)) })
	}
	if err := errors.Join(g.Wait(), h.settle(t.namespace)); err != nil {
		b.Fatal(err)
	}
	benchNamespaces[size] = t
	return h, t
}

func benchMetric(t tenant) *evaluationv1alpha1.Metric {
	return &evaluationv1alpha1.Metric{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, GenerateName: "raw-"},
		Spec: evaluationv1alpha1.MetricSpec{
			ProjectID: "proj-1", Name: "m", EvalType: "ai", OutputType: "int",
			PromptTemplate:  ptr.To[evaluationv1alpha1.Text]("Rate {{outputs.response}}"),
			APIKeySecretRef: &evaluationv1alpha1.SecretKeySelector{Name: t.secret, Key: "apiKey"},
		},
	}
}

// measureParallel runs op b.N times with benchConcurrency in flight and
// reports the rate and latency percentiles.
func measureParallel(b *testing.B, op func(context.Context) error) {
	b.Helper()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((benchConcurrency + procs - 1) / procs)
	var (
		mu        sync.Mutex
		latencies []time.Duration
	)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			if err := op(context.Background()); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		latencies = append(latencies, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
