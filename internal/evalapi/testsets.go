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

// MaxTestcasesPerCreate is the most testcases one create request may carry.
const MaxTestcasesPerCreate = 100

// FieldMapping maps the top-level fields of a Testset's testcases to their
// roles. A field in none of the three is metadata.
type FieldMapping struct {
	Inputs   []string `json:"inputs"`
	Expected []string `json:"expected"`
	Metadata []string `json:"metadata"`
}

// TestsetRequest is the body of a Testset create: every field is required.
type TestsetRequest struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	JSONSchema   json.RawMessage `json:"jsonSchema"`
	FieldMapping FieldMapping    `json:"fieldMapping"`
}

// TestsetUpdate is the body of a Testset PATCH: a field left out is kept.
type TestsetUpdate struct {
	Name         *string         `json:"name,omitempty"`
	Description  *string         `json:"description,omitempty"`
	JSONSchema   json.RawMessage `json:"jsonSchema,omitempty"`
	FieldMapping *FieldMapping   `json:"fieldMapping,omitempty"`
}

// Testset is a Testset in response form.
type Testset struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	JSONSchema   json.RawMessage `json:"jsonSchema"`
	FieldMapping FieldMapping    `json:"fieldMapping"`
}

// ValidationError is one way a testcase's data does not conform to its
// Testset's schema. The service stores such a testcase all the same.
type ValidationError struct {
	// Path is a JSON Pointer to the field, e.g. /data/question.
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Testcase is a Testcase in response form. Inputs and Expected are derived
// from JSONData by the Testset's field mapping.
type Testcase struct {
	ID               string            `json:"id"`
	TestsetID        string            `json:"testsetId"`
	JSONData         json.RawMessage   `json:"jsonData"`
	Inputs           json.RawMessage   `json:"inputs"`
	Expected         json.RawMessage   `json:"expected"`
	ValidationErrors []ValidationError `json:"validationErrors,omitempty"`
}

// TestcaseData is the body of a testcase's create (one item of it) or update.
type TestcaseData struct {
	JSONData json.RawMessage `json:"jsonData"`
}

// CreateTestcasesRequest is the body of a testcases create.
type CreateTestcasesRequest struct {
	Items []TestcaseData `json:"items"`
}

// CreateTestcasesResponse is the answer to a testcases create.
type CreateTestcasesResponse struct {
	Items []Testcase `json:"items"`
}

// Page is one page of a list, in the order the service lists.
type Page[T any] struct {
	Data []T `json:"data"`
	// NextCursor asks for the next page; nil on the last one.
	NextCursor *string `json:"nextCursor"`
	HasMore    bool    `json:"hasMore"`
	// Total is the number of items of the whole list, when the service sends it.
	Total *int `json:"total,omitempty"`
}

// TestsetPage is a page of a project's Testsets.
type TestsetPage = Page[Testset]

// TestcasePage is a page of a Testset's Testcases.
type TestcasePage = Page[Testcase]
