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

package restapi

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
)

// Testsets in the API. A Testset is in the API once it records a remote id
// (Testset.RecordedID), however it was made: through the API, with kubectl
// or from Git. One created through the API is a Testset object with an
// empty inline set, keyed by apiKeyField, to which the testcase operations
// (testcases.go) add.

// testsetKind names Testsets in logs, waiters and error details.
const testsetKind = "Testset"

// apiKeyField is the keyField of the Testsets the server creates. The API
// names a testcase by its id alone, so the server gives each testcase it
// stores a key of its own, in this field of its data; answers leave the
// field out of jsonData, and a request may not set it.
const apiKeyField = "_testcaseKey"

// createTestset is POST /projects/{projectId}/testsets.
func createTestset() *endpoint {
	answer := func(obj client.Object) apierror.Response {
		return apierror.Response{Status: http.StatusCreated, Body: convert.TestsetResponseOf(obj.(*evaluationv1alpha1.Testset))}
	}
	return &endpoint{
		route:      routeTestsets,
		method:     http.MethodPost,
		kind:       testsetKind,
		namePrefix: "testset-",
		hasBody:    true,
		newObject:  func() evaluationv1alpha1.Object { return &evaluationv1alpha1.Testset{} },
		build: func(r *http.Request, body []byte, secret types.NamespacedName) (client.Object, any, []apierror.Field) {
			req, errs := decodeTestsetRequest(body)
			if len(errs) > 0 {
				return nil, nil, errs
			}
			projectID := r.PathValue("projectId")
			t := &evaluationv1alpha1.Testset{Spec: evaluationv1alpha1.TestsetSpec{
				ProjectID:       evaluationv1alpha1.ResourceID(projectID),
				KeyField:        apiKeyField,
				Inline:          []runtime.RawExtension{},
				APIKeySecretRef: keyRef(secret),
			}}
			convert.ApplyTestsetUpdate(&t.Spec, req)
			return t, struct {
				ProjectID string                `json:"projectId"`
				Request   evalapi.TestsetUpdate `json:"request"`
			}{projectID, req}, nil
		},
		fields:  apierror.SpecFields(nil),
		succeed: answer,
		local:   &localCreate{answer: answer, readable: true},
	}
}

// decodeTestsetRequest decodes a Testset create, which sends every field,
// as the service requires.
func decodeTestsetRequest(data []byte) (evalapi.TestsetUpdate, []apierror.Field) {
	var req evalapi.TestsetUpdate
	if errs := decodeStrict(data, &req); len(errs) > 0 {
		return req, errs
	}
	errs := schemaErrors(req)
	for _, f := range []struct {
		name string
		set  bool
	}{{"name", req.Name != nil}, {"description", req.Description != nil},
		{"jsonSchema", req.JSONSchema != nil}, {"fieldMapping", req.FieldMapping != nil}} {
		if !f.set {
			errs = append(errs, apierror.Field{Field: f.name, Message: "Required value"})
		}
	}
	return req, errs
}

// schemaErrors refuses a null jsonSchema, which would read as one left out.
func schemaErrors(u evalapi.TestsetUpdate) []apierror.Field {
	if string(u.JSONSchema) == "null" {
		return []apierror.Field{{Field: "jsonSchema", Message: "must be an object"}}
	}
	return nil
}

// decodeRequest authenticates r and decodes its body strictly into v; a
// failure comes back as its answer.
func (s *Server) decodeRequest(w http.ResponseWriter, r *http.Request, kind string, v any) (
	types.NamespacedName, *apierror.Response) {
	fail := func(res apierror.Response) (types.NamespacedName, *apierror.Response) {
		return types.NamespacedName{}, &res
	}
	secret, err := s.authenticate(r)
	if err != nil {
		return fail(s.failure(kind, err))
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return fail(s.failure(kind, err))
	}
	if errs := decodeStrict(body, v); len(errs) > 0 {
		return fail(apierror.Validation(errs...).Response())
	}
	return secret, nil
}

// testsetWithID is the cache's Testset of namespace whose remote id is id,
// or nil; of two claiming one id, the one that holds it.
func (s *Server) testsetWithID(ctx context.Context, namespace, id string) (*evaluationv1alpha1.Testset, error) {
	var list evaluationv1alpha1.TestsetList
	err := s.opts.Cache.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{remoteIDIndex: id})
	if err != nil || len(list.Items) == 0 {
		return nil, err
	}
	return holder(list.Items), nil
}

// findTestset returns the Testset of namespace whose remote id is id,
// waiting for the cache as findMetric does.
func (s *Server) findTestset(ctx context.Context, namespace, id string) (*evaluationv1alpha1.Testset, error) {
	var t *evaluationv1alpha1.Testset
	err := s.lookUp(ctx, testsetKind, namespace, func() (found bool, err error) {
		t, err = s.testsetWithID(ctx, namespace, id)
		return t != nil, err
	})
	if err == nil && t == nil {
		err = testsetNotFound()
	}
	return t, err
}

func testsetNotFound() *apierror.Error {
	return apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No Testset has this id", nil)
}

// getTestset is GET /testsets/{testsetId}.
func (s *Server) getTestset(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(testsetKind, err)
	}
	t, err := s.findTestset(r.Context(), secret.Namespace, r.PathValue("testsetId"))
	if err != nil {
		return s.failure(testsetKind, err)
	}
	return apierror.Response{Status: http.StatusOK, Body: convert.TestsetResponseOf(t)}
}

// listTestsets is GET /projects/{projectId}/testsets: the project's
// Testsets with a remote id, newest first, a page at a time.
func (s *Server) listTestsets(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(testsetKind, err)
	}
	limit, after, err := parseListQuery(r.URL.Query())
	if err != nil {
		return s.failure(testsetKind, err)
	}
	s.unseen.wait(r.Context(), secret.Namespace)
	var list evaluationv1alpha1.TestsetList
	err = s.opts.Cache.List(r.Context(), &list, client.InNamespace(secret.Namespace),
		client.MatchingFields{projectIndex: r.PathValue("projectId")}, client.UnsafeDisableDeepCopy)
	if err != nil {
		return s.failure(testsetKind, fmt.Errorf("listing Testsets from the cache: %w", err))
	}
	page, _ := projectPage(list.Items, after, limit, func(t *evaluationv1alpha1.Testset) (evalapi.Testset, error) {
		return convert.TestsetResponseOf(t), nil
	})
	return apierror.Response{Status: http.StatusOK, Body: page}
}

// updateTestset is PATCH /testsets/{testsetId}: it updates the spec and
// answers once the reconciler is Ready at the new generation.
func (s *Server) updateTestset(w http.ResponseWriter, r *http.Request) apierror.Response {
	var u evalapi.TestsetUpdate
	secret, failed := s.decodeRequest(w, r, testsetKind, &u)
	if failed != nil {
		return *failed
	}
	if errs := schemaErrors(u); len(errs) > 0 {
		return apierror.Validation(errs...).Response()
	}
	t, err := s.findTestset(r.Context(), secret.Namespace, r.PathValue("testsetId"))
	if err != nil {
		return s.failure(testsetKind, err)
	}
	t, err = s.editTestset(r.Context(), t, func(t *evaluationv1alpha1.Testset) error {
		convert.ApplyTestsetUpdate(&t.Spec, u)
		return nil
	})
	if err != nil {
		return s.failure(testsetKind, err)
	}
	return s.await(r.Context(), updatedTestset(testsetAnswer), client.ObjectKeyFromObject(t), "", t.Generation)
}

// editTestset applies edit to t's spec and updates it, with t's
// resourceVersion as the precondition, reading t again and editing that
// when someone else changed it. The CRD validates the result. The
// managementPolicies must allow Update: the operator would never send it.
func (s *Server) editTestset(ctx context.Context, t *evaluationv1alpha1.Testset,
	edit func(*evaluationv1alpha1.Testset) error) (*evaluationv1alpha1.Testset, error) {
	key := client.ObjectKeyFromObject(t)
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := s.opts.Cache.Get(ctx, key, t); err != nil {
				return err
			}
		}
		first = false
		if e := tenancy.RefusedByPolicy(testsetKind, &t.Spec, evaluationv1alpha1.ManagementUpdate); e != nil {
			return e
		}
		if err := edit(t); err != nil {
			return err
		}
		err := s.opts.Client.Update(ctx, t)
		apierror.NoteWrite(ctx, err)
		return err
	})
	if _, ok := err.(*apierror.Error); ok { //nolint:errorlint // edit returns an apiError as is
		return nil, err
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, testsetNotFound()
	case err != nil:
		return nil, apierror.WriteFailed(testsetFields, err, "updating the Testset")
	}
	// Admission took one write; the whole Testset was written.
	s.admission.Charge(t.Namespace, true, testsetCost(t)-1)
	return t, nil
}

func testsetAnswer(t *evaluationv1alpha1.Testset) apierror.Response {
	return apierror.Response{Status: http.StatusOK, Body: convert.TestsetResponseOf(t)}
}

// testsetFields maps a Testset's field paths to the API's names; its
// inline testcases are the request's items.
var testsetFields = apierror.SpecFields(map[string]string{"inline": "items"})

// updatedTestset waits, like a create, for Ready at the generation an
// update made, and answers with answer.
func updatedTestset(answer func(*evaluationv1alpha1.Testset) apierror.Response) *endpoint {
	return &endpoint{
		kind:      testsetKind,
		newObject: func() evaluationv1alpha1.Object { return &evaluationv1alpha1.Testset{} },
		fields:    testsetFields,
		updates:   true,
		succeed:   func(obj client.Object) apierror.Response { return answer(obj.(*evaluationv1alpha1.Testset)) },
	}
}

// deleteTestsetObject is DELETE /testsets/{testsetId} for a Testset the
// namespace holds: it deletes the object and answers once it is gone, that
// is once its deletion policy has run. An id no Testset of the namespace
// records is deleted on the service by a TestsetDeletion (fallback), as
// before Testsets were kept in the cluster.
func (s *Server) deleteTestsetObject(fallback http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, err := s.authenticate(r)
		if err != nil {
			apierror.Write(w, r, s.failure(testsetKind, err))
			return
		}
		// No grace for the cache here: a miss is an id the service may hold.
		s.unseen.wait(r.Context(), secret.Namespace)
		t, err := s.testsetWithID(r.Context(), secret.Namespace, r.PathValue("testsetId"))
		switch {
		case err != nil:
			apierror.Write(w, r, s.failure(testsetKind, err))
		case t == nil:
			fallback.ServeHTTP(w, r)
		default:
			apierror.Write(w, r, s.deleteObject(r.Context(), updatedTestset(testsetAnswer), t, &t.Spec))
		}
	})
}

// testsetCost is what writing t costs its tenant's write budget, as
// tenancy.TextCost for a Metric: one write per started unit of its testcases and
// texts.
func testsetCost(t *evaluationv1alpha1.Testset) int {
	n := len(t.Spec.Name) + len(t.Spec.Description)
	if t.Spec.JSONSchema != nil {
		n += len(t.Spec.JSONSchema.Raw)
	}
	for _, it := range t.Spec.Inline {
		n += len(it.Raw)
	}
	return max(1, (n+tenancy.TextCostUnit-1)/tenancy.TextCostUnit)
}
