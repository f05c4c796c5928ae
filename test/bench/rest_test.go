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

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi"
	"github.com/eval-operator/eval-operator/test/framework"
)

// restRun measures POST metric on the REST server in standalone mode with c
// requests in flight, against creating the same number of Metrics straight
// through the API server with c in flight. reconcilers is the manager's
// MaxConcurrentReconciles.
func (b *bench) restRun(ctx context.Context, tab *table, n, c, reconcilers int) (err error) {
	raw, rawLatencies, err := b.rawCreates(ctx, n, c)
	if err != nil {
		return fmt.Errorf("raw creates: %w", err)
	}

	key := framework.NewKey("bench") // unique: the REST server finds the namespace by key
	ns, err := framework.NewNamespace(ctx, b.k8s, "bench-rest", key)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mgr, err := b.startManager(ctx, controller.Options{
		Service: evalapi.Standalone{}, Standalone: true, MaxConcurrentReconciles: reconcilers,
	}, func(mgr ctrl.Manager) error {
		cs, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		// Admission control off: the run measures what the server can do for one tenant.
		srv, err := restapi.New(restapi.Options{Listener: ln, Client: mgr.GetClient(), Cache: mgr.GetCache(), KubeClient: cs,
			MaxInflight: 1 << 16, TenantQPS: 1e9, TenantBurst: 1 << 30})
		if err != nil {
			return err
		}
		return mgr.Add(srv)
	})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, mgr.stop()) }()

	post := poster{
		url:  "http://" + ln.Addr().String() + restapi.BasePath + "/projects/proj-bench/metrics",
		key:  key,
		http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: c}},
	}
	if err := post.waitAccepted(ctx); err != nil {
		return err
	}
	elapsed, latencies, err := framework.Parallel(ctx, n, c, func(ctx context.Context, i int) error {
		return post.metric(ctx, fmt.Sprintf("rest-%05d", i), i)
	})
	if err != nil {
		return err
	}
	p50, p99 := percentiles(latencies)
	rawP50, rawP99 := percentiles(rawLatencies)
	label := fmt.Sprintf("REST, %d in flight, C=%d: ", c, reconcilers)
	tab.add(label+"POST metric (standalone, answered once Ready)",
		fmt.Sprintf("%.0f req/s, p50 %.1f ms, p99 %.1f ms", float64(n)/elapsed.Seconds(), p50, p99),
		fmt.Sprintf("raw API-server create %.0f/s, p50 %.1f ms, p99 %.1f ms", float64(n)/raw.Seconds(), rawP50, rawP99),
		fmt.Sprintf("%.2fx the time", elapsed.Seconds()/raw.Seconds()))
	return b.deleteMetrics(ctx, ns)
}

// rawCreates creates n Metrics with c in flight while no manager runs.
func (b *bench) rawCreates(ctx context.Context, n, c int) (time.Duration, []time.Duration, error) {
	ns, err := b.newNamespace(ctx, "bench-raw")
	if err != nil {
		return 0, nil, err
	}
	elapsed, latencies, err := framework.Parallel(ctx, n, c, func(ctx context.Context, i int) error {
		return b.k8s.Create(ctx, framework.NewMetric(ns, fmt.Sprintf("m-%05d", i), i))
	})
	if err != nil {
		return 0, nil, err
	}
	return elapsed, latencies, b.deleteMetrics(ctx, ns)
}

// poster sends POST metric requests to the REST server.
type poster struct {
	url, key string
	http     *http.Client
}

// metric creates Metric name of variant i and expects 201.
func (p poster) metric(ctx context.Context, name string, i int) error {
	m := framework.NewMetric("", name, i)
	body, err := json.Marshal(evalapi.MetricRequest{
		Name: m.Spec.Name, EvalType: string(m.Spec.EvalType), OutputType: string(m.Spec.OutputType),
		PromptTemplate: m.Spec.PromptTemplate,
	})
	if err != nil {
		return err
	}
	status, answer, err := p.send(ctx, body)
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("POST metric answered %d: %s", status, answer)
	}
	return err
}

func (p poster) send(ctx context.Context, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := p.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = res.Body.Close() }()
	answer, err := io.ReadAll(res.Body)
	return res.StatusCode, answer, err
}

// waitAccepted waits until the server serves and knows the key.
func (p poster) waitAccepted(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return p.metric(ctx, "rest-warmup", 0) == nil, nil
	})
}
