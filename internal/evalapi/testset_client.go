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
	"fmt"
	"net/http"
)

// CreateTestset sends POST /projects/{projectId}/testsets.
func (c *Client) CreateTestset(ctx context.Context, key APIKey, projectID string, req TestsetRequest) (Testset, error) {
	var t Testset
	err := c.call(ctx, key, call{
		op:       opCreateTestset,
		method:   http.MethodPost,
		segments: []string{"projects", projectID, "testsets"},
		body:     req,
		decode:   func(data []byte) error { return decodeOne(data, &t, testsetID) },
	})
	return t, err
}

// GetTestset sends GET /testsets/{testsetId}.
func (c *Client) GetTestset(ctx context.Context, key APIKey, id string) (Testset, error) {
	var t Testset
	err := c.call(ctx, key, call{
		op:       opGetTestset,
		method:   http.MethodGet,
		segments: []string{"testsets", id},
		decode:   func(data []byte) error { return decodeOne(data, &t, testsetID) },
	})
	return t, err
}

// UpdateTestset sends PATCH /testsets/{testsetId}.
func (c *Client) UpdateTestset(ctx context.Context, key APIKey, id string, req TestsetUpdate) (Testset, error) {
	var t Testset
	err := c.call(ctx, key, call{
		op:       opUpdateTestset,
		method:   http.MethodPatch,
		segments: []string{"testsets", id},
		body:     req,
		decode:   func(data []byte) error { return decodeOne(data, &t, testsetID) },
	})
	return t, err
}

// ListTestsets sends GET /projects/{projectId}/testsets?limit=&cursor=.
func (c *Client) ListTestsets(ctx context.Context, key APIKey, projectID string, opts ListOptions) (TestsetPage, error) {
	var p TestsetPage
	err := c.call(ctx, key, call{
		op:       opListTestsets,
		method:   http.MethodGet,
		segments: []string{"projects", projectID, "testsets"},
		query:    opts.query(),
		decode:   func(data []byte) error { return decodePage(data, &p, testsetID) },
	})
	return p, err
}

// CreateTestcases sends POST /testsets/{testsetId}/testcases with one item
// per element of data, 1 to MaxTestcasesPerCreate of them; the answer holds
// the created testcases in the same order. More or fewer are refused
// without a request.
func (c *Client) CreateTestcases(ctx context.Context, key APIKey, testsetID string, data []json.RawMessage) ([]Testcase, error) {
	if len(data) == 0 || len(data) > MaxTestcasesPerCreate {
		return nil, &Error{Kind: KindRejected, Op: opCreateTestcases.name,
			Err: fmt.Errorf("%d testcases: a create carries 1 to %d", len(data), MaxTestcasesPerCreate)}
	}
	req := CreateTestcasesRequest{Items: make([]TestcaseData, len(data))}
	for i, d := range data {
		req.Items[i] = TestcaseData{JSONData: d}
	}
	var created CreateTestcasesResponse
	err := c.call(ctx, key, call{
		op:       opCreateTestcases,
		method:   http.MethodPost,
		segments: []string{"testsets", testsetID, "testcases"},
		body:     req,
		decode: func(body []byte) error {
			if err := json.Unmarshal(body, &created); err != nil {
				return fmt.Errorf("decoding the answer: %w", err)
			}
			if len(created.Items) != len(data) {
				return fmt.Errorf("the answer holds %d testcases for the %d sent", len(created.Items), len(data))
			}
			for _, t := range created.Items {
				if t.ID == "" {
					return errNoID
				}
			}
			return nil
		},
	})
	return created.Items, err
}

// ListTestcases sends GET /testsets/{testsetId}/testcases?limit=&cursor=.
func (c *Client) ListTestcases(ctx context.Context, key APIKey, testsetID string, opts ListOptions) (TestcasePage, error) {
	var p TestcasePage
	err := c.call(ctx, key, call{
		op:       opListTestcases,
		method:   http.MethodGet,
		segments: []string{"testsets", testsetID, "testcases"},
		query:    opts.query(),
		decode:   func(data []byte) error { return decodePage(data, &p, testcaseID) },
	})
	return p, err
}

// GetTestcase sends GET /testcases/{testcaseId}.
func (c *Client) GetTestcase(ctx context.Context, key APIKey, id string) (Testcase, error) {
	var t Testcase
	err := c.call(ctx, key, call{
		op:       opGetTestcase,
		method:   http.MethodGet,
		segments: []string{"testcases", id},
		decode:   func(data []byte) error { return decodeOne(data, &t, testcaseID) },
	})
	return t, err
}

// UpdateTestcase sends PUT /testcases/{testcaseId}, replacing its data.
func (c *Client) UpdateTestcase(ctx context.Context, key APIKey, id string, data json.RawMessage) (Testcase, error) {
	var t Testcase
	err := c.call(ctx, key, call{
		op:       opUpdateTestcase,
		method:   http.MethodPut,
		segments: []string{"testcases", id},
		body:     TestcaseData{JSONData: data},
		decode:   func(body []byte) error { return decodeOne(body, &t, testcaseID) },
	})
	return t, err
}
