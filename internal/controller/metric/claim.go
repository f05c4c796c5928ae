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
	"github.com/eval-operator/eval-operator/internal/quote"
)

// A recorded remote id is checked before anything is done under it: it must
// be a valid id, and no other Metric of the cluster may hold it on the same
// service. With a cluster service's key shared by namespaces, the service
// cannot tell one tenant from another: the operator keeps them apart. Either
// fault is a person's to fix (a mistyped or copied annotation), so the
// Metric stalls without a retry; a change of the annotation re-triggers it.

// claimOutcome returns the Stalled outcome of a Metric whose recorded id id
// is invalid or held by another Metric on the service at endpoint, and
// false when the claim is sound.
func (r *Reconciler) claimOutcome(ctx context.Context, endpoint string, m *v1alpha1.Metric, id string) (
	kit.Outcome, bool, error,
) {
	if !v1alpha1.ValidResourceID(id) {
		return invalidID(id), true, nil
	}
	var list v1alpha1.MetricList
	if err := r.Client.List(ctx, &list, client.MatchingFields{remoteIDIndex: id}); err != nil {
		return kit.Progressing(v1alpha1.ReasonCreating, "checking that no other Metric holds id "+id),
			false, fmt.Errorf("listing the Metrics that hold id %s: %w", id, err)
	}
	if holder := holderOf(id, endpoint, m, list.Items); holder != nil {
		return claimed(id, m, holder), true, nil
	}
	return kit.Outcome{}, false, nil
}

// holderOf returns the Metric among others that holds id on the service at
// endpoint ahead of m (Metric.HoldsIDBefore), or nil when m holds it.
func holderOf(id, endpoint string, m *v1alpha1.Metric, others []v1alpha1.Metric) *v1alpha1.Metric {
	var holder *v1alpha1.Metric
	for i := range others {
		o := &others[i]
		if o.UID == m.UID || !claims(o, id, endpoint) {
			continue
		}
		if o.HoldsIDBefore(m) && (holder == nil || o.HoldsIDBefore(holder)) {
			holder = o
		}
	}
	return holder
}

// claims reports whether o is a live claim on id at endpoint: recorded,
// valid, not itself stalled as a duplicate, and on that service (or on no
// recorded one yet, which the next reconcile of o records as its own).
func claims(o *v1alpha1.Metric, id, endpoint string) bool {
	at := o.Annotations[v1alpha1.ServiceAnnotation]
	return (o.Annotations[v1alpha1.MetricIDAnnotation] == id || o.Status.ID == id) && !o.IDRefused() &&
		(at == "" || at == endpoint)
}

func invalidID(id string) kit.Outcome {
	return kit.Stalled(v1alpha1.ReasonInvalidMetricID, fmt.Sprintf(
		"annotation %s holds %s, which is not a valid id (1 to %d letters, digits, '.', '_', ':' or '-', starting "+
			"with a letter or digit); correct or remove the annotation",
		v1alpha1.MetricIDAnnotation, quote.Prefix(id), v1alpha1.ResourceIDMaxLength))
}

// claimed names the holder only to a claimant of its own namespace: the
// names of another namespace's objects are not the claimant's to see.
func claimed(id string, m, holder *v1alpha1.Metric) kit.Outcome {
	who := "another object of the cluster"
	if holder.Namespace == m.Namespace {
		who = "Metric " + holder.Name + " of this namespace"
	}
	return kit.Stalled(v1alpha1.ReasonMetricIDClaimed, fmt.Sprintf(
		"%s already holds remote id %s on this service; two objects cannot manage one remote Metric: "+
			"correct or remove annotation %s", who, id, v1alpha1.MetricIDAnnotation))
}
