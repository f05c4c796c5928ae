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

package testset

import (
	"context"
	"errors"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=testsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=testsets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories;buckets,verbs=get;list;watch

// Reconciler keeps each Testset's remote Testset and its testcases those of
// its source.
//
// The remote Testset is created once, with the Metric's guard: the
// create-pending annotation is written, with an optimistic-concurrency
// update, before the request is sent, and the remote id is written to the
// testset-id annotation right after. Pending without an id is settled from
// the service's list of the project's Testsets by name once the request is
// surely over. Testcases carry no id in etcd: which remote testcase is which
// comes from a sweep of the remote list, by the spec's keyField.
type Reconciler struct {
	kit.Base
	drift *kit.DriftSchedules
	// inFlight is how long after its pending mark a create may still be under way.
	inFlight time.Duration
	// artifacts fetches Flux sources' artifacts; fluxServed are the Flux
	// source kinds the cluster served when the manager started.
	artifacts  *Artifacts
	fluxServed map[v1alpha1.SourceKind]bool
	synced     *syncedSets
	// limits bound every source's set; sets holds the sets of sources read
	// before, shared by their Testsets; fetches bounds the artifact fetches
	// under way, and memory the sets held, per namespace and in all.
	limits  testcases.Limits
	sets    *setCache
	fetches *fetchLine
	memory  *memoryBudget
}

// recoveryMargin is added to the request timeout before a cut-off create is
// taken to be over (the Metric's margin, for the same reasons).
const recoveryMargin = 10 * time.Second

// scope is one reconcile of one Testset.
type scope = kit.Scope[*v1alpha1.Testset, remote.TestsetClient]

// lifecycle is the Testset's part of kit.Lifecycle: its client, its
// finalizer, its claim, and its steps: load the set, then sync it.
func (r *Reconciler) lifecycle() *kit.Lifecycle[*v1alpha1.Testset, remote.TestsetClient] {
	return &kit.Lifecycle[*v1alpha1.Testset, remote.TestsetClient]{Base: r.Base,
		New:            func() *v1alpha1.Testset { return &v1alpha1.Testset{} },
		ClientFor:      (*remote.Connection).Testset,
		Remote:         &kit.TestsetIDs,
		NeedsFinalizer: remote.TestsetClient.NeedsFinalizer,
		Finalize:       r.finalize,
		Claim: func(ctx context.Context, s *scope) (kit.Outcome, bool, error) {
			return r.claimOutcome(ctx, s.Conn.Endpoint, s.Obj)
		},
		Steps: r.loadAndSync,
	}
}

// loadAndSync loads the Testset's set from its source, holding its memory
// while it is synced.
func (r *Reconciler) loadAndSync(ctx context.Context, s *scope) (kit.Outcome, ctrl.Result, error) {
	set, held, bad, res, err := r.load(ctx, s.Obj)
	defer held.release()
	if bad != nil {
		return *bad, res, err
	}
	if err != nil {
		s.Unsaid()
		return kit.Outcome{}, ctrl.Result{}, err
	}
	return r.sync(ctx, s, set)
}

// badData is the outcome of a source that holds bad data, or nil.
func badData(err error) *kit.Outcome {
	var bad *testcases.Error
	if !errors.As(err, &bad) {
		return nil
	}
	o := kit.Stalled(bad.Reason, bad.Message+"; nothing is sent until the whole set is valid")
	return &o
}
