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

package evalapi

import (
	"context"
	"encoding/json"
)

// APIKey is a bearer key of the service (`ak_...`). Its String and GoString
// methods redact it, so a key passed to a logger or a format verb by mistake
// does not leak.
type APIKey string

// KeyPrefix starts every valid API key. A key without it is never sent.
const KeyPrefix = "ak_"

// MinKeySecretLen is the fewest characters a valid key has after KeyPrefix.
const MinKeySecretLen = 16

func (APIKey) String() string   { return "ak_[redacted]" }
func (APIKey) GoString() string { return "ak_[redacted]" }

// Valid reports whether the key has the shape of an API key: KeyPrefix and
// at least MinKeySecretLen more characters, all visible ASCII (no space, no
// line break). The operator sends and the REST server accepts only valid
// keys: a key with a trailing newline, as `kubectl create secret
// --from-file` stores it, would otherwise be refused by the HTTP library on
// every attempt and look like an outage.
func (k APIKey) Valid() bool {
	if len(k) < len(KeyPrefix)+MinKeySecretLen || string(k[:len(KeyPrefix)]) != KeyPrefix {
		return false
	}
	for i := range len(k) {
		if k[i] < '!' || k[i] > '~' {
			return false
		}
	}
	return true
}

// Service is the Evaluation Service's API, one method per operation. Client
// implements it over HTTP; every failure is an *Error, so callers can tell
// whether to retry. The operator reaches it only through internal/remote.
type Service interface {
	// CreateMetric creates a Metric in project projectID and returns it in response form.
	CreateMetric(ctx context.Context, key APIKey, projectID string, req MetricRequest) (Metric, error)
	// BulkDeleteTestcases deletes the testcases with the given ids.
	BulkDeleteTestcases(ctx context.Context, key APIKey, ids []string) (SuccessResponse, error)
	// DeleteTestset deletes one testset.
	DeleteTestset(ctx context.Context, key APIKey, testsetID string) (SuccessResponse, error)
	// GetMetric reads one Metric in response form.
	GetMetric(ctx context.Context, key APIKey, metricID string) (Metric, error)
	// UpdateMetric applies req to one Metric and returns it in response form.
	UpdateMetric(ctx context.Context, key APIKey, metricID string, req MetricUpdate) (Metric, error)
	// DeleteMetric deletes one Metric.
	DeleteMetric(ctx context.Context, key APIKey, metricID string) (SuccessResponse, error)
	// ListMetrics returns one page of project projectID's Metrics, newest first.
	ListMetrics(ctx context.Context, key APIKey, projectID string, opts ListOptions) (MetricPage, error)

	// CreateTestset creates a Testset in project projectID.
	CreateTestset(ctx context.Context, key APIKey, projectID string, req TestsetRequest) (Testset, error)
	// GetTestset reads one Testset.
	GetTestset(ctx context.Context, key APIKey, id string) (Testset, error)
	// UpdateTestset applies req to one Testset.
	UpdateTestset(ctx context.Context, key APIKey, id string, req TestsetUpdate) (Testset, error)
	// ListTestsets returns one page of project projectID's Testsets.
	ListTestsets(ctx context.Context, key APIKey, projectID string, opts ListOptions) (TestsetPage, error)
	// CreateTestcases creates 1 to MaxTestcasesPerCreate testcases in one Testset.
	CreateTestcases(ctx context.Context, key APIKey, testsetID string, data []json.RawMessage) ([]Testcase, error)
	// ListTestcases returns one page of a Testset's testcases.
	ListTestcases(ctx context.Context, key APIKey, testsetID string, opts ListOptions) (TestcasePage, error)
	// UpdateTestcase replaces one testcase's data.
	UpdateTestcase(ctx context.Context, key APIKey, id string, data json.RawMessage) (Testcase, error)

	// CreateRun creates a Run in project projectID.
	CreateRun(ctx context.Context, key APIKey, projectID string, req RunRequest) (Run, error)
	// GetRun reads one Run.
	GetRun(ctx context.Context, key APIKey, id string) (Run, error)
	// ListRecords returns one page of a Run's Records with their scores.
	ListRecords(ctx context.Context, key APIKey, runID string, opts ListOptions) (RecordPage, error)

	// UpsertSystem creates a System in project projectID, or updates the
	// one of the same name.
	UpsertSystem(ctx context.Context, key APIKey, projectID string, req SystemRequest) (System, error)
	// GetSystem reads one System.
	GetSystem(ctx context.Context, key APIKey, id string) (System, error)
	// UpdateSystem applies req to one System.
	UpdateSystem(ctx context.Context, key APIKey, id string, req SystemUpdate) (System, error)
	// DeleteSystem deletes one System (not its versions).
	DeleteSystem(ctx context.Context, key APIKey, id string) (SuccessResponse, error)
	// ListSystems returns one page of project projectID's Systems.
	ListSystems(ctx context.Context, key APIKey, projectID string, opts ListOptions) (SystemPage, error)
	// UpsertSystemVersion answers the System's version with req's config,
	// created if there is none.
	UpsertSystemVersion(ctx context.Context, key APIKey, systemID string, req SystemVersionRequest) (SystemVersion, error)
	// GetSystemVersion reads one version.
	GetSystemVersion(ctx context.Context, key APIKey, id string) (SystemVersion, error)
}

// serviceOp names one Service method in errors (name) and in metrics (label).
type serviceOp struct {
	name  string
	label string
}

var (
	opCreateMetric        = serviceOp{name: "CreateMetric", label: "create_metric"}
	opBulkDeleteTestcases = serviceOp{name: "BulkDeleteTestcases", label: "bulk_delete_testcases"}
	opDeleteTestset       = serviceOp{name: "DeleteTestset", label: "delete_testset"}
	opGetMetric           = serviceOp{name: "GetMetric", label: "get_metric"}
	opUpdateMetric        = serviceOp{name: "UpdateMetric", label: "update_metric"}
	opDeleteMetric        = serviceOp{name: "DeleteMetric", label: "delete_metric"}
	opListMetrics         = serviceOp{name: "ListMetrics", label: "list_metrics"}
	opListProjects        = serviceOp{name: "ListProjects", label: "list_projects"}
	opCreateTestset       = serviceOp{name: "CreateTestset", label: "create_testset"}
	opGetTestset          = serviceOp{name: "GetTestset", label: "get_testset"}
	opUpdateTestset       = serviceOp{name: "UpdateTestset", label: "update_testset"}
	opListTestsets        = serviceOp{name: "ListTestsets", label: "list_testsets"}
	opCreateTestcases     = serviceOp{name: "CreateTestcases", label: "create_testcases"}
	opListTestcases       = serviceOp{name: "ListTestcases", label: "list_testcases"}
	opGetTestcase         = serviceOp{name: "GetTestcase", label: "get_testcase"}
	opUpdateTestcase      = serviceOp{name: "UpdateTestcase", label: "update_testcase"}
	opCreateRun           = serviceOp{name: "CreateRun", label: "create_run"}
	opGetRun              = serviceOp{name: "GetRun", label: "get_run"}
	opListRecords         = serviceOp{name: "ListRecords", label: "list_records"}
	opCreateRecord        = serviceOp{name: "CreateRecord", label: "create_record"}
	opUpsertScore         = serviceOp{name: "UpsertScore", label: "upsert_score"}
	opUpsertSystem        = serviceOp{name: "UpsertSystem", label: "upsert_system"}
	opGetSystem           = serviceOp{name: "GetSystem", label: "get_system"}
	opUpdateSystem        = serviceOp{name: "UpdateSystem", label: "update_system"}
	opDeleteSystem        = serviceOp{name: "DeleteSystem", label: "delete_system"}
	opListSystems         = serviceOp{name: "ListSystems", label: "list_systems"}
	opUpsertSystemVersion = serviceOp{name: "UpsertSystemVersion", label: "upsert_system_version"}
	opGetSystemVersion    = serviceOp{name: "GetSystemVersion", label: "get_system_version"}
)
