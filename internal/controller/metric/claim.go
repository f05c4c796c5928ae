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

package metric

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
)

// claim is the Metric's claim step: a recorded id must be valid and no
// other Metric's on its service.
func (r *Reconciler) claim(ctx context.Context, s *scope) (kit.Outcome, bool, error) {
	id := s.Obj.RecordedID()
	if id == "" {
		return kit.Outcome{}, false, nil
	}
	return r.claimOutcome(ctx, s.Conn.Endpoint, s.Obj, id)
}

// claimOutcome returns the Stalled outcome of a Metric whose recorded id id
// is invalid or held by another Metric on the service at endpoint, and
// false when the claim is sound (kit.ClaimOutcome).
func (r *Reconciler) claimOutcome(ctx context.Context, endpoint string, m *v1alpha1.Metric, id string) (
	kit.Outcome, bool, error,
) {
	if !v1alpha1.ValidResourceID(id) {
		return kit.InvalidID(kit.MetricIDs, id), true, nil
	}
	var list v1alpha1.MetricList
	if err := r.Client.List(ctx, &list, client.MatchingFields{kit.MetricIDIndex: id}); err != nil {
		return kit.Progressing(v1alpha1.ReasonCreating, "checking that no other Metric holds id "+id),
			false, fmt.Errorf("listing the Metrics that hold id %s: %w", id, err)
	}
	o, refused := kit.ClaimOutcome(kit.MetricIDs, id, endpoint, m, kit.Pointers(list.Items))
	return o, refused, nil
}
