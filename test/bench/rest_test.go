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

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/restapi"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/test/framework"
)

// restRun measures POST metric on the REST server in standalone mode with c
// requests in flight, against creating the same number of Metrics straight
// through the API server with c in flight, and the largest bulk delete.
// reconcilers is the manager's MaxConcurrentReconciles.
func (b *bench) restRun(ctx context.Context, tab *table, n, c, reconcilers int) (err error) {
	// The references first, while no manager runs to reconcile what they create.
	raw, rawLatencies, err := b.rawCreates(ctx, n, c)
	if err != nil {
		return fmt.Errorf("raw creates: %w", err)
	}
	durableRun, err := b.apiServerFloor(ctx, n, c, durableWrites)
	if err != nil {
		return fmt.Errorf("durable floor: %w", err)
	}
	durable := durableRun.elapsed
	floorLatencies, err := b.standaloneFloor(ctx, n, c, reconcilers)
	if err != nil {
		return fmt.Errorf("standalone floor: %w", err)
	}
	rawBulk, err := b.rawLargestDeletion(ctx)
	if err != nil {
		return fmt.Errorf("raw bulk delete creates: %w", err)
	}
	srv, err := b.startREST(ctx, controller.Options{MaxConcurrentReconciles: reconcilers}, c)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.stop()) }()
	elapsed, latencies, err := srv.postMetrics(ctx, n, c, fmt.Sprintf("rest-standalone-%d", c))
	if err != nil {
		return err
	}
	p50, p99 := percentiles(latencies)
	rawP50, rawP99 := percentiles(rawLatencies)
	label := fmt.Sprintf("REST, %d in flight, C=%d: ", c, reconcilers)
	tab.add(label+"POST metric (standalone, answered once the create is committed)",
		fmt.Sprintf("%.0f req/s, p50 %.1f ms, p99 %.1f ms", float64(n)/elapsed.Seconds(), p50, p99),
		fmt.Sprintf("raw API-server create %.0f/s, p50 %.1f ms, p99 %.1f ms", float64(n)/raw.Seconds(), rawP50, rawP99),
		fmt.Sprintf("%.2fx the time, p50 %.2fx (goal at most 2x)", elapsed.Seconds()/raw.Seconds(), p50/rawP50))
	tab.add(label+"POST metric throughput against the durable floor", fmt.Sprintf("%.0f req/s", float64(n)/elapsed.Seconds()),
		"durable floor "+rate(n, durable), fmt.Sprintf("%.2fx the floor's rate (goal at least 0.8x)", durable.Seconds()/elapsed.Seconds()))
	floorP50, _ := percentiles(floorLatencies)
	tab.add(label+"standalone floor: creates while their status and event writes keep up, no manager",
		fmt.Sprintf("create p50 %.1f ms", floorP50), fmt.Sprintf("raw create p50 %.1f ms", rawP50),
		fmt.Sprintf("%.2fx the raw create; POST metric p50 %.2fx this floor's", floorP50/rawP50, p50/floorP50))

	// The bulk delete is measured alone, once the reconciler has written the
	// statuses of the Metrics answered before it.
	if err := allReadyInCache(ctx, srv.mgr.GetCache(), srv.ns); err != nil {
		return err
	}
	bulk, err := srv.post.largestBulkDelete(ctx)
	if err != nil {
		return fmt.Errorf("bulk delete: %w", err)
	}
	tab.add(label+"POST testcases/bulk-delete, 10,000 ids (standalone), p50 of 5",
		fmt.Sprintf("p50 %.1f ms", bulk),
		fmt.Sprintf("POST metric p50 %.1f ms; raw create of the same TestcaseDeletion p50 %.1f ms", p50, rawBulk),
		fmt.Sprintf("%.2fx the POST metric p50 (goal at most 2x), %.2fx the raw create", bulk/p50, bulk/rawBulk))
	return b.deleteMetrics(ctx, srv.ns)
}

// restRemoteRun measures POST metric on the REST server in remote mode, each
// answered once the reconciler created the remote Metric, against direct
// upstream POSTs and raw creates with c in flight. Goal: p50 at most the
// upstream p50 plus 3 raw-create p50s. The remote floor, the least any
// remote-mode POST can do under DESIGN.md (its create, the Secret read, the
// guarded writes around the service's create and an event, no manager, no
// watch), shows how much of the gap the writes themselves are.
func (b *bench) restRemoteRun(ctx context.Context, tab *table, n, c, reconcilers int) (err error) {
	svc, err := evalapi.NewClient(evalapi.Options{BaseURL: b.server.URL()})
	if err != nil {
		return err
	}
	_, upLatencies, err := b.upstreamFloor(ctx, n, c)
	if err != nil {
		return fmt.Errorf("upstream POSTs: %w", err)
	}
	_, rawLatencies, err := b.rawCreates(ctx, n, c)
	if err != nil {
		return fmt.Errorf("raw creates: %w", err)
	}
	guarded, err := b.apiServerFloor(ctx, n, c, guardedWrites)
	if err != nil {
		return fmt.Errorf("guarded floor: %w", err)
	}
	remoteFloor, err := b.apiServerFloor(ctx, n, c, requiredWritesAround(upstreamCreate(svc)))
	if err != nil {
		return fmt.Errorf("remote floor: %w", err)
	}
	srv, err := b.startREST(ctx, controller.Options{MaxConcurrentReconciles: reconcilers,
		Defaults: remote.Defaults{Service: svc}}, c)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.stop()) }()
	before, err := readCPU()
	if err != nil {
		return err
	}
	elapsed, latencies, err := srv.postMetrics(ctx, n, c, fmt.Sprintf("rest-remote-%d", c))
	if err != nil {
		return err
	}
	after, err := readCPU()
	if err != nil {
		return err
	}
	p50, p99 := percentiles(latencies)
	upP50, _ := percentiles(upLatencies)
	rawP50, _ := percentiles(rawLatencies)
	floorP50, _ := percentiles(remoteFloor.latencies)
	goal := upP50 + 3*rawP50
	label := fmt.Sprintf("REST, %d in flight, C=%d: ", c, reconcilers)
	tab.add(label+"POST metric (remote mode, answered once Ready)",
		fmt.Sprintf("%.0f req/s, p50 %.1f ms, p99 %.1f ms", float64(n)/elapsed.Seconds(), p50, p99),
		fmt.Sprintf("upstream POST p50 %.1f ms + 3 x raw create p50 %.1f ms = %.1f ms", upP50, rawP50, goal),
		fmt.Sprintf("%.2fx the goal", p50/goal))
	tab.add(label+"POST metric (remote mode) throughput against the guarded floor",
		fmt.Sprintf("%.0f req/s", float64(n)/elapsed.Seconds()), "guarded floor "+rate(n, guarded.elapsed),
		fmt.Sprintf("%.2fx the floor's rate", guarded.elapsed.Seconds()/elapsed.Seconds()))
	tab.add(label+"remote floor: create + Secret read + guarded writes around the upstream POST + event, no manager",
		fmt.Sprintf("%s, p50 %.1f ms", rate(n, remoteFloor.elapsed), floorP50), fmt.Sprintf("goal %.1f ms", goal),
		fmt.Sprintf("%.2fx the goal; POST metric p50 %.2fx this floor's", floorP50/goal, p50/floorP50))
	tab.add(label+"CPU time per POST metric (remote mode)", after.since(before, n),
		"remote floor: "+remoteFloor.cpu, "")
	return b.deleteMetrics(ctx, srv.ns)
}

// restServer is a manager with the REST server in a namespace of its own.
type restServer struct {
	*running
	ns   string
	post poster
}

// startREST starts a manager with the reconcilers of opts and the REST
// server (standalone as opts is), and waits until it accepts a POST.
func (b *bench) startREST(ctx context.Context, opts controller.Options, c int) (*restServer, error) {
	key := framework.NewKey("bench") // unique: the REST server finds the namespace by key
	ns, err := framework.NewNamespace(ctx, b.k8s, "bench-rest", key)
	if err != nil {
		return nil, err
	}
	if opts.Service != nil {
		b.server.SetKeys(evalapitest.DefaultKey, key) // the reconciler sends the caller's key upstream
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mgr, err := b.startManager(ctx, opts, func(mgr ctrl.Manager, conn *remote.Connector) error {
		_, err := restapi.AddToManager(mgr, conn, restapi.Options{Listener: ln,
			// Admission control off: the run measures what the server can do for one tenant.
			MaxInflight: 1 << 16, TenantQPS: 1e9, TenantBurst: 1 << 30,
			Budget: tenancy.Budget{"Metric": 1 << 30, "TestsetDeletion": 1 << 30, "TestcaseDeletion": 1 << 30}})
		return err
	})
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String() + restapi.BasePath
	r := &restServer{running: mgr, ns: ns, post: poster{
		base: base, url: base + "/projects/proj-bench/metrics", key: key,
		http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: c}},
	}}
	if err := r.post.waitAccepted(ctx); err != nil {
		return nil, errors.Join(err, mgr.stop())
	}
	return r, nil
}

// postMetrics sends n POST metric requests with c in flight, profiled as
// profile (see -cpuprofile-dir).
func (r *restServer) postMetrics(ctx context.Context, n, c int, profile string) (time.Duration, []time.Duration, error) {
	stop, err := startProfile(profile)
	if err != nil {
		return 0, nil, err
	}
	elapsed, latencies, err := framework.Parallel(ctx, n, c, func(ctx context.Context, i int) error {
		return r.post.metric(ctx, fmt.Sprintf("rest-%05d", i), i)
	})
	return elapsed, latencies, errors.Join(err, stop())
}

// rawCreates creates n Metrics with c in flight while no manager runs.
func (b *bench) rawCreates(ctx context.Context, n, c int) (time.Duration, []time.Duration, error) {
	ns, err := b.newNamespace(ctx, "bench-raw")
	if err != nil {
		return 0, nil, err
	}
	elapsed, latencies, err := framework.Parallel(ctx, n, c, func(ctx context.Context, i int) error {
		return b.k8s.Create(ctx, newMetric(ns, fmt.Sprintf("m-%05d", i), i))
	})
	if err != nil {
		return 0, nil, err
	}
	return elapsed, latencies, b.deleteMetrics(ctx, ns)
}

// standaloneFloor creates n Metrics with c in flight while workers write
// each one's Ready status and Created event as soon as it is created: the
// writes a standalone POST metric leaves to the reconciler, kept up with, and
// nothing else. The latencies are the creates' alone, as the REST server
// answers from the committed create.
func (b *bench) standaloneFloor(ctx context.Context, n, c, workers int) ([]time.Duration, error) {
	ns, err := b.newNamespace(ctx, "bench-standalone-floor")
	if err != nil {
		return nil, err
	}
	made := make([]*v1alpha1.Metric, n)
	created := make(chan int, n) // never blocks a create
	var g errgroup.Group
	for range workers {
		g.Go(func() error {
			for i := range created {
				if err := durableWrites(ctx, b.k8s, made[i], i); err != nil {
					return err
				}
				if err := createdEvent(ctx, b.k8s, made[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	_, latencies, err := framework.Parallel(ctx, n, c, func(ctx context.Context, i int) error {
		made[i] = newMetric(ns, fmt.Sprintf("m-%05d", i), i)
		if err := b.k8s.Create(ctx, made[i]); err != nil {
			return err
		}
		created <- i
		return nil
	})
	close(created)
	if err := errors.Join(err, g.Wait()); err != nil {
		return nil, err
	}
	return latencies, b.deleteMetrics(ctx, ns)
}

// rawLargestDeletion creates 5 TestcaseDeletions of 10,000 ids (the CRD's
// maximum) straight through the API server, one after the other, and returns
// their p50 in ms: the least any answer to the largest bulk delete can take.
func (b *bench) rawLargestDeletion(ctx context.Context) (float64, error) {
	ns, err := b.newNamespace(ctx, "bench-raw-bulk")
	if err != nil {
		return 0, err
	}
	latencies := make([]time.Duration, 5)
	for i := range latencies {
		d := &v1alpha1.TestcaseDeletion{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("raw-bulk-%d", i)},
			Spec:       v1alpha1.TestcaseDeletionSpec{TestcaseIDs: convert.ResourceIDs(largestIDList())},
		}
		start := time.Now()
		if err := b.k8s.Create(ctx, d); err != nil {
			return 0, err
		}
		latencies[i] = time.Since(start)
		if err := b.k8s.Delete(ctx, d); err != nil {
			return 0, err
		}
	}
	p50, _ := percentiles(latencies)
	return p50, nil
}

// largestIDList is a bulk delete's largest id list: 10,000 ids.
func largestIDList() []string {
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = fmt.Sprintf("tc-%05d", i)
	}
	return ids
}

// poster sends POST requests to the REST server.
type poster struct {
	// base is the API's base URL; url the POST metric URL.
	base, url, key string
	http           *http.Client
}

// metric creates Metric name of variant i and expects 201.
func (p poster) metric(ctx context.Context, name string, i int) error {
	m := newMetric("", name, i)
	body, err := json.Marshal(convert.RequestFor(&m.Spec))
	if err != nil {
		return err
	}
	status, answer, err := p.send(ctx, p.url, body)
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("POST metric answered %d: %s", status, answer)
	}
	return err
}

// largestBulkDelete sends 5 bulk deletes of 10,000 ids (the CRD's maximum),
// one after the other, and returns their p50 in ms.
func (p poster) largestBulkDelete(ctx context.Context) (float64, error) {
	body, err := json.Marshal(map[string][]string{"ids": largestIDList()})
	if err != nil {
		return 0, err
	}
	latencies := make([]time.Duration, 5)
	for i := range latencies {
		start := time.Now()
		status, answer, err := p.send(ctx, p.base+"/testcases/bulk-delete", body)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("bulk delete answered %d: %s", status, answer)
		}
		if err != nil {
			return 0, err
		}
		latencies[i] = time.Since(start)
	}
	p50, _ := percentiles(latencies)
	return p50, nil
}

func (p poster) send(ctx context.Context, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
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

// allReadyInCache waits until cache shows every Metric of ns Ready.
func allReadyInCache(ctx context.Context, cache client.Reader, ns string) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var list v1alpha1.MetricList
		if err := cache.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for i := range list.Items {
			if status, _ := framework.Ready(&list.Items[i]); status != metav1.ConditionTrue {
				return false, nil
			}
		}
		return true, nil
	})
}
