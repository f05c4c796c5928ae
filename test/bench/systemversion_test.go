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
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/test/framework"
)

var flagSystemVersionN = flag.Int("sv-n", 100, "SystemVersions of one System for the restart over unchanged versions; 0 skips it")

// systemWrites and systemReads are the service's operations on Systems and
// their versions that change something, and that only read.
var (
	systemWrites = []string{evalapitest.OpUpsertSystem, evalapitest.OpUpdateSystem, evalapitest.OpDeleteSystem,
		evalapitest.OpUpsertSystemVersion}
	systemReads  = []string{evalapitest.OpGetSystem, evalapitest.OpListSystems}
	versionReads = []string{evalapitest.OpGetSystemVersion}
)

// systemVersionRun creates a System and n SystemVersions of it, waits until
// all are Ready, then restarts the manager over them unchanged: an upsert
// of a config already recorded must cost no write to the service (a read
// at most) and none to the API server.
func (b *bench) systemVersionRun(ctx context.Context, tab *table, n, c int) error {
	ns, err := b.newNamespace(ctx, "bench-sv")
	if err != nil {
		return err
	}
	svc, err := evalapi.NewClient(evalapi.Options{BaseURL: b.server.URL(), MaxInFlight: c})
	if err != nil {
		return err
	}
	opts := controller.Options{MaxConcurrentReconciles: c, Defaults: remote.Defaults{Service: svc}}
	created, err := b.createSystemVersions(ctx, opts, ns, n, c)
	if err != nil {
		return err
	}
	writes, reads, sysReads := b.calls(systemWrites), b.calls(versionReads), b.calls(systemReads)
	resync, apiWrites, err := b.restart(ctx, opts, func() (reconcileStats, error) {
		return readControllerStats("systemversion")
	}, n)
	if err != nil {
		return err
	}
	label := fmt.Sprintf("C=%d: restart over %d Ready SystemVersions of one System: ", c, n)
	tab.add(label+"service writes, service reads, API writes per SystemVersion",
		fmt.Sprintf("%s, %s (and %d of the System), %s", perObject(int64(b.calls(systemWrites)-writes), n),
			perObject(int64(b.calls(versionReads)-reads), n), b.calls(systemReads)-sysReads, perObject(apiWrites, n)),
		"0, at most 1, 0", "")
	tab.add(label+"start to all reconciled", rate(n, resync), "create to all Ready "+rate(n, created), "")
	return nil
}

// createSystemVersions runs a manager with opts while it creates a System
// and n SystemVersions of it in ns, with c workers, and returns the time
// from the first create until all are Ready.
func (b *bench) createSystemVersions(ctx context.Context, opts controller.Options, ns string, n, c int) (
	elapsed time.Duration, err error) {
	mgr, err := b.startManager(ctx, opts, nil)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, mgr.stop()) }()
	start := time.Now()
	if err := b.k8s.Create(ctx, &v1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"},
		Spec: v1alpha1.SystemSpec{ProjectID: "proj-bench", Name: "bench", Config: apiextensionsv1.JSON{Raw: []byte(`{"v":0}`)},
			APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: framework.KeySecretName}}}); err != nil {
		return 0, err
	}
	if _, _, err := framework.Parallel(ctx, n, c, func(ctx context.Context, i int) error {
		return b.k8s.Create(ctx, &v1alpha1.SystemVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("v-%05d", i)},
			Spec: v1alpha1.SystemVersionSpec{SystemRef: v1alpha1.ObjectRef{Name: "bench"},
				Config: apiextensionsv1.JSON{Raw: fmt.Appendf(nil, `{"v":%d}`, i+1)}}})
	}); err != nil {
		return 0, err
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list v1alpha1.SystemVersionList
		if err := b.k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		ready := 0
		for i := range list.Items {
			if meta.IsStatusConditionTrue(list.Items[i].Status.Conditions, v1alpha1.ConditionReady) {
				ready++
			}
		}
		return ready == n, nil
	})
	if err != nil {
		return 0, fmt.Errorf("waiting for the SystemVersions to be Ready: %w", err)
	}
	elapsed = time.Since(start)
	// Let the manager settle (late status writes) before the restart.
	time.Sleep(quietPeriod)
	return elapsed, nil
}

// calls counts the requests of ops the test server got.
func (b *bench) calls(ops []string) int {
	total := 0
	for _, op := range ops {
		total += b.server.Calls(op)
	}
	return total
}
