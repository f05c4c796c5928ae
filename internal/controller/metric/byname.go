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
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// byNamePages bounds the list adoption by name reads: 100 pages of 100.
// It must read the whole project to conclude that no Metric has the name.
const byNamePages = 100

// createOrAdopt is the step of a Metric with no recorded id: with
// adoptionPolicy ByName, look for its remote Metric by name first; create
// only where managementPolicies allow it.
func (r *Reconciler) createOrAdopt(ctx context.Context, s *scope) (
	kit.Outcome, ctrl.Result, error,
) {
	m := s.Obj
	canCreate := m.Spec.Allows(v1alpha1.ManagementCreate)
	switch {
	case m.Spec.AdoptionPolicy == v1alpha1.AdoptionByName:
		return r.byName(ctx, s, canCreate)
	case !canCreate:
		return r.withoutPending(ctx, m, createNotAllowed(m), ctrl.Result{}, nil)
	}
	return r.create(ctx, s)
}

// byName adopts the project's one Metric named as m's spec, or creates it
// where canCreate.
func (r *Reconciler) byName(ctx context.Context, s *scope,
	canCreate bool) (kit.Outcome, ctrl.Result, error) {
	m := s.Obj
	if canCreate && !m.CreatePending() {
		// The mark goes before the list: a crash between the list and the
		// create is then settled from the service's list, as any cut-off create.
		mark := func(ctx context.Context) error {
			return kit.MarkPending(ctx, r.Client, r.Clock, m, s.Conn.Endpoint, m.Spec.DeletesRemote())
		}
		if err := s.Client.BeforeCreate(ctx, mark); err != nil {
			return kit.Progressing(v1alpha1.ReasonCreating, "recording the pending create"), ctrl.Result{}, err
		}
	}
	free, complete, o, res, err := r.listNamed(ctx, s)
	if err != nil || o.Phase != kit.PhaseReady {
		return r.withoutPending(ctx, m, o, res, err)
	}
	lookAgain := ctrl.Result{RequeueAfter: s.Conn.DriftInterval}
	switch {
	case len(free) == 1:
		return r.adoptByName(ctx, s, free[0].ID)
	case len(free) > 1:
		return r.withoutPending(ctx, m, ambiguousName(m, free), lookAgain, nil)
	case !complete:
		return r.withoutPending(ctx, m, kit.Stalled(v1alpha1.ReasonAmbiguousName, fmt.Sprintf(
			"project %s holds more than %d Metrics, so adoption by name could not read them all: set annotation %s",
			m.Spec.ProjectID, byNamePages*recoveryPageSize, v1alpha1.MetricIDAnnotation)), lookAgain, nil)
	case !canCreate:
		return r.withoutPending(ctx, m, noneNamed(m), lookAgain, nil)
	}
	o, res, err = r.create(ctx, s)
	if err != nil || o.Reason != v1alpha1.ReasonCreated {
		return o, res, err
	}
	// Another cluster may have listed and created at the same instant: a
	// race no list can close. Listing again after the create finds the
	// pair, as at least the later of the two creates sees the earlier.
	if held, ho, hres, herr := r.holdIfAmbiguous(ctx, s); held {
		return ho, hres, herr
	}
	return o, res, err
}

// listNamed lists the project's Metrics named as m's spec that no other
// object of the cluster holds. A Ready o means the list succeeded; any other
// o is the outcome of its failure.
func (r *Reconciler) listNamed(ctx context.Context, s *scope) (
	free []remote.Metric, complete bool, o kit.Outcome, res ctrl.Result, err error,
) {
	m := s.Obj
	named, complete, err := listWhere(ctx, s.Client, m.Spec.ProjectID, byNamePages,
		func(got remote.Metric) bool { return got.Name == string(m.Spec.Name) })
	if err != nil {
		o, res, err := listFailure(m, err)
		if o.Reason == v1alpha1.ReasonCreateOutcomeUnknown {
			// Nothing was sent: the list itself failed for good.
			o = kit.Stalled(v1alpha1.ReasonRejected, "adopting by name: listing the project's Metrics failed: "+err.Error())
		}
		return nil, false, o, res, err
	}
	if free, err = r.recovery.claim(ctx, r.Client, m, named); err != nil {
		return nil, false, kit.Progressing(v1alpha1.ReasonCreating, "reading which Metrics other objects claim"), ctrl.Result{}, err
	}
	return free, complete, kit.Ready("", ""), ctrl.Result{}, nil
}

// holdIfAmbiguous keeps a ByName Metric with a recorded id Stalled on
// AmbiguousName while its project holds other Metrics of its name that no
// object of the cluster holds (two clusters created it at once): it neither
// updates nor creates until a person deletes the extra copies.
func (r *Reconciler) holdIfAmbiguous(ctx context.Context, s *scope) (
	bool, kit.Outcome, ctrl.Result, error,
) {
	m := s.Obj
	free, _, o, res, err := r.listNamed(ctx, s)
	if err != nil || o.Phase != kit.PhaseReady {
		return true, o, res, err
	}
	if len(free) < 2 {
		return false, kit.Outcome{}, ctrl.Result{}, nil
	}
	o = ambiguousName(m, free)
	o.Message = "remote Metric " + m.RecordedID() + " is recorded, but " + o.Message
	return true, o, ctrl.Result{RequeueAfter: s.Conn.DriftInterval}, nil
}

// withoutPending ends a step that sent no create: a create-pending mark
// this or an earlier reconcile wrote goes, so it is not taken for a create
// whose outcome is unknown.
func (r *Reconciler) withoutPending(ctx context.Context, m *v1alpha1.Metric, o kit.Outcome, res ctrl.Result, err error) (
	kit.Outcome, ctrl.Result, error,
) {
	if m.CreatePending() {
		if err := r.clearPending(ctx, m); err != nil {
			return kit.Progressing(v1alpha1.ReasonCreating, "clearing the pending create"), ctrl.Result{}, err
		}
		delete(m.Annotations, v1alpha1.CreatePendingAnnotation)
	}
	return o, res, err
}

// adoptByName records id as m's remote Metric, durably, as a create
// records its answer, and then reads it as any adopted Metric; where conn
// may not adopt, it looks again every drift interval.
func (r *Reconciler) adoptByName(ctx context.Context, s *scope, id string) (
	kit.Outcome, ctrl.Result, error,
) {
	m := s.Obj
	if !s.Conn.MayAdopt {
		return r.withoutPending(ctx, m, adoptionNotAllowed(s.Conn, fmt.Sprintf(
			"adopting remote Metric %s, the one Metric named %q in project %s that no object holds",
			id, m.Spec.Name, m.Spec.ProjectID), "set spec.adoptionPolicy to None to create a new remote Metric"),
			ctrl.Result{RequeueAfter: s.Conn.DriftInterval}, nil)
	}
	// The id and the service it belongs to, in one write (with or without a pending mark).
	err := r.patchAnnotations(ctx, m, map[string]any{
		v1alpha1.MetricIDAnnotation:      id,
		v1alpha1.CreatePendingAnnotation: nil,
		v1alpha1.ServiceAnnotation:       s.Conn.Endpoint,
	})
	if err != nil {
		return kit.Progressing(v1alpha1.ReasonCreating, "recording the remote id adopted by name"), ctrl.Result{}, err
	}
	o, res, err := r.adopt(ctx, s, r.drift.Every(s.Conn.DriftInterval), id)
	if o.Reason == v1alpha1.ReasonAdopted {
		o.Message = fmt.Sprintf("adopted remote Metric %s by name: the one Metric named %q in project %s that no other object holds",
			id, m.Spec.Name, m.Spec.ProjectID)
	}
	return o, res, err
}

func ambiguousName(m *v1alpha1.Metric, found []remote.Metric) kit.Outcome {
	ids := make([]string, len(found))
	for i, f := range found {
		ids[i] = f.ID
	}
	return kit.Stalled(v1alpha1.ReasonAmbiguousName, fmt.Sprintf(
		"project %s holds %d Metrics named %q that no other object holds (%s), so the operator adopted none and created none: "+
			"delete the extra ones in the service, or set annotation %s to the one to use",
		m.Spec.ProjectID, len(found), m.Spec.Name, strings.Join(ids, ", "), v1alpha1.MetricIDAnnotation))
}

func noneNamed(m *v1alpha1.Metric) kit.Outcome {
	return kit.Stalled(v1alpha1.ReasonRemoteNotFound, fmt.Sprintf(
		"project %s holds no Metric named %q to adopt, and spec.managementPolicies %s do not allow Create: "+
			"the operator looks again every drift interval",
		m.Spec.ProjectID, m.Spec.Name, m.Spec.PoliciesString()))
}
