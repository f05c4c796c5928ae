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
	silent := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * hungTimeout):
		}
	}))
	defer func() {
		silent.CloseClientConnections()
		silent.Close()
	}()
	mgr, err := b.startManager(ctx, managerOptions{Options: controller.Options{MaxConcurrentReconciles: c},
		Defaults: remote.Defaults{Workers: c, AllowPrivateServiceAddresses: true}}, nil)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, mgr.stop()) }()

	serviceAt := func(prefix, url string) (string, error) {
		ns, err := b.newNamespace(ctx, prefix)
		if err != nil {
			return "", err
		}
		svc := &v1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1alpha1.DefaultServiceName},
			Spec: v1alpha1.EvaluationServiceSpec{ServiceConnection: v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL(url),
				Limits: v1alpha1.ServiceLimits{Timeout: &metav1.Duration{Duration: hungTimeout}}}}}
		return ns, b.k8s.Create(ctx, svc)
	}
	alone, err := serviceAt("iso-alone-", b.server.URL())
	if err != nil {
		return err
	}
	idle, err := b.createAndWaitReady(ctx, mgr.mgr.GetCache(), alone, n, c)
	if err != nil {
		return fmt.Errorf("B with A idle: %w", err)
	}

	nsA, err := serviceAt("iso-hung-", silent.URL+"/api/v2")
	if err != nil {
		return err
	}
	for i := range hung {
		if err := b.k8s.Create(ctx, newMetric(nsA, fmt.Sprintf("hung-%05d", i), i)); err != nil {
			return err
		}
	}
	time.Sleep(hungTimeout) // every worker A can hold is holding
	beside, err := serviceAt("iso-beside-", b.server.URL())
	if err != nil {
		return err
	}
	during, err := b.createAndWaitReady(ctx, mgr.mgr.GetCache(), beside, n, c)
	if err != nil {
		return fmt.Errorf("B with A hung: %w", err)
	}
	label := fmt.Sprintf("isolation, %d workers: ", c)
	tab.add(label+fmt.Sprintf("%d Metrics on service B Ready, service A idle", n), idle.Round(time.Millisecond).String(), "", "")
	tab.add(label+fmt.Sprintf("the same while %d Metrics wait on service A, which answers nothing for %s", hung, hungTimeout),
		during.Round(time.Millisecond).String(), "B with A idle", fmt.Sprintf("%.2fx (goal <= 1.2x)", during.Seconds()/idle.Seconds()))
	return nil
}
