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

import "encoding/json"

// Run statuses, in the order a run moves through them.
const (
	RunPending              = "pending"
	RunAwaitingExecution    = "awaiting_execution"
	RunRunningExecution     = "running_execution"
	RunAwaitingScoring      = "awaiting_scoring"
	RunRunningScoring       = "running_scoring"
	RunAwaitingHumanScoring = "awaiting_human_scoring"
	RunCompleted            = "completed"
)

// RunRequest is the body of a Run create.
type RunRequest struct {
	TestsetID       *string  `json:"testsetId,omitempty"`
	SystemVersionID *string  `json:"systemVersionId,omitempty"`
	MetricIDs       []string `json:"metricIds"`
}

// Run is a Run in response form.
type Run struct {
	ID               string   `json:"id"`
	TestsetID        *string  `json:"testsetId"`
	SystemID         *string  `json:"systemId"`
	SystemVersionID  *string  `json:"systemVersionId"`
	MetricIDs        []string `json:"metricIds"`
	MetricVersionIDs []string `json:"metricVersionIds"`
	NumRecords       int      `json:"numRecords"`
	// NumExpectedRecords is the Testset's testcases when the run was made;
	// nil for a run without a Testset.
	NumExpectedRecords *int   `json:"numExpectedRecords"`
	NumScores          int    `json:"numScores"`
	Status             string `json:"status"`
}

// RecordRequest is the body of a Record create: the system's inputs and
// outputs for one testcase.
type RecordRequest struct {
	TestcaseID string          `json:"testcaseId,omitempty"`
	Inputs     json.RawMessage `json:"inputs"`
	Expected   json.RawMessage `json:"expected"`
	Outputs    json.RawMessage `json:"outputs"`
}

// Record is a Record in response form.
type Record struct {
	ID         string          `json:"id"`
	RunID      string          `json:"runId"`
	TestcaseID string          `json:"testcaseId,omitempty"`
	Inputs     json.RawMessage `json:"inputs"`
	Expected   json.RawMessage `json:"expected"`
	Outputs    json.RawMessage `json:"outputs"`
	// SessionID is the session the record belongs to, as the Python SDK
	// sends it; the service's OpenAPI does not list it yet.
	SessionID string `json:"sessionId,omitempty"`
}

// Score is one Metric's score of one Record. MetricConfigID names the
// Metric by one of the run's metricIds or metricVersionIds.
type Score struct {
	RecordID         string            `json:"recordId"`
	MetricConfigID   string            `json:"metricConfigId"`
	Score            json.RawMessage   `json:"score"`
	ValidationErrors []ValidationError `json:"validationErrors,omitempty"`
}

// ScoreRequest is the body of a Score upsert.
type ScoreRequest struct {
	Score json.RawMessage `json:"score"`
}

// RecordWithScores is a Record with its scores, as the run's records list
// answers it.
type RecordWithScores struct {
	Record
	Scores []Score `json:"scores"`
}

// RecordPage is a page of a Run's Records.
type RecordPage = Page[RecordWithScores]
