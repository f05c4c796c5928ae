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
	"encoding/json"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// MaxTestcasesPerCreate is the most testcases one create call carries.
const MaxTestcasesPerCreate = evalapi.MaxTestcasesPerCreate

// testcasePageSize is the page size of a sweep of a Testset's testcases:
// the most the service serves in one page.
const testcasePageSize = 100

// Testset is a Testset as a service holds it, without its testcases.
type Testset struct {
	ID   string
	Name string
	held evalapi.Testset
}

func testsetOf(t evalapi.Testset) Testset { return Testset{ID: t.ID, Name: t.Name, held: t} }

// Matches reports whether the Testset's own fields are what spec asks for.
func (t Testset) Matches(spec *v1alpha1.TestsetSpec) bool {
	return convert.TestsetMatches(t.held, spec)
}

// TestsetPage is one page of a project's Testsets.
type TestsetPage struct {
	Testsets []Testset
	// Next is the cursor of the next page, "" after the last.
	Next string
}

// Testcase is one testcase of a remote Testset.
type Testcase struct {
	ID string
	// Data is the testcase's data, a JSON object, as the service holds it.
	Data json.RawMessage
}

func (c *httpClient) CreateTestset(ctx context.Context, spec *v1alpha1.TestsetSpec,
	guard func(context.Context) error) (Testset, error) {
	key, release, err := c.beginCreate(ctx)
	if err != nil {
		return Testset{}, err
	}
	defer release()
	if err := guard(ctx); err != nil {
		return Testset{}, err
	}
	t, err := c.svc.CreateTestset(ctx, key, string(spec.ProjectID), convert.TestsetRequestFor(spec))
	return testsetOf(t), err
}

func (c *httpClient) GetTestset(ctx context.Context, id string) (Testset, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return Testset{}, err
	}
	defer release()
	t, err := c.svc.GetTestset(ctx, key, id)
	return testsetOf(t), err
}

func (c *httpClient) UpdateTestset(ctx context.Context, id string, spec *v1alpha1.TestsetSpec) (Testset, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return Testset{}, err
	}
	defer release()
	t, err := c.svc.UpdateTestset(ctx, key, id, convert.TestsetUpdateFor(spec))
	return testsetOf(t), err
}

func (c *httpClient) ListTestsets(ctx context.Context, projectID v1alpha1.ResourceID, cursor string, limit int) (
	TestsetPage, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return TestsetPage{}, err
	}
	defer release()
	got, err := c.svc.ListTestsets(ctx, key, string(projectID), evalapi.ListOptions{Limit: limit, Cursor: cursor})
	if err != nil {
		return TestsetPage{}, err
	}
	page := TestsetPage{Testsets: make([]Testset, len(got.Data))}
	for i, t := range got.Data {
		page.Testsets[i] = testsetOf(t)
	}
	if got.NextCursor != nil {
		page.Next = *got.NextCursor
	}
	return page, nil
}

func (c *httpClient) Testcases(ctx context.Context, id string, each func(Testcase) error) error {
	cursor := ""
	for {
		page, err := c.testcasePage(ctx, id, cursor)
		if err != nil {
			return err
		}
		for _, t := range page.Data {
			if err := each(Testcase{ID: t.ID, Data: t.JSONData}); err != nil {
				return err
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" || len(page.Data) == 0 {
			return nil
		}
		cursor = *page.NextCursor
	}
}

// testcasePage reads one page, each through the gate: a sweep of a large
// set leaves other objects their turns between its pages.
func (c *httpClient) testcasePage(ctx context.Context, id, cursor string) (evalapi.TestcasePage, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return evalapi.TestcasePage{}, err
	}
	defer release()
	return c.svc.ListTestcases(ctx, key, id, evalapi.ListOptions{Limit: testcasePageSize, Cursor: cursor})
}

func (c *httpClient) CreateTestcases(ctx context.Context, id string, data []json.RawMessage) error {
	for start := 0; start < len(data); start += MaxTestcasesPerCreate {
		if err := c.createTestcases(ctx, id, data[start:min(start+MaxTestcasesPerCreate, len(data))]); err != nil {
			return err
		}
	}
	return nil
}

func (c *httpClient) createTestcases(ctx context.Context, id string, data []json.RawMessage) error {
	key, release, err := c.begin(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = c.svc.CreateTestcases(ctx, key, id, data)
	return err
}

func (c *httpClient) UpdateTestcase(ctx context.Context, id string, data json.RawMessage) error {
	key, release, err := c.begin(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = c.svc.UpdateTestcase(ctx, key, id, data)
	return err
}

// CreateTestset assigns a fresh id locally, as a Metric's create does:
// the cluster is the record of the Testset and its testcases.
func (c standalone) CreateTestset(ctx context.Context, spec *v1alpha1.TestsetSpec, _ func(context.Context) error) (
	Testset, error) {
	if err := c.beginCreate(ctx); err != nil {
		return Testset{}, err
	}
	return asHeld(NewTestsetID(), spec), nil
}

func asHeld(id string, spec *v1alpha1.TestsetSpec) Testset {
	req := convert.TestsetRequestFor(spec)
	return testsetOf(evalapi.Testset{ID: id, Name: req.Name, Description: req.Description,
		JSONSchema: req.JSONSchema, FieldMapping: req.FieldMapping})
}

// GetTestset cannot tell the Testset's spec: it answers with the id only.
// A standalone Testset's reconciler never reads it back.
func (standalone) GetTestset(_ context.Context, id string) (Testset, error) {
	return Testset{ID: id}, nil
}

func (standalone) UpdateTestset(_ context.Context, id string, spec *v1alpha1.TestsetSpec) (Testset, error) {
	return asHeld(id, spec), nil
}

// ListTestsets returns an empty last page: the cluster's Testsets are all there is.
func (standalone) ListTestsets(context.Context, v1alpha1.ResourceID, string, int) (TestsetPage, error) {
	return TestsetPage{}, nil
}

// Testcases finds none: a standalone service keeps no copy of them.
func (standalone) Testcases(context.Context, string, func(Testcase) error) error { return nil }

func (standalone) CreateTestcases(context.Context, string, []json.RawMessage) error { return nil }

func (standalone) UpdateTestcase(context.Context, string, json.RawMessage) error { return nil }
