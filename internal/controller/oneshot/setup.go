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

// Package oneshot reconciles one-shot jobs against a service: an object
// asks for one thing to be done once (today a TestsetDeletion or a
// TestcaseDeletion), its reconciler does it until the service confirms,
// records the outcome, and garbage-collects the finished object after its
// TTL. A later run-like kind reuses the same reconciler with its own send.
package oneshot

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
)

// Setup registers the reconcilers of the one-shot kinds with mgr, workers
// reconciles of each in parallel.
func Setup(mgr ctrl.Manager, b kit.Base, workers int) error {
	// A job's spec does not change once it runs; only its generation and a
	// person's pause or retry call for a reconcile.
	preds := predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, kit.PersonControlled)
	kinds := []kit.Kind{
		{Object: &v1alpha1.TestsetDeletion{}, List: &v1alpha1.TestsetDeletionList{},
			Reconciler: newTestsetDeletionReconciler(b), Predicates: preds},
		{Object: &v1alpha1.TestcaseDeletion{}, List: &v1alpha1.TestcaseDeletionList{},
			Reconciler: newTestcaseDeletionReconciler(b), Predicates: preds},
	}
	for _, k := range kinds {
		if err := kit.Register(mgr, b, workers, k); err != nil {
			return err
		}
	}
	return nil
}
