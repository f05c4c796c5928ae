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

// Package remote is the one seam between the cluster and the Evaluation
// Service, shaped like crossplane-runtime's managed reconciler: a Connector
// resolves the service an object uses, the Connection reads the object's
// key and hands out a Client, and the Client is the only thing that acts on
// the remote side. Two Clients exist: one over HTTP (internal/evalapi is its
// wire protocol) and one for standalone services, where the cluster is the
// system of record. Conversions between the custom resources and the wire
// types are internal/convert's.
package remote

import (
	"context"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Client acts on the remote side of one service with one object's key.
// Its failures are a *KeyError when the key could not be used (nothing was
// sent), else an *evalapi.Error, whose Kind says whether to retry. A Client
// serves one reconcile: it is not for concurrent use.
type Client interface {
	// Observe reads remote Metric id and reports whether it is what spec asks for.
	Observe(ctx context.Context, id string, spec *v1alpha1.MetricSpec) (Observation, error)
	// Create creates the Metric spec asks for and returns it in response
	// form. A service that could end up holding a duplicate (the request
	// may reach it and its answer get lost) calls guard first, once the key
	// is usable, and sends nothing if guard fails: guard records that a
	// create may be under way. A service that cannot never calls it.
	Create(ctx context.Context, spec *v1alpha1.MetricSpec, guard func(context.Context) error) (evalapi.Metric, error)
	// BeforeCreate calls guard where Create would: on a service that could
	// end up holding a duplicate. A step that must record a pending create
	// before something that precedes the create (a list) calls it there.
	BeforeCreate(ctx context.Context, guard func(context.Context) error) error
	// Update makes remote Metric id what spec asks for, with one request
	// carrying the whole variant, and returns it in response form.
	Update(ctx context.Context, id string, spec *v1alpha1.MetricSpec) (evalapi.Metric, error)
	// Delete deletes remote Metric id; false when the service answered success=false.
	Delete(ctx context.Context, id string) (bool, error)
	// List returns one page of project projectID's Metrics, newest first.
	List(ctx context.Context, projectID v1alpha1.ResourceID, opts evalapi.ListOptions) (evalapi.MetricPage, error)
	// DeleteTestcases deletes the testcases ids.
	DeleteTestcases(ctx context.Context, ids []v1alpha1.ResourceID) (Deletion, error)
	// DeleteTestset deletes one testset.
	DeleteTestset(ctx context.Context, id v1alpha1.ResourceID) (Deletion, error)
}

// Deletion is what a deletion of testcases or a testset did.
type Deletion int

const (
	// NotDeleted: the service answered success=false.
	NotDeleted Deletion = iota + 1
	// Deleted: the service deleted them.
	Deleted
	// NothingHeld: the service holds no testcases or testsets (a standalone
	// service), so there was nothing to delete.
	NothingHeld
)

// Observation is what Observe found.
type Observation struct {
	// Metric is the remote Metric in response form.
	Metric evalapi.Metric
	// UpToDate is true when Metric is what the spec asks for.
	UpToDate bool
}
