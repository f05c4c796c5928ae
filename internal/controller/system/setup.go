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

package system

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
)

// systemRefIndex indexes SystemVersions by the name of their System.
const systemRefIndex = ".spec.systemRef.name"

// Setup registers the System and SystemVersion reconcilers with mgr, with
// workers reconciles of each in parallel. A System's change wakes its
// versions.
func Setup(mgr ctrl.Manager, b kit.Base, workers int) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.SystemVersion{}, systemRefIndex,
		func(obj client.Object) []string { return []string{obj.(*v1alpha1.SystemVersion).Spec.SystemRef.Name} })
	if err != nil {
		return fmt.Errorf("indexing SystemVersions by System: %w", err)
	}
	err = kit.Register(mgr, b, workers, kit.Kind{
		Object: &v1alpha1.System{}, List: &v1alpha1.SystemList{}, Reconciler: (&Reconciler{Base: b}).lifecycle(),
		Predicates: predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, kit.PersonControlled,
			kit.IDEdited(v1alpha1.SystemIDAnnotation), kit.IDEdited(v1alpha1.ProductionVersionAnnotation)),
	})
	if err != nil {
		return err
	}
	return kit.Register(mgr, b, workers, kit.Kind{
		Object: &v1alpha1.SystemVersion{}, List: &v1alpha1.SystemVersionList{}, Reconciler: (&VersionReconciler{Base: b}).lifecycle(),
		Predicates: predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, kit.PersonControlled,
			kit.IDEdited(v1alpha1.SystemVersionIDAnnotation)),
		Watches: []kit.Watch{{Object: &v1alpha1.System{}, Map: versionsOf(mgr.GetClient())}},
	})
}

// versionsOf maps a System to its namespace's SystemVersions of it.
func versionsOf(c client.Client) handler.MapFunc {
	return func(ctx context.Context, s client.Object) []reconcile.Request {
		l := &v1alpha1.SystemVersionList{}
		if err := c.List(ctx, l, client.InNamespace(s.GetNamespace()),
			client.MatchingFields{systemRefIndex: s.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the versions of a System", "system", s.GetName())
			return nil
		}
		return kit.RequestsFor(l)
	}
}
