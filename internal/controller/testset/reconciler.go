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
	"fmt"
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
	last       *lastSets
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

// Reconcile brings one Testset to Ready.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &v1alpha1.Testset{}
	if live, err := r.GetLive(ctx, req, t); !live {
		if err == nil {
			r.last.forget(req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	conn, cerr := r.Connector.Connect(ctx, t)
	p := r.NewStatusPatcher(t)
	p.Resolved(conn.Service)
	if o, held := kit.HoldIfPaused(t); held {
		return p.Finish(ctx, o, ctrl.Result{}, nil)
	}
	if !t.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, conn, cerr, t, p)
	}
	if o, stop, err := r.checkService(ctx, conn, cerr, t); stop {
		return p.Finish(ctx, o, ctrl.Result{}, err)
	}
	if o, refused, err := r.claimOutcome(ctx, conn.Endpoint, t); refused || err != nil {
		return p.Finish(ctx, o, ctrl.Result{}, err)
	}
	set, held, bad, res, err := r.load(ctx, t)
	defer held.release()
	if bad != nil {
		return p.Finish(ctx, *bad, res, err)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.syncFinalizer(ctx, conn, t); err != nil {
		return ctrl.Result{}, err
	}
	o, res, err := r.sync(ctx, p, conn, t, set)
	return p.Finish(ctx, o, res, err)
}

// checkService stops a Testset that cannot use the service it resolves to,
// or whose remote id or pending create belongs to another service, as for
// a Metric.
func (r *Reconciler) checkService(ctx context.Context, conn *remote.Connection, cerr error, t *v1alpha1.Testset) (
	kit.Outcome, bool, error,
) {
	if cerr != nil {
		o, _, err := kit.ConnectFailure(cerr)
		return o, true, err
	}
	if !mayHaveRemote(t) {
		return kit.Outcome{}, false, nil
	}
	switch recorded := t.Annotations[v1alpha1.ServiceAnnotation]; recorded {
	case conn.Endpoint:
		return kit.Outcome{}, false, nil
	case "":
		err := kit.PatchAnnotations(ctx, r.Client, t, map[string]any{v1alpha1.ServiceAnnotation: conn.Endpoint})
		if err != nil {
			return kit.Progressing(v1alpha1.ReasonPending, "recording the service of the remote id"), true, err
		}
		return kit.Outcome{}, false, nil
	default:
		return kit.Stalled(v1alpha1.ReasonServiceChanged, fmt.Sprintf(
			"remote Testset %s belongs to the service at %s, but this Testset now resolves to %s at %s, so nothing "+
				"is called: point spec.serviceRef (or the default service) back at %s, or, to start over on the new "+
				"service, remove the %s, %s and %s annotations",
			t.RecordedID(), recorded, conn.Service, conn.Endpoint, recorded,
			v1alpha1.TestsetIDAnnotation, v1alpha1.CreatePendingAnnotation, v1alpha1.ServiceAnnotation)), true, nil
	}
}

func mayHaveRemote(t *v1alpha1.Testset) bool { return t.RecordedID() != "" || t.CreatePending() }

func wantsFinalizer(conn *remote.Connection, t *v1alpha1.Testset) bool {
	return conn.HoldsCopies() && t.Spec.DeletesRemote()
}

// syncFinalizer adds the finalizer to a Testset that has, or may have, a
// remote Testset, and removes it where it has no use; see kit.SyncFinalizer.
func (r *Reconciler) syncFinalizer(ctx context.Context, conn *remote.Connection, t *v1alpha1.Testset) error {
	return kit.SyncFinalizer(ctx, r.Client, t, wantsFinalizer(conn, t), mayHaveRemote(t))
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
