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
	"net/http"
)

// CreateRun sends POST /projects/{projectId}/runs.
func (c *Client) CreateRun(ctx context.Context, key APIKey, projectID string, req RunRequest) (Run, error) {
	var r Run
	err := c.call(ctx, key, call{
		op:       opCreateRun,
		method:   http.MethodPost,
		segments: []string{"projects", projectID, "runs"},
		body:     req,
		decode:   func(data []byte) error { return decodeOne(data, &r, runID) },
	})
	return r, err
}

// GetRun sends GET /runs/{runId}.
func (c *Client) GetRun(ctx context.Context, key APIKey, id string) (Run, error) {
	var r Run
	err := c.call(ctx, key, call{
		op:       opGetRun,
		method:   http.MethodGet,
		segments: []string{"runs", id},
		decode:   func(data []byte) error { return decodeOne(data, &r, runID) },
	})
	return r, err
}

// ListRecords sends GET /runs/{runId}/records?limit=&cursor=: a page of the
// run's Records with their scores.
func (c *Client) ListRecords(ctx context.Context, key APIKey, runID string, opts ListOptions) (RecordPage, error) {
	var p RecordPage
	err := c.call(ctx, key, call{
		op:       opListRecords,
		method:   http.MethodGet,
		segments: []string{"runs", runID, "records"},
		query:    opts.query(),
		decode:   func(data []byte) error { return decodePage(data, &p, recordID) },
	})
	return p, err
}

// CreateRecord sends POST /runs/{runId}/records.
func (c *Client) CreateRecord(ctx context.Context, key APIKey, runID string, req RecordRequest) (Record, error) {
	var r Record
	err := c.call(ctx, key, call{
		op:       opCreateRecord,
		method:   http.MethodPost,
		segments: []string{"runs", runID, "records"},
		body:     req,
		decode:   func(data []byte) error { return decodeOne(data, &r, func(r Record) string { return r.ID }) },
	})
	return r, err
}

// UpsertScore sends PUT /records/{recordId}/scores/{metricConfigId}.
func (c *Client) UpsertScore(ctx context.Context, key APIKey, recordID, metricConfigID string, score json.RawMessage) (Score, error) {
	var s Score
	err := c.call(ctx, key, call{
		op:       opUpsertScore,
		method:   http.MethodPut,
		segments: []string{"records", recordID, "scores", metricConfigID},
		body:     ScoreRequest{Score: score},
		decode:   func(data []byte) error { return decodeOne(data, &s, func(s Score) string { return s.RecordID }) },
	})
	return s, err
}
