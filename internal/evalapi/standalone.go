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
	"crypto/rand"
	"encoding/hex"
	"errors"
)

// Standalone is the Service of standalone mode, where no Evaluation Service
// exists and the cluster is the system of record: CreateMetric assigns a
// fresh id locally ("met_" and 20 random hex digits) and answers with the
// service's defaults filled in, and deletions succeed at once. It makes no
// network calls and is safe for concurrent use; the zero value is ready.
//
// It keeps no Metrics: there is no remote copy to read, correct or clean up,
// so the operator never calls GetMetric, UpdateMetric, DeleteMetric or
// ListMetrics in standalone mode. They answer as a service without Metrics
// would: GetMetric finds nothing (KindNotFound, ErrNoRemoteMetrics),
// ListMetrics returns an empty last page, DeleteMetric succeeds at once and
// UpdateMetric answers the update in response form under the given id, with
// defaults for every field it leaves out.
//
// An empty key is accepted, because a standalone object need not reference a
// Secret. A non-empty key that is not an ak_ key fails like it does with the
// Client (KindNotSent, ErrInvalidKey), so a broken Secret is reported the same
// way in both modes.
type Standalone struct{}

var _ Service = Standalone{}

// CreateMetric returns req in response form under a new unique id.
func (Standalone) CreateMetric(_ context.Context, key APIKey, _ string, req MetricRequest) (Metric, error) {
	if err := checkStandaloneKey(opCreateMetric, key); err != nil {
		return Metric{}, err
	}
	return ResponseFor(NewMetricID(), req), nil
}

// BulkDeleteTestcases succeeds at once.
func (Standalone) BulkDeleteTestcases(_ context.Context, key APIKey, _ []string) (SuccessResponse, error) {
	if err := checkStandaloneKey(opBulkDeleteTestcases, key); err != nil {
		return SuccessResponse{}, err
	}
	return SuccessResponse{Success: true}, nil
}

// DeleteTestset succeeds at once.
func (Standalone) DeleteTestset(_ context.Context, key APIKey, _ string) (SuccessResponse, error) {
	if err := checkStandaloneKey(opDeleteTestset, key); err != nil {
		return SuccessResponse{}, err
	}
	return SuccessResponse{Success: true}, nil
}

// GetMetric finds nothing: standalone mode keeps no remote Metrics.
func (Standalone) GetMetric(_ context.Context, key APIKey, _ string) (Metric, error) {
	if err := checkStandaloneKey(opGetMetric, key); err != nil {
		return Metric{}, err
	}
	return Metric{}, &Error{Kind: KindNotFound, Op: opGetMetric.name, Err: ErrNoRemoteMetrics}
}

// UpdateMetric returns req in response form under metricID.
func (Standalone) UpdateMetric(_ context.Context, key APIKey, metricID string, req MetricUpdate) (Metric, error) {
	if err := checkStandaloneKey(opUpdateMetric, key); err != nil {
		return Metric{}, err
	}
	return ResponseFor(metricID, MergeUpdate(Metric{}, req)), nil
}

// DeleteMetric succeeds at once.
func (Standalone) DeleteMetric(_ context.Context, key APIKey, _ string) (SuccessResponse, error) {
	if err := checkStandaloneKey(opDeleteMetric, key); err != nil {
		return SuccessResponse{}, err
	}
	return SuccessResponse{Success: true}, nil
}

// ListMetrics returns an empty last page.
func (Standalone) ListMetrics(_ context.Context, key APIKey, _ string, _ ListOptions) (MetricPage, error) {
	if err := checkStandaloneKey(opListMetrics, key); err != nil {
		return MetricPage{}, err
	}
	total := 0
	return MetricPage{Data: []Metric{}, Total: &total}, nil
}

// ErrNoRemoteMetrics is the Err of Standalone's GetMetric.
var ErrNoRemoteMetrics = errors.New("standalone mode keeps no remote Metrics")

func checkStandaloneKey(op serviceOp, key APIKey) error {
	if key != "" && !key.Valid() {
		return invalidKey(op)
	}
	return nil
}

// NewMetricID returns a new standalone Metric id: "met_" and 80 random bits
// in hex, unique without coordination. The REST server assigns it too, in
// the same format, when it creates a Metric in standalone mode.
func NewMetricID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error since Go 1.24
	return "met_" + hex.EncodeToString(b)
}
