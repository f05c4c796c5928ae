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
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// configMapIndex indexes Testsets by the ConfigMap their testcases come from.
const configMapIndex = ".spec.configMapRef.name"

// Setup registers the Testset reconciler with mgr: workers reconciles in
// parallel; requestTimeout is the services' per-request timeout, after
// which a create cut off mid-flight is settled from the service's list.
func Setup(mgr ctrl.Manager, b kit.Base, workers int, requestTimeout time.Duration) error {
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
	if requestTimeout <= 0 {
		requestTimeout = remote.DefaultTimeout
	}
	r := &Reconciler{Base: b, drift: kit.NewDriftSchedules(b.Clock), inFlight: requestTimeout + recoveryMargin}
	return kit.Register(mgr, b, workers, kit.Kind{
		Object: &v1alpha1.Testset{}, List: &v1alpha1.TestsetList{}, Reconciler: r,
		Predicates: predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, kit.PersonControlled, adoptedByID),
		// Metadata only: a ConfigMap's data is read when its Testsets are
		// reconciled, never cached, and a change of its data changes its
		// resourceVersion.
		Watches: []kit.Watch{{Object: &corev1.ConfigMap{}, Map: usersOfConfigMap(mgr.GetClient()),
			Options: []builder.WatchesOption{builder.OnlyMetadata}}},
	})
}

// adoptedByID passes a person's edit of the testset-id annotation: an
// adoption. The reconciler's own write of it drops create-pending with it.
var adoptedByID = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, cur := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
		_, pending := old[v1alpha1.CreatePendingAnnotation]
		return old[v1alpha1.TestsetIDAnnotation] != cur[v1alpha1.TestsetIDAnnotation] && !pending
	},
}

// usersOfConfigMap maps a ConfigMap to the Testsets that read it.
func usersOfConfigMap(c client.Client) handler.MapFunc {
	return func(ctx context.Context, cm client.Object) []reconcile.Request {
		l := &v1alpha1.TestsetList{}
		if err := c.List(ctx, l, client.InNamespace(cm.GetNamespace()),
			client.MatchingFields{configMapIndex: cm.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing Testsets that read a ConfigMap", "configMap", cm.GetName())
			return nil
		}
		return kit.RequestsFor(l)
	}
}
