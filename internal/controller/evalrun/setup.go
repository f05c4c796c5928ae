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

package evalrun

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

// refIndex indexes EvaluationRuns not created yet by the Testset, Metrics
// and SystemVersion they name ("Testset/name", "Metric/name",
// "SystemVersion/name"): one of them becoming
// Ready wakes the runs waiting for it.
const refIndex = ".spec.refs"

// passedVersionIndex indexes Passed EvaluationRuns by the system version
// they judged: a production baseline is the latest of its version's.
const passedVersionIndex = ".status.passedVersion"

// Setup registers the EvaluationRun reconciler with mgr, with workers
// reconciles in parallel.
func Setup(mgr ctrl.Manager, b kit.Base, workers int) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.EvaluationRun{}, refIndex,
		func(obj client.Object) []string {
			e := obj.(*v1alpha1.EvaluationRun)
			if e.RecordedID() != "" {
				return nil
			}
			var out []string
			if e.Spec.TestsetRef != nil {
				out = append(out, "Testset/"+e.Spec.TestsetRef.Name)
			}
			for _, m := range e.Spec.MetricRefs {
				out = append(out, "Metric/"+m.Name)
			}
			if ref := e.Spec.SystemVersionRef; ref != nil {
				out = append(out, "SystemVersion/"+ref.Name)
			}
			return out
		})
	if err != nil {
		return fmt.Errorf("indexing EvaluationRuns by the objects they name: %w", err)
	}
	err = mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.EvaluationRun{}, passedVersionIndex,
		func(obj client.Object) []string {
			e := obj.(*v1alpha1.EvaluationRun)
			if e.Status.Verdict != verdict.Passed || e.Status.SystemVersionID == "" {
				return nil
			}
			return []string{e.Status.SystemVersionID}
		})
	if err != nil {
		return fmt.Errorf("indexing EvaluationRuns by the version they passed: %w", err)
	}
	return kit.Register(mgr, b, workers, kit.Kind{
		Object: &v1alpha1.EvaluationRun{}, List: &v1alpha1.EvaluationRunList{}, Reconciler: (&Reconciler{Base: b}).lifecycle(),
		Predicates: predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, kit.PersonControlled,
			kit.IDEdited(v1alpha1.RunIDAnnotation)),
		Watches: []kit.Watch{
			{Object: &v1alpha1.Testset{}, Map: waiting(mgr.GetClient(), "Testset")},
			{Object: &v1alpha1.Metric{}, Map: waiting(mgr.GetClient(), "Metric")},
			{Object: &v1alpha1.SystemVersion{}, Map: waiting(mgr.GetClient(), "SystemVersion")},
			// The manager caches only Jobs with the executor label (CacheOptions).
			{Object: &batchv1.Job{}, Map: ownerRun},
		},
	})
}

// waiting maps an object of kind to the runs of its namespace that wait for it.
func waiting(c client.Client, kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		l := &v1alpha1.EvaluationRunList{}
		if err := c.List(ctx, l, client.InNamespace(obj.GetNamespace()),
			client.MatchingFields{refIndex: kind + "/" + obj.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the EvaluationRuns that wait for an object", "kind", kind, "name", obj.GetName())
			return nil
		}
		return kit.RequestsFor(l)
	}
}
