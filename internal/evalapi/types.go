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

// Package evalapi is the Evaluation Service API's wire protocol: its types,
// its defaults, and an HTTP client for a real service. It knows nothing of
// the custom resources; internal/remote converts between the two.
package evalapi

import (
	"encoding/json"
	"fmt"
)

// EvalType values of the API.
const (
	EvalTypeAI        = "ai"
	EvalTypeHuman     = "human"
	EvalTypeHeuristic = "heuristic"
)

// OutputType values of the API.
const (
	OutputTypeInt     = "int"
	OutputTypeFloat   = "float"
	OutputTypeBoolean = "boolean"
)

// Response-form defaults of the API.
const (
	DefaultEvalModelName         = "gpt-4o"
	DefaultTemperature           = 0.0
	DefaultIntPassingThreshold   = 4.0
	DefaultFloatPassingThreshold = 0.9
)

// MetricRequest is the body of POST /projects/{projectId}/metrics. Unset
// optional fields are omitted, so the service applies its own defaults.
type MetricRequest struct {
	Name             string   `json:"name"`
	Description      *string  `json:"description,omitempty"`
	EvalType         string   `json:"evalType"`
	OutputType       string   `json:"outputType"`
	Guidelines       *string  `json:"guidelines,omitempty"`
	PromptTemplate   *string  `json:"promptTemplate,omitempty"`
	EvalModelName    *string  `json:"evalModelName,omitempty"`
	Temperature      *float64 `json:"temperature,omitempty"`
	PassingThreshold *float64 `json:"passingThreshold,omitempty"`
}

// Metric is a Metric in response form: id, name, description (null when
// unset), evalType, outputType and guidelines are always present; the ai
// fields only for ai Metrics, passingThreshold only for int and float ones.
type Metric struct {
	ID               string   `json:"id"`
	Name             string   `json:"name"`
	Description      *string  `json:"description"`
	EvalType         string   `json:"evalType"`
	OutputType       string   `json:"outputType"`
	Guidelines       string   `json:"guidelines"`
	PromptTemplate   *string  `json:"promptTemplate,omitempty"`
	EvalModelName    *string  `json:"evalModelName,omitempty"`
	Temperature      *float64 `json:"temperature,omitempty"`
	PassingThreshold *float64 `json:"passingThreshold,omitempty"`
}

// MetricUpdate is the body of PATCH /metrics/{metricId}. evalType and
// outputType are always sent; every other field is sent only when set, and a
// field not sent keeps its value in the service. Description can also clear
// the description: see Nullable.
type MetricUpdate struct {
	Name             *string          `json:"name,omitempty"`
	Description      Nullable[string] `json:"description,omitzero"`
	EvalType         string           `json:"evalType"`
	OutputType       string           `json:"outputType"`
	Guidelines       *string          `json:"guidelines,omitempty"`
	PromptTemplate   *string          `json:"promptTemplate,omitempty"`
	EvalModelName    *string          `json:"evalModelName,omitempty"`
	Temperature      *float64         `json:"temperature,omitempty"`
	PassingThreshold *float64         `json:"passingThreshold,omitempty"`
}

// Nullable is an optional field that may also be sent as null, which a
// pointer cannot say apart from not sending it. The zero value is unset: a
// field tagged omitzero leaves it out. NullableFrom(nil) is sent as null,
// NullableFrom(&v) as v.
type Nullable[T any] struct {
	set   bool
	value *T
}

// NullableFrom is a set Nullable holding a copy of *p, or null when p is nil.
func NullableFrom[T any](p *T) Nullable[T] {
	n := Nullable[T]{set: true}
	if p != nil {
		v := *p
		n.value = &v
	}
	return n
}

// IsSet reports whether the field is sent (as null or a value).
func (n Nullable[T]) IsSet() bool { return n.set }

// IsZero reports whether the field is unset; omitzero uses it.
func (n Nullable[T]) IsZero() bool { return !n.set }

// Get is the value, nil when the field is null or unset.
func (n Nullable[T]) Get() *T { return n.value }

// MarshalJSON writes null or the value.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	return json.Marshal(n.value)
}

// UnmarshalJSON sets the field, to null or the value. A field absent from the
// JSON is never unmarshalled, so it stays unset.
func (n *Nullable[T]) UnmarshalJSON(data []byte) error {
	var value *T
	if err := json.Unmarshal(data, &value); err != nil {
		return err
	}
	*n = Nullable[T]{set: true, value: value}
	return nil
}

// ListOptions are the query of GET /projects/{projectId}/metrics.
type ListOptions struct {
	// Limit is the page size, 1 to 100; 0 sends none, so the service's
	// default (20) applies.
	Limit int
	// Cursor is the NextCursor of the previous page; "" asks for the first.
	Cursor string
}

// MetricPage is one page of GET /projects/{projectId}/metrics, newest Metric first.
type MetricPage = Page[Metric]

// Project is a Project in response form; name and description are null
// where the service knows none.
type Project struct {
	ID          string  `json:"id"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// ProjectPage is one page of GET /projects.
type ProjectPage = Page[Project]

// BulkDeleteRequest is the body of POST /testcases/bulk-delete.
type BulkDeleteRequest struct {
	IDs []string `json:"ids"`
}

// SuccessResponse is the answer to every deletion.
type SuccessResponse struct {
	Success bool `json:"success"`
}

// APIError is the body of every error answer of the API.
type APIError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// Error codes and messages of the API.
const (
	CodeUnauthorized     = "UNAUTHORIZED"
	CodeInternal         = "INTERNAL_ERROR"
	CodeValidation       = "VALIDATION_ERROR"
	CodeNotFound         = "NOT_FOUND"
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	CodePayloadTooLarge  = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMedia = "UNSUPPORTED_MEDIA_TYPE"
	CodeRateLimited      = "RATE_LIMITED"

	MessageUnauthorized = "The authentication token is invalid or missing"
)

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// ResponseFor is the response form the service returns for req once it has
// assigned id: the request's values with every default filled in.
func ResponseFor(id string, req MetricRequest) Metric {
	m := Metric{
		ID:          id,
		Name:        req.Name,
		Description: req.Description,
		EvalType:    req.EvalType,
		OutputType:  req.OutputType,
	}
	if req.Guidelines != nil {
		m.Guidelines = *req.Guidelines
	}
	if req.EvalType == EvalTypeAI {
		m.PromptTemplate = req.PromptTemplate
		m.EvalModelName = valueOr(req.EvalModelName, DefaultEvalModelName)
		m.Temperature = valueOr(req.Temperature, DefaultTemperature)
	}
	switch req.OutputType {
	case OutputTypeInt:
		m.PassingThreshold = valueOr(req.PassingThreshold, DefaultIntPassingThreshold)
	case OutputTypeFloat:
		m.PassingThreshold = valueOr(req.PassingThreshold, DefaultFloatPassingThreshold)
	}
	return m
}

// MergeUpdate is m after the PATCH u, in request form, so that
// ResponseFor(m.ID, MergeUpdate(m, u)) is the service's answer and the
// rules of a create validate it. A field u sends replaces m's. A field u
// leaves out keeps m's value while it means the same in u's variant: the ai
// fields while evalType stays ai, passingThreshold while outputType stays the
// same (its scale depends on outputType). Otherwise it is dropped, and
// ResponseFor gives it the default where u's variant has the field.
func MergeUpdate(m Metric, u MetricUpdate) MetricRequest {
	req := MetricRequest{
		Name:        m.Name,
		Description: m.Description,
		EvalType:    u.EvalType,
		OutputType:  u.OutputType,
		Guidelines:  orElse(u.Guidelines, &m.Guidelines),
	}
	if u.Name != nil {
		req.Name = *u.Name
	}
	if u.Description.IsSet() {
		req.Description = u.Description.Get()
	}
	if m.EvalType == EvalTypeAI && u.EvalType == EvalTypeAI {
		req.PromptTemplate, req.EvalModelName, req.Temperature = m.PromptTemplate, m.EvalModelName, m.Temperature
	}
	req.PromptTemplate = orElse(u.PromptTemplate, req.PromptTemplate)
	req.EvalModelName = orElse(u.EvalModelName, req.EvalModelName)
	req.Temperature = orElse(u.Temperature, req.Temperature)
	if m.OutputType == u.OutputType {
		req.PassingThreshold = m.PassingThreshold
	}
	req.PassingThreshold = orElse(u.PassingThreshold, req.PassingThreshold)
	return req
}

// orElse is p when it is set, else q.
func orElse[T any](p, q *T) *T {
	if p != nil {
		return p
	}
	return q
}

func valueOr[T any](p *T, def T) *T {
	if p != nil {
		v := *p
		return &v
	}
	return &def
}
