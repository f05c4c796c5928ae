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

// Package evalapi is the operator's view of the Evaluation Service API: its
// wire types, the Service interface the reconcilers call, an HTTP client for a
// real service and a standalone implementation that needs no service.
package evalapi

import (
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

// BulkDeleteRequest is the body of POST /testcases/bulk-delete.
type BulkDeleteRequest struct {
	IDs []string `json:"ids"`
}

// SuccessResponse is the answer to both deletions.
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

func valueOr[T any](p *T, def T) *T {
	if p != nil {
		v := *p
		return &v
	}
	return &def
}
