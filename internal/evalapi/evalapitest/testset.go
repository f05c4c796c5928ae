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

package evalapitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Testsets and Testcases as the API description has them (the Testset and
// Testcase schemas): a Testset's jsonSchema describes its testcases'
// jsonData; a testcase that does not conform is stored all the same, with
// validationErrors; inputs and expected are the fields the fieldMapping
// names. Lists of testcases are oldest first, of testsets newest first. A
// deletion of a Testset or testcases the Server does not hold succeeds, as
// for ones another client created before the Server started.

// storedTestset is a Testset the Server holds.
type storedTestset struct {
	projectID string
	seq       int
	testset   evalapi.Testset
}

// storedTestcase is a Testcase the Server holds.
type storedTestcase struct {
	seq      int
	testcase evalapi.Testcase
}

// testsetStore holds the Testsets and Testcases. Callers hold the Server's lock.
type testsetStore struct {
	seq       int
	testsets  map[string]*storedTestset
	testcases map[string]*storedTestcase
}

func (st *testsetStore) next() int {
	if st.testsets == nil {
		st.testsets, st.testcases = map[string]*storedTestset{}, map[string]*storedTestcase{}
	}
	st.seq++
	return st.seq
}

// Testset returns the Testset the Server holds under id, as GET would.
func (s *Server) Testset(id string) (evalapi.Testset, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.sets.testsets[id]
	if !ok {
		return evalapi.Testset{}, false
	}
	return t.testset, true
}

// Testcases returns the testcases of Testset id, oldest first.
func (s *Server) Testcases(id string) []evalapi.Testcase {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := s.testcasesOf(id)
	out := make([]evalapi.Testcase, len(held))
	for i, tc := range held {
		out[i] = tc.testcase
	}
	return out
}

// testsetOf is the Testset under id if tenant reaches it. Callers hold the lock.
func (s *Server) testsetOf(tenant int, id string) (*storedTestset, bool) {
	t, ok := s.sets.testsets[id]
	if !ok || s.projects[t.projectID] != tenant {
		return nil, false
	}
	return t, true
}

// testcasesOf are the testcases of Testset id, oldest first. Callers hold the lock.
func (s *Server) testcasesOf(id string) []*storedTestcase {
	var out []*storedTestcase
	for _, tc := range s.sets.testcases {
		if tc.testcase.TestsetID == id {
			out = append(out, tc)
		}
	}
	slices.SortFunc(out, func(a, b *storedTestcase) int { return a.seq - b.seq })
	return out
}

// testsetBody is a create or PATCH body; pointers tell a field left out.
type testsetBody struct {
	Name         *string               `json:"name"`
	Description  *string               `json:"description"`
	JSONSchema   json.RawMessage       `json:"jsonSchema"`
	FieldMapping *evalapi.FieldMapping `json:"fieldMapping"`
}

// validate checks b; a create (whole) needs every field.
func (b *testsetBody) validate(whole bool) []fieldError {
	var errs []fieldError
	required := func(field string, set bool) {
		if whole && !set {
			errs = append(errs, fieldError{Field: field, Message: field + " is required"})
		}
	}
	required("name", b.Name != nil)
	required("description", b.Description != nil)
	required("jsonSchema", b.JSONSchema != nil)
	required("fieldMapping", b.FieldMapping != nil)
	if b.JSONSchema != nil {
		var schema map[string]any
		if json.Unmarshal(b.JSONSchema, &schema) != nil || schema == nil {
			errs = append(errs, fieldError{Field: "jsonSchema", Message: "jsonSchema must be an object"})
		}
	}
	if m := b.FieldMapping; m != nil && (m.Inputs == nil || m.Expected == nil || m.Metadata == nil) {
		errs = append(errs, fieldError{Field: "fieldMapping", Message: "fieldMapping needs inputs, expected and metadata"})
	}
	return errs
}

// applied is t with the fields b sends.
func (b *testsetBody) applied(t evalapi.Testset) evalapi.Testset {
	if b.Name != nil {
		t.Name = *b.Name
	}
	if b.Description != nil {
		t.Description = *b.Description
	}
	if b.JSONSchema != nil {
		t.JSONSchema = compact(b.JSONSchema)
	}
	if b.FieldMapping != nil {
		t.FieldMapping = *b.FieldMapping
	}
	return t
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return slices.Clone(raw)
	}
	return b.Bytes()
}

func (s *Server) createTestset(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	var b testsetBody
	if rejection, ok := decodeJSON(r, body, &b); !ok {
		return nil, rejection
	}
	if errs := b.validate(true); len(errs) > 0 {
		return nil, invalid(errs...)
	}
	projectID := r.PathValue("projectId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.reaches(tenant, projectID) {
			return projectNotFound(projectID)
		}
		seq := s.sets.next()
		t := b.applied(evalapi.Testset{ID: fmt.Sprintf("ts_%08d", seq)})
		s.sets.testsets[t.ID] = &storedTestset{projectID: projectID, seq: seq, testset: t}
		return reply{http.StatusCreated, t}
	}, reply{}
}

func (s *Server) getTestset(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	id := r.PathValue("testsetId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		t, ok := s.testsetOf(tenant, id)
		if !ok {
			return testsetNotFound(id)
		}
		return reply{http.StatusOK, t.testset}
	}, reply{}
}

// updateTestset applies a PATCH. The testcases keep their data; a new
// schema or mapping applies to what they derive from it.
func (s *Server) updateTestset(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	var b testsetBody
	if rejection, ok := decodeJSON(r, body, &b); !ok {
		return nil, rejection
	}
	if errs := b.validate(false); len(errs) > 0 {
		return nil, invalid(errs...)
	}
	id := r.PathValue("testsetId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		t, ok := s.testsetOf(tenant, id)
		if !ok {
			return testsetNotFound(id)
		}
		t.testset = b.applied(t.testset)
		for _, tc := range s.testcasesOf(id) {
			tc.testcase = evalapi.Derived(t.testset, tc.testcase)
		}
		return reply{http.StatusOK, t.testset}
	}, reply{}
}

// listTestsets answers a page of a project's Testsets, newest first.
func (s *Server) listTestsets(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	limit, last, errs := listQuery(r.URL.Query())
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	projectID := r.PathValue("projectId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.reaches(tenant, projectID) {
			return projectNotFound(projectID)
		}
		var all []*storedTestset
		for _, t := range s.sets.testsets {
			if t.projectID == projectID {
				all = append(all, t)
			}
		}
		slices.SortFunc(all, func(a, b *storedTestset) int { return b.seq - a.seq })
		return reply{http.StatusOK, pageOf(all, func(t *storedTestset) int { return t.seq },
			func(t *storedTestset) evalapi.Testset { return t.testset }, last, limit, true)}
	}, reply{}
}

// pageOf is the page of items, in list order, that follows the item whose
// creation sequence number is last (from the first for 0), at most limit
// long; newestFirst says the list's order. seq is an item's sequence
// number, value its response form.
func pageOf[S, T any](items []S, seq func(S) int, value func(S) T, last, limit int, newestFirst bool) evalapi.Page[T] {
	from := len(items)
	for i, it := range items {
		if n := seq(it); last == 0 || (newestFirst && n < last) || (!newestFirst && n > last) {
			from = i
			break
		}
	}
	end := min(from+limit, len(items))
	total := len(items)
	page := evalapi.Page[T]{Data: make([]T, 0, end-from), Total: &total}
	for _, it := range items[from:end] {
		page.Data = append(page.Data, value(it))
	}
	if end < len(items) {
		next := encodeCursor(seq(items[end-1]))
		page.NextCursor, page.HasMore = &next, true
	}
	return page
}

func (s *Server) createTestcases(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	var req struct {
		Items []struct {
			JSONData json.RawMessage `json:"jsonData"`
		} `json:"items"`
	}
	if rejection, ok := decodeJSON(r, body, &req); !ok {
		return nil, rejection
	}
	if n := len(req.Items); n < 1 || n > evalapi.MaxTestcasesPerCreate {
		return nil, invalid(fieldError{Field: "items", Message: fmt.Sprintf("items must hold 1 to %d testcases, not %d",
			evalapi.MaxTestcasesPerCreate, n)})
	}
	var errs []fieldError
	for i, item := range req.Items {
		if !isObject(item.JSONData) {
			errs = append(errs, fieldError{Field: fmt.Sprintf("items[%d].jsonData", i), Message: "jsonData must be an object"})
		}
	}
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	id := r.PathValue("testsetId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		t, ok := s.testsetOf(tenant, id)
		if !ok {
			return testsetNotFound(id)
		}
		out := make([]evalapi.Testcase, len(req.Items))
		for i, item := range req.Items {
			seq := s.sets.next()
			tc := evalapi.Derived(t.testset, evalapi.Testcase{ID: fmt.Sprintf("tc_%08d", seq), TestsetID: id, JSONData: compact(item.JSONData)})
			s.sets.testcases[tc.ID] = &storedTestcase{seq: seq, testcase: tc}
			out[i] = tc
		}
		return reply{http.StatusCreated, evalapi.CreateTestcasesResponse{Items: out}}
	}, reply{}
}

// listTestcases answers a page of a Testset's testcases, oldest first.
func (s *Server) listTestcases(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	limit, last, errs := listQuery(r.URL.Query())
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	id := r.PathValue("testsetId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.testsetOf(tenant, id); !ok {
			return testsetNotFound(id)
		}
		return reply{http.StatusOK, pageOf(s.testcasesOf(id), func(tc *storedTestcase) int { return tc.seq },
			func(tc *storedTestcase) evalapi.Testcase { return tc.testcase }, last, limit, false)}
	}, reply{}
}

// testcaseOf is the testcase under id and its Testset if tenant reaches
// them. Callers hold the lock.
func (s *Server) testcaseOf(tenant int, id string) (*storedTestcase, *storedTestset, bool) {
	tc, ok := s.sets.testcases[id]
	if !ok {
		return nil, nil, false
	}
	t, ok := s.testsetOf(tenant, tc.testcase.TestsetID)
	return tc, t, ok
}

func (s *Server) getTestcase(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	id := r.PathValue("testcaseId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		tc, _, ok := s.testcaseOf(tenant, id)
		if !ok {
			return testcaseNotFound(id)
		}
		return reply{http.StatusOK, tc.testcase}
	}, reply{}
}

// updateTestcase replaces a testcase's data (PUT).
func (s *Server) updateTestcase(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	var req struct {
		JSONData json.RawMessage `json:"jsonData"`
	}
	if rejection, ok := decodeJSON(r, body, &req); !ok {
		return nil, rejection
	}
	if !isObject(req.JSONData) {
		return nil, invalid(fieldError{Field: "jsonData", Message: "jsonData is required and must be an object"})
	}
	id := r.PathValue("testcaseId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		tc, t, ok := s.testcaseOf(tenant, id)
		if !ok {
			return testcaseNotFound(id)
		}
		tc.testcase.JSONData = compact(req.JSONData)
		tc.testcase = evalapi.Derived(t.testset, tc.testcase)
		return reply{http.StatusOK, tc.testcase}
	}, reply{}
}

func isObject(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil
}

func testsetNotFound(id string) reply {
	return errorReply(http.StatusNotFound, codeNotFound, "Testset not found", map[string]any{"testsetId": id})
}

func testcaseNotFound(id string) reply {
	return errorReply(http.StatusNotFound, codeNotFound, "Testcase not found", map[string]any{"testcaseId": id})
}
