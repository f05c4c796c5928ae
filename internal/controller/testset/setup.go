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

// Package testset reconciles Testsets: each one's remote Testset created
// once (guarded against duplicates, recovered from the service's list by
// name), its testcases kept those of its source (inline, a ConfigMap's JSON
// Lines) by key, swept again every drift interval, and the remote Testset
// deleted or orphaned with the object, under its management policies.
package testset

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// configMapIndex indexes Testsets by the ConfigMap their testcases come from.
const configMapIndex = ".spec.configMapRef.name"

// Setup registers the Testset reconciler with mgr: workers reconciles in
// parallel; requestTimeout is the services' per-request timeout, after
// which a create cut off mid-flight is settled from the service's list;
// artifacts fetches Flux sources' artifacts; limits bound every source's
// set (zero fields: testcases.DefaultLimits'); memory bounds the bytes of
// the sets held at once, at least MinMemory(limits) (DefaultMemory if
// zero). The Flux source kinds the cluster serves now are watched; one
// installed later needs a restart.
func Setup(mgr ctrl.Manager, b kit.Base, workers int, requestTimeout time.Duration, artifacts Artifacts,
	limits testcases.Limits, memory int64) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Testset{}, configMapIndex,
		func(obj client.Object) []string {
			if ref := obj.(*v1alpha1.Testset).Spec.ConfigMapRef; ref != nil {
				return []string{ref.Name}
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("indexing Testsets by ConfigMap: %w", err)
	}
	if err := indexRemoteIDs(mgr); err != nil {
		return err
	}
	if requestTimeout <= 0 {
		requestTimeout = remote.DefaultTimeout
	}
	limits = limits.OrDefaults()
	if memory <= 0 {
		memory = DefaultMemory
	}
	budget, err := newMemoryBudget(memory, limits)
	if err != nil {
		return err
	}
	r := &Reconciler{Base: b, drift: kit.NewDriftSchedules(b.Clock), inFlight: requestTimeout + recoveryMargin,
		artifacts: artifacts.withDefaults(), fluxServed: fluxServed(mgr.GetRESTMapper()), synced: newSyncedSets(),
		limits: limits, sets: newSetCache(setCacheSets * limits.Bytes), fetches: newFetchLine(workers),
		memory: budget}
	watches := []kit.Watch{{Object: &corev1.ConfigMap{}, Map: users(mgr.GetClient(), configMapIndex),
		// Metadata only: a ConfigMap's data is read when its Testsets are
		// reconciled, never cached; a change of its data changes its
		// resourceVersion, which the metadata watch sees.
		Options: []builder.WatchesOption{builder.OnlyMetadata}}}
	for _, kind := range fluxKinds {
		if r.fluxServed[kind] {
			if err := indexSourceRef(mgr, kind); err != nil {
				return err
			}
			// A new artifact changes the source's status, not its generation.
			watches = append(watches, kit.Watch{Object: newFluxSource(kind), Map: users(mgr.GetClient(), sourceIndex(kind))})
		}
	}
	return kit.Register(mgr, b, workers, kit.Kind{
		Object: &v1alpha1.Testset{}, List: &v1alpha1.TestsetList{}, Reconciler: r.lifecycle(),
		Predicates: predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, kit.PersonControlled, kit.IDEdited(v1alpha1.TestsetIDAnnotation)),
		Watches:    watches,
	})
}

// setCacheSets is how many sets of the largest size the set cache holds.
const setCacheSets = 2

// withDefaults is a copy of f with its defaults filled in, whose HTTP
// client follows no redirect.
func (f Artifacts) withDefaults() *Artifacts {
	if f.Timeout <= 0 {
		f.Timeout = DefaultArtifactTimeout
	}
	if f.MaxBytes <= 0 {
		f.MaxBytes = DefaultArtifactMaxBytes
	}
	hc := http.Client{}
	if f.HTTP != nil {
		hc = *f.HTTP
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	f.HTTP = &hc
	return &f
}

// sourceIndex indexes Testsets by the Flux source of kind they read.
func sourceIndex(kind v1alpha1.SourceKind) string { return ".spec.sourceRef." + string(kind) }

func indexSourceRef(mgr ctrl.Manager, kind v1alpha1.SourceKind) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Testset{}, sourceIndex(kind),
		func(obj client.Object) []string {
			if ref := obj.(*v1alpha1.Testset).Spec.SourceRef; ref != nil && ref.Kind == kind {
				return []string{ref.Name}
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("indexing Testsets by %s: %w", kind, err)
	}
	return nil
}

// users maps a source object to the Testsets that read it, by index.
func users(c client.Client, index string) handler.MapFunc {
	return func(ctx context.Context, src client.Object) []reconcile.Request {
		l := &v1alpha1.TestsetList{}
		if err := c.List(ctx, l, client.InNamespace(src.GetNamespace()),
			client.MatchingFields{index: src.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the Testsets that read a source", "source", src.GetName())
			return nil
		}
		return kit.RequestsFor(l)
	}
}
