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
	"crypto/rand"
	"encoding/json"
	"fmt"
)

// SystemRequest is the body of a System upsert (POST
// /projects/{projectId}/systems): the service creates the System, or
// updates the one of the same name in the project.
type SystemRequest struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Config      json.RawMessage `json:"config"`
}

// SystemUpdate is the body of a System PATCH: a field left out is kept.
type SystemUpdate struct {
	Name                *string `json:"name,omitempty"`
	Description         *string `json:"description,omitempty"`
	ProductionVersionID *string `json:"productionVersionId,omitempty"`
}

// VersionRef is a version as a System lists it.
type VersionRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// System is a System in response form. ProductionVersion is nil when the
// System has none.
type System struct {
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	Description       string          `json:"description"`
	ProductionVersion *SystemVersion  `json:"productionVersion"`
	Versions          []VersionRef    `json:"versions"`
	Config            json.RawMessage `json:"config,omitempty"`
}

// SystemPage is a page of a project's Systems.
type SystemPage = Page[System]

// SystemVersionRequest is the body of a version upsert (POST
// /systems/{systemId}/versions): the service answers the version with the
// same config if there is one (renamed to Name when Name is set), else a
// new one. It never makes it the production version.
type SystemVersionRequest struct {
	Name   string          `json:"name,omitempty"`
	Config json.RawMessage `json:"config"`
}

// SystemVersion is a version in response form.
type SystemVersion struct {
	ID       string          `json:"id"`
	SystemID string          `json:"systemId"`
	Name     string          `json:"name"`
	Config   json.RawMessage `json:"config"`
}

// NewUUID returns a new random (version 4) UUID, shaped as the service's
// System and version ids: the ids a standalone service and the fake one
// assign.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error since Go 1.24
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
