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
	"fmt"
	"slices"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
)

// indexRemoteIDs adds kit.TestsetIDIndex to mgr's cache.
func indexRemoteIDs(mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Testset{}, kit.TestsetIDIndex,
		func(obj client.Object) []string {
			t := obj.(*v1alpha1.Testset)
			var ids []string
			for _, id := range []string{t.Annotations[v1alpha1.TestsetIDAnnotation], t.Status.ID} {
				if id != "" && !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
			return ids
		})
	if err != nil {
		return fmt.Errorf("indexing Testsets by remote id: %w", err)
	}
	return nil
}

// claimOutcome returns the Stalled outcome of a Testset whose recorded id
// is invalid or held by another Testset on the service at endpoint, and
// false when the claim is sound or it records none: two Testsets syncing
// one remote Testset would replace each other's testcases.
func (r *Reconciler) claimOutcome(ctx context.Context, endpoint string, t *v1alpha1.Testset) (kit.Outcome, bool, error) {
	id := t.RecordedID()
	switch {
	case id == "":
		return kit.Outcome{}, false, nil
	case !v1alpha1.ValidResourceID(id):
		return kit.InvalidID(kit.TestsetIDs, id), true, nil
	}
	var list v1alpha1.TestsetList
	if err := r.Client.List(ctx, &list, client.MatchingFields{kit.TestsetIDIndex: id}); err != nil {
		return kit.Progressing(v1alpha1.ReasonCreating, "checking that no other Testset holds id "+id),
			false, fmt.Errorf("listing the Testsets that hold id %s: %w", id, err)
	}
	o, refused := kit.ClaimOutcome(kit.TestsetIDs, id, endpoint, t, kit.Pointers(list.Items))
	return o, refused, nil
}
