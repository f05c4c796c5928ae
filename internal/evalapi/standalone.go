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
)

// Standalone is the Service of standalone mode, where no Evaluation Service
// exists and the cluster is the system of record: CreateMetric assigns a
// fresh id locally ("met_" and 20 random hex digits) and answers with the
// service's defaults filled in, and deletions succeed at once. It makes no
// network calls and is safe for concurrent use; the zero value is ready.
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
	return ResponseFor(newMetricID(), req), nil
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

func checkStandaloneKey(op serviceOp, key APIKey) error {
	if key != "" && !key.Valid() {
		return invalidKey(op)
	}
	return nil
}

// newMetricID returns "met_" and 80 random bits in hex: unique without coordination.
func newMetricID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error since Go 1.24
	return "met_" + hex.EncodeToString(b)
}
