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
	"encoding/json"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Client acts on the remote side of one service with one object's key:
// the calls of Metrics, Testsets and deletions (a run's are its RunClient's). The reconcilers and the REST server use the client
// of their kind instead (Connection.Metric, Testset, Run, Deletion), which
// is given the object and answers what differs between a service that
// keeps copies and a standalone one. Its failures are a *KeyError when the
// key could not be used (nothing was sent), a *Throttled when it is not the
// object's turn at the service's limits, a *CacheLag when a first create
// waits for the manager's cache to show the namespace's service (nothing
// was sent), else the service's, which FailureOf reads. A Client serves one
// reconcile: it is not for concurrent use.
type Client interface {
	MetricCalls
	TestsetCalls
	DeletionCalls
}

// MetricCalls act on remote Metrics.
type MetricCalls interface {
	// Observe reads remote Metric id and reports whether it is what spec asks for.
	Observe(ctx context.Context, id string, spec *v1alpha1.MetricSpec) (Observation, error)
	// Create creates the Metric spec asks for and returns it. A service that could end up holding a duplicate (the request
	// may reach it and its answer get lost) calls guard first, once the key
	// is usable, and sends nothing if guard fails: guard records that a
	// create may be under way. A service that cannot never calls it.
	Create(ctx context.Context, spec *v1alpha1.MetricSpec, guard func(context.Context) error) (Metric, error)
	// BeforeCreate calls guard where Create would: on a service that could
	// end up holding a duplicate. A step that must record a pending create
	// before something that precedes the create (a list) calls it there.
	BeforeCreate(ctx context.Context, guard func(context.Context) error) error
	// Update makes remote Metric id what spec asks for, with one request
	// carrying the whole variant, and returns it.
	Update(ctx context.Context, id string, spec *v1alpha1.MetricSpec) (Metric, error)
	// Delete deletes remote Metric id; false when the service answered success=false.
	Delete(ctx context.Context, id string) (bool, error)
	// List returns one page of at most limit of project projectID's
	// Metrics, newest first: the first for cursor "", else the one cursor
	// (a Page's Next) names.
	List(ctx context.Context, projectID v1alpha1.ResourceID, cursor string, limit int) (Page, error)
}

// DeletionCalls delete testcases and testsets by id.
type DeletionCalls interface {
	// DeleteTestcases deletes the testcases ids.
	DeleteTestcases(ctx context.Context, ids []v1alpha1.ResourceID) (Deletion, error)
	// DeleteTestset deletes one testset.
	DeleteTestset(ctx context.Context, id v1alpha1.ResourceID) (Deletion, error)
}

// TestsetCalls act on remote Testsets and their testcases.
type TestsetCalls interface {
	// CreateTestset creates the Testset spec asks for, with its guard as
	// for Create, and returns it.
	CreateTestset(ctx context.Context, spec *v1alpha1.TestsetSpec, guard func(context.Context) error) (Testset, error)
	// GetTestset reads remote Testset id.
	GetTestset(ctx context.Context, id string) (Testset, error)
	// UpdateTestset makes remote Testset id's own fields what spec asks for.
	UpdateTestset(ctx context.Context, id string, spec *v1alpha1.TestsetSpec) (Testset, error)
	// ListTestsets returns one page of at most limit of project projectID's
	// Testsets: the first for cursor "", else the one cursor names.
	ListTestsets(ctx context.Context, projectID v1alpha1.ResourceID, cursor string, limit int) (TestsetPage, error)
	// Testcases calls each with every testcase of remote Testset id, page
	// by page, and stops at its first error.
	Testcases(ctx context.Context, id string, each func(Testcase) error) error
	// CreateTestcases creates testcases in remote Testset id, one per item
	// of data, in calls of at most MaxTestcasesPerCreate.
	CreateTestcases(ctx context.Context, id string, data []json.RawMessage) error
	// UpdateTestcase replaces the data of testcase id.
	UpdateTestcase(ctx context.Context, id string, data json.RawMessage) error
}

// DefaultTimeout bounds each request to a service whose limits set no timeout.
const DefaultTimeout = evalapi.DefaultTimeout

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
	// Metric is the remote Metric.
	Metric Metric
	// UpToDate is true when Metric is what the spec asks for.
	UpToDate bool
}

// Metric is a Metric as a service holds it.
type Metric struct {
	ID   string
	Name string
	held evalapi.Metric
}

func metricOf(m evalapi.Metric) Metric { return Metric{ID: m.ID, Name: m.Name, held: m} }

// Matches reports whether the Metric is what spec asks for.
func (m Metric) Matches(spec *v1alpha1.MetricSpec) bool { return convert.Matches(m.held, spec) }

// Drifted lists the fields of spec the Metric differs in.
func (m Metric) Drifted(spec *v1alpha1.MetricSpec) []string {
	return convert.DriftedFields(m.held, spec)
}

// Record writes what the service holds of the Metric into st: its id and
// the values the service filled in.
func (m Metric) Record(st *v1alpha1.MetricStatus) { convert.SetStatus(st, m.held) }

// Page is one page of a project's Metrics, newest first.
type Page struct {
	Metrics []Metric
	// Next is the cursor of the next page, "" after the last.
	Next string
	// Truncated is true when the service has more than this last page
	// holds but named no cursor to them.
	Truncated bool
}
