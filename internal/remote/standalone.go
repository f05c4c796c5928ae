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

package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// standalone is the Client of a standalone service, where the cluster is
// the system of record: there is no remote copy of anything. A create
// assigns a fresh id locally (NewMetricID) and answers with the service's
// defaults filled in; the remote Metric is the spec, always up to date;
// deletions find nothing held. It makes no network calls.
//
// It needs no key, but a create or deletion of an object that names one
// checks it, so a broken Secret is reported as it is for a real service.
type standalone struct {
	key *lazyKey
	// confirm holds back the first create while the cache lags.
	confirm *confirmation
}

func (standalone) Observe(_ context.Context, id string, spec *v1alpha1.MetricSpec) (Observation, error) {
	return Observation{Metric: asDefaulted(id, spec), UpToDate: true}, nil
}

// asDefaulted is the Metric spec asks for under id, with the service's
// defaults filled in.
func asDefaulted(id string, spec *v1alpha1.MetricSpec) Metric {
	return metricOf(evalapi.ResponseFor(id, convert.RequestFor(spec)))
}

// Create never calls guard: nothing remote can hold a duplicate.
func (c standalone) Create(ctx context.Context, spec *v1alpha1.MetricSpec, _ func(context.Context) error) (
	Metric, error,
) {
	if err := c.beginCreate(ctx); err != nil {
		return Metric{}, err
	}
	return asDefaulted(NewMetricID(), spec), nil
}

// beginCreate confirms the create's service and checks the key.
func (c standalone) beginCreate(ctx context.Context) error {
	if err := c.confirm.before(ctx); err != nil {
		return err
	}
	_, err := c.key.get(ctx)
	return err
}

// BeforeCreate never calls guard: nothing remote can hold a duplicate.
func (standalone) BeforeCreate(context.Context, func(context.Context) error) error { return nil }

func (standalone) Update(_ context.Context, id string, spec *v1alpha1.MetricSpec) (Metric, error) {
	return asDefaulted(id, spec), nil
}

func (standalone) Delete(context.Context, string) (bool, error) { return true, nil }

// List returns an empty last page: the cluster's Metrics are all there is.
func (standalone) List(context.Context, v1alpha1.ResourceID, string, int) (Page, error) {
	return Page{}, nil
}

func (c standalone) DeleteTestcases(ctx context.Context, _ []v1alpha1.ResourceID) (Deletion, error) {
	return c.nothingHeld(ctx)
}

func (c standalone) DeleteTestset(ctx context.Context, _ v1alpha1.ResourceID) (Deletion, error) {
	return c.nothingHeld(ctx)
}

// nothingHeld answers a deletion: a standalone service holds no testcases
// or testsets; the key is checked all the same.
func (c standalone) nothingHeld(ctx context.Context) (Deletion, error) {
	if _, err := c.key.get(ctx); err != nil {
		return NotDeleted, err
	}
	return NothingHeld, nil
}

// NewTestsetID returns a new standalone Testset id: "tst_" and 80 random
// bits in hex.
func NewTestsetID() string { return "tst_" + randomHex() }

// NewMetricID returns a new standalone Metric id: "met_" and 80 random bits
// in hex, unique without coordination.
func NewMetricID() string { return "met_" + randomHex() }

// NewRunID returns a new standalone Run id: "run_" and 80 random bits in hex.
func NewRunID() string { return "run_" + randomHex() }

func randomHex() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error since Go 1.24
	return hex.EncodeToString(b)
}
