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
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/remote"
)

var (
	flagIsolationN    = flag.Int("isolation-n", 200, "Metrics on the healthy service of the isolation run; 0 skips it")
	flagIsolationHung = flag.Int("isolation-hung", 50, "Metrics on the hung service of the isolation run")
)

// hungTimeout is the hung service's request timeout (its spec.limits.timeout).
const hungTimeout = 2 * time.Second

// isolationRun measures what a hung service costs another service's
// Metrics: n Metrics on service B become Ready once with service A idle,
// once while hung Metrics wait on service A, which answers nothing until
// its timeout. One manager with c workers, both services as
// EvaluationServices; the goal is at most 1.2x.
func (b *bench) isolationRun(ctx context.Context, tab *table, n, hung, c int) (err error) {
	silent, mgr, err := b.hungSetUp(ctx, c)
	if err != nil {
		return err
	}
	defer silent.stop()
	defer func() { err = errors.Join(err, mgr.stop()) }()

	serviceAt := func(prefix, url string, maxInFlight ...int32) (string, error) {
		return b.serviceNamespace(ctx, prefix, url, maxInFlight...)
	}
	alone, err := serviceAt("iso-alone-", b.server.URL())
	if err != nil {
		return err
	}
	idle, err := b.createAndWaitReady(ctx, mgr.mgr.GetCache(), alone, n, c)
	if err != nil {
		return fmt.Errorf("B with A idle: %w", err)
	}

	// beside measures B while hung Metrics wait on a silent service A
	// whose maxInFlight is limit (0: the default share of the workers).
	beside := func(prefix string, limit int32) (time.Duration, error) {
		nsA, err := serviceAt(prefix+"hung-", silent.URL+"/api/v2", limit)
		if err != nil {
			return 0, err
		}
		for i := range hung {
			if err := b.k8s.Create(ctx, newMetric(nsA, fmt.Sprintf("hung-%05d", i), i)); err != nil {
				return 0, err
			}
		}
		time.Sleep(hungTimeout) // every worker A can hold is holding
		nsB, err := serviceAt(prefix+"beside-", b.server.URL())
		if err != nil {
			return 0, err
		}
		during, err := b.createAndWaitReady(ctx, mgr.mgr.GetCache(), nsB, n, c)
		if err != nil {
			return 0, fmt.Errorf("B with A hung: %w", err)
		}
		return during, b.pauseMetrics(ctx, nsA)
	}
	during, err := beside("iso-", 0)
	if err != nil {
		return err
	}
	// The same without the share: what a hung service costs when it may hold every worker.
	unbounded, err := beside("iso-all-", 1024)
	if err != nil {
		return err
	}
	label := fmt.Sprintf("isolation, %d workers: ", c)
	tab.add(label+fmt.Sprintf("%d Metrics on service B Ready, service A idle", n), idle.Round(time.Millisecond).String(), "", "")
	tab.add(label+fmt.Sprintf("the same while %d Metrics wait on service A, which answers nothing for %s", hung, hungTimeout),
		during.Round(time.Millisecond).String(), "B with A idle", fmt.Sprintf("%.2fx (goal <= 1.2x)", during.Seconds()/idle.Seconds()))
	tab.add(label+"the same with A's maxInFlight at 1024 instead of half the workers",
		unbounded.Round(time.Millisecond).String(), "B with A idle", fmt.Sprintf("%.2fx", unbounded.Seconds()/idle.Seconds()))
	return nil
}

// silentServer answers nothing until its client gives up.
type silentServer struct{ *httptest.Server }

func (s silentServer) stop() {
	s.CloseClientConnections()
	s.Close()
}

// hungSetUp starts a service that answers nothing for twice hungTimeout and
// an in-process manager with c workers that may call it.
func (b *bench) hungSetUp(ctx context.Context, c int) (silentServer, *running, error) {
	silent := silentServer{httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * hungTimeout):
		}
	}))}
	mgr, err := b.startManager(ctx, controller.Options{MaxConcurrentReconciles: c,
		Defaults: remote.Defaults{Workers: c, AllowPrivateServiceAddresses: true}}, nil)
	if err != nil {
		silent.stop()
		return silent, nil, err
	}
	return silent, mgr, nil
}

// serviceNamespace is a new namespace with its key Secret and its default
// EvaluationService at url, with the hung service's timeout and, when given,
// maxInFlight.
func (b *bench) serviceNamespace(ctx context.Context, prefix, url string, maxInFlight ...int32) (string, error) {
	ns, err := b.newNamespace(ctx, prefix)
	if err != nil {
		return "", err
	}
	svc := &v1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1alpha1.DefaultServiceName},
		Spec: v1alpha1.EvaluationServiceSpec{ServiceConnection: v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL(url),
			Limits: v1alpha1.ServiceLimits{Timeout: &metav1.Duration{Duration: hungTimeout}}}}}
	if len(maxInFlight) > 0 {
		svc.Spec.Limits.MaxInFlight = &maxInFlight[0]
	}
	return ns, b.k8s.Create(ctx, svc)
}

// pauseMetrics pauses every Metric of ns: a service that answers nothing
// keeps their creates pending, so they could not be deleted; paused, they
// make no call and hold no worker.
func (b *bench) pauseMetrics(ctx context.Context, ns string) error {
	var all v1alpha1.MetricList
	if err := b.k8s.List(ctx, &all, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing Metrics: %w", err)
	}
	paused := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+v1alpha1.PausedAnnotation+`":"true"}}}`))
	for i := range all.Items {
		if err := b.k8s.Patch(ctx, &all.Items[i], paused); err != nil {
			return fmt.Errorf("pausing %s: %w", all.Items[i].Name, err)
		}
	}
	return nil
}
