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
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// A run that names a remote Testset or Metric by its id is held to the
// claim rules of those kinds: one object owns a remote id per service,
// cluster-wide. An id another namespace's object holds on the run's service
// is refused (Stalled TestsetIDClaimed or MetricIDClaimed). An id no object
// holds is the service's to check under a key of the namespace's own; under
// a ClusterEvaluationService's own key, which every namespace it allows
// shares, naming it is adopting it (Stalled AdoptionNotAllowed unless the
// service's spec.adoption allows it), and so is a projectId none of the
// run's own Testset and Metrics belongs to. Nothing is called until the run
// passes.

// owned checks the ids e names on its service, and its projectId under
// a shared key; projects are those of the Testset and Metrics it names by
// reference. It returns the outcome that stops e, or nil.
func (r *Reconciler) owned(ctx context.Context, s *scope, projects []string) (
	*kit.Outcome, error) {
	e := s.Obj
	if id := string(e.Spec.TestsetID); id != "" {
		var list v1alpha1.TestsetList
		if err := r.Client.List(ctx, &list, client.MatchingFields{kit.TestsetIDIndex: id}); err != nil {
			return nil, fmt.Errorf("listing the Testsets that hold id %s: %w", id, err)
		}
		holder, o := ownerOf(kit.TestsetIDs, "spec.testsetId", id, s, kit.Pointers(list.Items))
		if o != nil {
			return o, nil
		}
		if holder != nil {
			projects = append(projects, string(holder.Spec.ProjectID))
		}
	}
	for i, id := range e.Spec.MetricIDs {
		var list v1alpha1.MetricList
		if err := r.Client.List(ctx, &list, client.MatchingFields{kit.MetricIDIndex: string(id)}); err != nil {
			return nil, fmt.Errorf("listing the Metrics that hold id %s: %w", id, err)
		}
		holder, o := ownerOf(kit.MetricIDs, fmt.Sprintf("spec.metricIds[%d]", i), string(id), s, kit.Pointers(list.Items))
		if o != nil {
			return o, nil
		}
		if holder != nil {
			projects = append(projects, string(holder.Spec.ProjectID))
		}
	}
	if s.Conn.MayAdopt || slices.Contains(projects, string(e.Spec.ProjectID)) {
		return nil, nil
	}
	o := kit.Stalled(v1alpha1.ReasonAdoptionNotAllowed, fmt.Sprintf(
		"spec.projectId %s is not the project of a Testset or Metric this run names that its namespace holds: %s; "+
			"name the project of the run's own Testset and Metrics", e.Spec.ProjectID, sharedKey(s.Conn)))
	return &o, nil
}

// ownerOf returns the object of e's namespace that holds id (named at field
// of e's spec) on s.Conn's service, or the outcome that refuses the id: held
// by another namespace's object, or by none under a shared key. A nil holder
// and outcome is an id no object holds, under a key the service checks.
func ownerOf[T v1alpha1.IDClaim](k kit.IDKind, field, id string, s *scope,
	claimants []T) (owner T, o *kit.Outcome) {
	e := s.Obj
	holder, found := kit.Holder(id, s.Conn.Endpoint, claimants)
	var none T
	switch {
	case found && holder.GetNamespace() == e.Namespace:
		return holder, nil
	case found:
		stalled := kit.Stalled(k.Claimed, fmt.Sprintf(
			"%s names remote %s %s, which a %s of another namespace holds on this service: a run names only the "+
				"remote objects its own namespace holds", field, k.Kind, id, k.Kind))
		return none, &stalled
	case !s.Conn.MayAdopt:
		stalled := kit.Stalled(v1alpha1.ReasonAdoptionNotAllowed, fmt.Sprintf(
			"%s names remote %s %s, which no %s of this namespace holds: %s; create a %s for it in this namespace "+
				"and name that, or give the run its own spec.apiKeySecretRef", field, k.Kind, id, k.Kind, sharedKey(s.Conn), k.Kind))
		return none, &stalled
	}
	return none, nil
}

// sharedKey says why s.Conn may not take on a remote id no object holds.
func sharedKey(conn *remote.Connection) string {
	return conn.Service + "'s key is shared by every namespace it allows, so whose it is cannot be told, and its " +
		"spec.adoption does not allow adoption"
}

// adoption returns the outcome that stops e from following run id, which a
// person recorded in its run-id annotation rather than the operator at the
// create (status.runId), under a shared key: whose run it is cannot be told.
func adoption(s *scope, id string) (kit.Outcome, bool) {
	e := s.Obj
	if s.Conn.MayAdopt || e.Status.RunID == id {
		return kit.Outcome{}, false
	}
	return kit.Stalled(v1alpha1.ReasonAdoptionNotAllowed, fmt.Sprintf(
		"annotation %s names run %s, which this object did not create: %s; give the run its own "+
			"spec.apiKeySecretRef, or remove the annotation", v1alpha1.RunIDAnnotation, id, sharedKey(s.Conn))), true
}
