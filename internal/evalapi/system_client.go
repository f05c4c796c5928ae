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
	"net/http"
)

// UpsertSystem sends POST /projects/{projectId}/systems: it creates the
// System, or updates the project's System of the same name.
func (c *Client) UpsertSystem(ctx context.Context, key APIKey, projectID string, req SystemRequest) (System, error) {
	var s System
	err := c.call(ctx, key, call{
		op:       opUpsertSystem,
		method:   http.MethodPost,
		segments: []string{"projects", projectID, "systems"},
		body:     req,
		decode:   func(data []byte) error { return decodeOne(data, &s, systemID) },
	})
	return s, err
}

// GetSystem sends GET /systems/{systemId}.
func (c *Client) GetSystem(ctx context.Context, key APIKey, id string) (System, error) {
	var s System
	err := c.call(ctx, key, call{
		op:       opGetSystem,
		method:   http.MethodGet,
		segments: []string{"systems", id},
		decode:   func(data []byte) error { return decodeOne(data, &s, systemID) },
	})
	return s, err
}

// UpdateSystem sends PATCH /systems/{systemId}, e.g. to set its production
// version.
func (c *Client) UpdateSystem(ctx context.Context, key APIKey, id string, req SystemUpdate) (System, error) {
	var s System
	err := c.call(ctx, key, call{
		op:       opUpdateSystem,
		method:   http.MethodPatch,
		segments: []string{"systems", id},
		body:     req,
		decode:   func(data []byte) error { return decodeOne(data, &s, systemID) },
	})
	return s, err
}

// DeleteSystem sends DELETE /systems/{systemId}; the service keeps the
// System's versions.
func (c *Client) DeleteSystem(ctx context.Context, key APIKey, id string) (SuccessResponse, error) {
	var s SuccessResponse
	err := c.call(ctx, key, call{
		op:       opDeleteSystem,
		method:   http.MethodDelete,
		segments: []string{"systems", id},
		decode:   func(data []byte) error { return decodeSuccess(data, &s) },
	})
	return s, err
}

// ListSystems sends GET /projects/{projectId}/systems?limit=&cursor=.
func (c *Client) ListSystems(ctx context.Context, key APIKey, projectID string, opts ListOptions) (SystemPage, error) {
	var p SystemPage
	err := c.call(ctx, key, call{
		op:       opListSystems,
		method:   http.MethodGet,
		segments: []string{"projects", projectID, "systems"},
		query:    opts.query(),
		decode:   func(data []byte) error { return decodePage(data, &p, systemID) },
	})
	return p, err
}

// UpsertSystemVersion sends POST /systems/{systemId}/versions: the same
// config answers the same version.
func (c *Client) UpsertSystemVersion(ctx context.Context, key APIKey, systemID string, req SystemVersionRequest) (SystemVersion, error) {
	var v SystemVersion
	err := c.call(ctx, key, call{
		op:       opUpsertSystemVersion,
		method:   http.MethodPost,
		segments: []string{"systems", systemID, "versions"},
		body:     req,
		decode:   func(data []byte) error { return decodeOne(data, &v, systemVersionID) },
	})
	return v, err
}

// GetSystemVersion sends GET /systems/versions/{systemVersionId}.
func (c *Client) GetSystemVersion(ctx context.Context, key APIKey, id string) (SystemVersion, error) {
	var v SystemVersion
	err := c.call(ctx, key, call{
		op:       opGetSystemVersion,
		method:   http.MethodGet,
		segments: []string{"systems", "versions", id},
		decode:   func(data []byte) error { return decodeOne(data, &v, systemVersionID) },
	})
	return v, err
}

func systemID(s System) string               { return s.ID }
func systemVersionID(v SystemVersion) string { return v.ID }
