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

package kit

import (
	"fmt"
	"slices"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/quote"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// A recorded remote id is checked before anything is done under it: it must
// be a valid id, and no other object of the kind in the cluster may hold it
// on the same service. With a cluster service's key shared by namespaces,
// the service cannot tell one tenant from another: the operator keeps them
// apart. Either fault is a person's to fix (a mistyped or copied
// annotation), so the object stalls without a retry; a change of the
// annotation re-triggers it.

// IDKind says how a kind records its remote id, for the outcomes of its
// claims.
type IDKind struct {
	// Kind names the kind in messages; Annotation is its id annotation.
	Kind, Annotation string
	// Invalid and Claimed are its reasons for an invalid id and for an id
	// another object holds.
	Invalid, Claimed string
}

// MetricIDs and TestsetIDs are how Metrics and Testsets record their remote
// ids, for the claim checks of those kinds and of the runs that name them.
var (
	MetricIDs = IDKind{Kind: "Metric", Annotation: v1alpha1.MetricIDAnnotation,
		Invalid: v1alpha1.ReasonInvalidMetricID, Claimed: v1alpha1.ReasonMetricIDClaimed}
	TestsetIDs = IDKind{Kind: "Testset", Annotation: v1alpha1.TestsetIDAnnotation,
		Invalid: v1alpha1.ReasonInvalidTestsetID, Claimed: v1alpha1.ReasonTestsetIDClaimed}
)

// MetricIDIndex and TestsetIDIndex index Metrics and Testsets by the remote
// ids they record (id annotation and status.id), cluster-wide: their
// families register them, and the claim checks list by them.
const (
	MetricIDIndex  = "remoteID"
	TestsetIDIndex = "testset.remoteID"
)

// HolderOf returns the object among others that holds id on the service at
// endpoint ahead of self (v1alpha1.HoldsIDBefore), and false when self
// holds it.
func HolderOf[T v1alpha1.IDClaim](id, endpoint string, self T, others []T) (holder T, found bool) {
	holder, found = Holder(id, endpoint, slices.DeleteFunc(slices.Clone(others), func(o T) bool {
		return o.GetUID() == self.GetUID()
	}))
	if !found || !v1alpha1.HoldsIDBefore(holder, self) {
		var none T
		return none, false
	}
	return holder, true
}

// Holder returns the object among others that holds id on the service at
// endpoint: of those that claim it, the first by v1alpha1.HoldsIDBefore;
// false when none claims it.
func Holder[T v1alpha1.IDClaim](id, endpoint string, others []T) (holder T, found bool) {
	for _, o := range others {
		if claims(o, id, endpoint) && (!found || v1alpha1.HoldsIDBefore(o, holder)) {
			holder, found = o, true
		}
	}
	return holder, found
}

// Pointers returns pointers to each of items, for HolderOf and ClaimOutcome.
func Pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// claims reports whether o is a live claim on id at endpoint: recorded,
// valid, not itself stalled as a duplicate, and on that service (or on no
// recorded one yet, which the next reconcile of o records as its own).
func claims(o v1alpha1.IDClaim, id, endpoint string) bool {
	at := o.GetAnnotations()[v1alpha1.ServiceAnnotation]
	return o.RecordsID(id) && !o.IDRefused() && (at == "" || at == endpoint)
}

// ClaimOutcome returns the Stalled outcome of self, whose recorded id is id,
// when the id is invalid or held by one of others on the service at
// endpoint, and false when the claim is sound.
func ClaimOutcome[T v1alpha1.IDClaim](k IDKind, id, endpoint string, self T, others []T) (Outcome, bool) {
	if !v1alpha1.ValidResourceID(id) {
		return InvalidID(k, id), true
	}
	holder, found := HolderOf(id, endpoint, self, others)
	if !found {
		return Outcome{}, false
	}
	return Claimed(k, id, self, holder), true
}

// InvalidID is the outcome of an invalid recorded id.
func InvalidID(k IDKind, id string) Outcome {
	return Stalled(k.Invalid, fmt.Sprintf(
		"annotation %s holds %s, which is not a valid id (1 to %d letters, digits, '.', '_', ':' or '-', starting "+
			"with a letter or digit); correct or remove the annotation",
		k.Annotation, quote.Prefix(id), v1alpha1.ResourceIDMaxLength))
}

// Claimed is the outcome of a claim on an id holder holds. It names the
// holder only to a claimant of its own namespace: the names of another
// namespace's objects are not the claimant's to see.
func Claimed(k IDKind, id string, self, holder v1alpha1.IDClaim) Outcome {
	who := "another object of the cluster"
	if holder.GetNamespace() == self.GetNamespace() {
		who = k.Kind + " " + holder.GetName() + " of this namespace"
	}
	return Stalled(k.Claimed, fmt.Sprintf(
		"%s already holds remote id %s on this service; two objects cannot manage one remote %s: "+
			"correct or remove annotation %s", who, id, k.Kind, k.Annotation))
}

// SharedKey says why an object using conn may not take on a remote id it
// did not create (conn.MayAdopt is false), in the words every kind uses.
func SharedKey(conn *remote.Connection) string {
	return conn.Service + "'s key is shared by every namespace it allows, so which namespace a remote id belongs to " +
		"cannot be told, and its spec.adoption does not allow adoption"
}
