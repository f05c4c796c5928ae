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
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/test/framework"
)

// apiCounter counts the requests a manager sends to the API server.
type apiCounter struct {
	objectWrites, statusWrites, eventWrites, reads atomic.Int64
}

func (c *apiCounter) writes() int64 {
	return c.objectWrites.Load() + c.statusWrites.Load() + c.eventWrites.Load()
}

// wrap is a rest.Config WrapTransport. Lists and watches are GETs too; only
// GETs of one object count as reads, since lists and watches happen once.
func (c *apiCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		path := r.URL.Path
		switch {
		case r.Method == http.MethodGet:
			if r.URL.Query().Get("watch") == "" && isObjectPath(path) {
				c.reads.Add(1)
			}
		case strings.Contains(path, "/events"):
			c.eventWrites.Add(1)
		case strings.HasSuffix(path, "/status"):
			c.statusWrites.Add(1)
		default:
			c.objectWrites.Add(1)
		}
		return rt.RoundTrip(r)
	})
}

// isObjectPath tells /api/v1/namespaces/ns/secrets/name (one object) from
// /api/v1/namespaces/ns/secrets (a list): an object path has an odd number
// of segments after the namespace.
func isObjectPath(path string) bool {
	_, rest, ok := strings.Cut(path, "/namespaces/")
	return ok && strings.Count(rest, "/")%2 == 0 && strings.Count(rest, "/") > 0
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// running is an in-process manager with the reconcilers.
type running struct {
	mgr    ctrl.Manager
	api    *apiCounter
	cancel context.CancelFunc
	done   chan error
}

// startManager starts a manager whose API-server requests are counted, with
// the reconcilers set up from opts and extra Runnables added by add (given
// the reconcilers' connector), and waits for its cache.
func (b *bench) startManager(ctx context.Context, opts controller.Options, add func(ctrl.Manager, *remote.Connector) error) (
	*running, error,
) {
	r := &running{api: &apiCounter{}, done: make(chan error, 1)}
	cfg := rest.CopyConfig(b.cfg)
	cfg.Wrap(r.api.wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 framework.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Every run starts a manager of its own in this one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:      controller.CacheOptions(nil),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	connector, err := controller.SetupWithManager(mgr, opts)
	if err != nil {
		return nil, err
	}
	if add != nil {
		if err := add(mgr, connector); err != nil {
			return nil, err
		}
	}
	r.mgr = mgr
	ctx, r.cancel = context.WithCancel(ctx)
	go func() { r.done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.Join(errors.New("the manager's cache did not sync"), r.stop())
	}
	return r, nil
}

// stop stops the manager and returns what its Start returned.
func (r *running) stop() error {
	r.cancel()
	return <-r.done
}

// reconcileStats are controller-runtime's counters of one controller, read
// from the process-wide registry every manager here shares.
type reconcileStats struct{ total, errors, depth float64 }

// readReconcileStats reads the Metric controller's counters.
func readReconcileStats() (reconcileStats, error) { return readControllerStats("metric") }

// readControllerStats reads the counters of the controller named name (its
// kind in lower case).
func readControllerStats(name string) (reconcileStats, error) {
	list, err := metrics.Registry.Gather()
	if err != nil {
		return reconcileStats{}, fmt.Errorf("gathering metrics: %w", err)
	}
	return controllerStats(familyMap(list), name), nil
}

func familyMap(list []*dto.MetricFamily) map[string]*dto.MetricFamily {
	families := make(map[string]*dto.MetricFamily, len(list))
	for _, f := range list {
		families[f.GetName()] = f
	}
	return families
}

func statsOf(families map[string]*dto.MetricFamily) reconcileStats {
	return controllerStats(families, "metric")
}

func controllerStats(families map[string]*dto.MetricFamily, name string) reconcileStats {
	return reconcileStats{
		total:  framework.Sum(families, "controller_runtime_reconcile_total", map[string]string{"controller": name}),
		errors: framework.Sum(families, "controller_runtime_reconcile_errors_total", map[string]string{"controller": name}),
		depth:  framework.Sum(families, "workqueue_depth", map[string]string{"name": name}),
	}
}

// waitIdle polls read until at least n reconciles happened since before and
// the queue is empty, and returns the stats at that point.
func waitIdle(ctx context.Context, read func() (reconcileStats, error), before reconcileStats, n int) (reconcileStats, error) {
	var now reconcileStats
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Minute, true, func(context.Context) (bool, error) {
		var err error
		if now, err = read(); err != nil {
			return false, err
		}
		return now.total-before.total >= float64(n) && now.depth == 0, nil
	})
	return now, err
}
