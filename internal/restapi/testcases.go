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
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// Testcases in the API are those of the namespace's Testsets, read from
// their source: the inline list, or the ConfigMap's JSON Lines. Writes go
// to inline Testsets only, as an update of the list; the data of a
// ConfigMap or Git source is edited there. No testcase id is stored: a
// testcase's id names its Testset and its key (testcaseID), so a Testset
// from Git keeps its testcases' ids across versions of the source.

// maxAPITestcaseBytes bounds the inline testcases of a Testset the API
// writes to: with the budget of 100 Testsets, 25 MiB a tenant. Larger sets
// belong in a ConfigMap or a Git source.
const maxAPITestcaseBytes = 256 << 10

// plainKey is a key an id carries as it is.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// testcaseID is the id of the testcase with key in the Testset with id
// testsetID: "<testsetID>.<key>" for a plain key, else "<testsetID>~" and
// the key in unpadded base64url. Neither form contains the other's
// separator after it, so parseTestcaseID splits at the last one.
func testcaseID(testsetID, key string) string {
	if plainKey.MatchString(key) {
		return testsetID + "." + key
	}
	return testsetID + "~" + base64.RawURLEncoding.EncodeToString([]byte(key))
}

// parseTestcaseID splits an id made by testcaseID.
func parseTestcaseID(id string) (testsetID, key string, ok bool) {
	i := strings.LastIndexAny(id, ".~")
	if i <= 0 || i == len(id)-1 {
		return "", "", false
	}
	testsetID, key = id[:i], id[i+1:]
	if id[i] == '.' {
		return testsetID, key, plainKey.MatchString(key)
	}
	raw, err := base64.RawURLEncoding.DecodeString(key)
	return testsetID, string(raw), err == nil && len(raw) > 0
}

// newTestcaseKey is the key of a testcase the API adds to a Testset it
// created: 60 random bits, plain.
func newTestcaseKey() string { return strings.ToLower(rand.Text()[:12]) }

func testcaseNotFound() *apierror.Error {
	return apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No Testcase has this id", nil)
}

// casesOf reads t's testcases from its source, in the source's order.
func (s *Server) casesOf(ctx context.Context, t *evaluationv1alpha1.Testset) ([]testcases.Case, error) {
	var set testcases.Set
	var err error
	switch {
	case t.Spec.SourceRef != nil:
		return nil, apierror.Conflict("The testcases of this Testset come from Flux %s %s; this server serves those of "+
			"inline and ConfigMap Testsets", t.Spec.SourceRef.Kind, t.Spec.SourceRef.Name)
	case t.Spec.ConfigMapRef != nil:
		set, err = s.configMapCases(ctx, t)
	default:
		set, err = testcases.FromItems(raw(t.Spec.Inline), string(t.Spec.KeyField))
	}
	if bad, ok := errors.AsType[*testcases.Error](err); ok {
		return nil, apierror.Conflict("The Testset's testcases are not valid: %s", bad.Message)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(set.Cases, func(a, b testcases.Case) int { return a.Line - b.Line })
	return set.Cases, nil
}

// configMapCases reads t's ConfigMap from the API server (ConfigMaps are
// not cached whole); its tenant's read budget pays by its size.
func (s *Server) configMapCases(ctx context.Context, t *evaluationv1alpha1.Testset) (testcases.Set, error) {
	ref := t.Spec.ConfigMapRef
	dataKey := cmp.Or(ref.Key, "testcases.jsonl")
	cm := &corev1.ConfigMap{}
	err := s.opts.Reader.Get(ctx, types.NamespacedName{Namespace: t.Namespace, Name: ref.Name}, cm)
	if apierrors.IsNotFound(err) {
		return testcases.Set{}, apierror.Conflict("The Testset's ConfigMap %s does not exist", ref.Name)
	}
	if err != nil {
		return testcases.Set{}, fmt.Errorf("reading ConfigMap %s: %w", ref.Name, err)
	}
	data, ok := cm.Data[dataKey]
	if !ok {
		return testcases.Set{}, apierror.Conflict("The Testset's ConfigMap %s has no key %s", ref.Name, dataKey)
	}
	s.admission.Charge(t.Namespace, false, (len(data)+tenancy.TextCostUnit-1)/tenancy.TextCostUnit-1)
	return testcases.FromLines(strings.NewReader(data), string(t.Spec.KeyField))
}

// raw is the data of each of items.
func raw(items []runtime.RawExtension) [][]byte {
	out := make([][]byte, len(items))
	for i, it := range items {
		out[i] = it.Raw
	}
	return out
}

// testcaseOf is c, a testcase of t, as the service answers it.
func testcaseOf(t *evaluationv1alpha1.Testset, ts evalapi.Testset, c testcases.Case) evalapi.Testcase {
	data := c.Data
	if t.Spec.KeyField == apiKeyField {
		data = withoutKey(data)
	}
	return evalapi.Derived(ts, evalapi.Testcase{ID: testcaseID(ts.ID, c.Key), TestsetID: ts.ID, JSONData: data})
}

// withoutKey is data without apiKeyField, the key the server gave it.
func withoutKey(data json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return data
	}
	delete(obj, apiKeyField)
	out, err := json.Marshal(obj)
	if err != nil {
		return data
	}
	return out
}

// testcaseCursor is where a page of testcases ended: the key of its last
// testcase, and its index should that key be gone by the next page.
type testcaseCursor struct {
	Key   string `json:"k"`
	Index int    `json:"i"`
}

// listTestcases is GET /testsets/{testsetId}/testcases: the Testset's
// testcases in the source's order, a page at a time.
func (s *Server) listTestcases(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(testsetKind, err)
	}
	limit, err := parseLimit(r.URL.Query())
	if err != nil {
		return s.failure(testsetKind, err)
	}
	var after *testcaseCursor
	if v := r.URL.Query().Get("cursor"); v != "" {
		after = &testcaseCursor{}
		b, decErr := base64.RawURLEncoding.DecodeString(v)
		if decErr != nil || json.Unmarshal(b, after) != nil || after.Key == "" || after.Index < 0 {
			return apierror.Validation(apierror.Field{Field: "cursor", Message: "must be the nextCursor of an earlier page"}).Response()
		}
	}
	t, err := s.findTestset(r.Context(), secret.Namespace, r.PathValue("testsetId"))
	if err != nil {
		return s.failure(testsetKind, err)
	}
	cases, err := s.casesOf(r.Context(), t)
	if err != nil {
		return s.failure(testsetKind, err)
	}
	start := 0
	if after != nil {
		start = min(after.Index+1, len(cases))
		if i := slices.IndexFunc(cases, func(c testcases.Case) bool { return c.Key == after.Key }); i >= 0 {
			start = i + 1
		}
	}
	end := min(start+limit, len(cases))
	ts := convert.TestsetResponseOf(t)
	total := len(cases)
	page := evalapi.TestcasePage{Data: make([]evalapi.Testcase, 0, end-start), HasMore: end < total, Total: &total}
	for _, c := range cases[start:end] {
		page.Data = append(page.Data, testcaseOf(t, ts, c))
	}
	if page.HasMore {
		b, _ := json.Marshal(testcaseCursor{Key: cases[end-1].Key, Index: end - 1}) //nolint:errchkjson // a string and an int
		cursor := base64.RawURLEncoding.EncodeToString(b)
		page.NextCursor = &cursor
	}
	return apierror.Response{Status: http.StatusOK, Body: page}
}

// findTestcase returns the Testset of namespace that holds the testcase
// id, and the testcase.
func (s *Server) findTestcase(ctx context.Context, namespace, id string) (
	*evaluationv1alpha1.Testset, testcases.Case, error) {
	testsetID, key, ok := parseTestcaseID(id)
	if !ok {
		return nil, testcases.Case{}, testcaseNotFound()
	}
	t, err := s.findTestset(ctx, namespace, testsetID)
	if err != nil {
		if e, ok := errors.AsType[*apierror.Error](err); ok && e.Status == http.StatusNotFound {
			err = testcaseNotFound()
		}
		return nil, testcases.Case{}, err
	}
	cases, err := s.casesOf(ctx, t)
	if err != nil {
		return nil, testcases.Case{}, err
	}
	i := slices.IndexFunc(cases, func(c testcases.Case) bool { return c.Key == key })
	if i < 0 {
		return nil, testcases.Case{}, testcaseNotFound()
	}
	return t, cases[i], nil
}

// getTestcase is GET /testcases/{testcaseId}.
func (s *Server) getTestcase(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(testsetKind, err)
	}
	t, c, err := s.findTestcase(r.Context(), secret.Namespace, r.PathValue("testcaseId"))
	if err != nil {
		return s.failure(testsetKind, err)
	}
	return apierror.Response{Status: http.StatusOK, Body: testcaseOf(t, convert.TestsetResponseOf(t), c)}
}

// inlineOnly refuses a testcase write to a Testset whose testcases come
// from a ConfigMap or Git: the source is where they are edited.
func inlineOnly(t *evaluationv1alpha1.Testset) error {
	switch {
	case t.Spec.ConfigMapRef != nil:
		return apierror.Conflict("The testcases of this Testset come from ConfigMap %s; edit them there", t.Spec.ConfigMapRef.Name)
	case t.Spec.SourceRef != nil:
		return apierror.Conflict("The testcases of this Testset come from Flux %s %s; edit them in its source",
			t.Spec.SourceRef.Kind, t.Spec.SourceRef.Name)
	}
	return nil
}

// keyed is data, a testcase's data sent to t, with its key: the server
// gives a new one to a testcase of a Testset it created (want is "": a new
// key; otherwise the testcase's), and one of another Testset must name its
// own in t's keyField.
func keyed(t *evaluationv1alpha1.Testset, data json.RawMessage, want, field string) (json.RawMessage, string, []apierror.Field) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return nil, "", []apierror.Field{{Field: field, Message: "must be a JSON object"}}
	}
	if t.Spec.KeyField != apiKeyField {
		return data, "", nil // FromItems checks the key, naming the item
	}
	if _, set := obj[apiKeyField]; set {
		return nil, "", []apierror.Field{{Field: field + "." + apiKeyField, Message: "is reserved: the server keys the testcase"}}
	}
	key := cmp.Or(want, newTestcaseKey())
	obj[apiKeyField], _ = json.Marshal(key) //nolint:errchkjson // a string
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, "", []apierror.Field{{Field: field, Message: "must be a JSON object"}}
	}
	return out, key, nil
}

// checkedItems validates items as t's new inline testcases; a problem is
// reported on the request's field.
func checkedItems(t *evaluationv1alpha1.Testset, items []runtime.RawExtension, field string) error {
	size := 0
	for _, it := range items {
		size += len(it.Raw)
	}
	if size > maxAPITestcaseBytes {
		return apierror.New(http.StatusRequestEntityTooLarge, evalapi.CodePayloadTooLarge, fmt.Sprintf(
			"The Testset's testcases would be %d bytes, over the %d this server stores inline; keep a larger set "+
				"in a ConfigMap or Git", size, maxAPITestcaseBytes), nil)
	}
	_, err := testcases.FromItems(raw(items), string(t.Spec.KeyField))
	if bad, ok := errors.AsType[*testcases.Error](err); ok {
		return apierror.Validation(apierror.Field{Field: field, Message: bad.Message})
	}
	return err
}

// createTestcases is POST /testsets/{testsetId}/testcases: the items are
// added to the Testset's inline testcases, answered once the reconciler is
// Ready with them.
func (s *Server) createTestcases(w http.ResponseWriter, r *http.Request) apierror.Response {
	var req evalapi.CreateTestcasesRequest
	secret, failed := s.decodeRequest(w, r, testsetKind, &req)
	if failed != nil {
		return *failed
	}
	if n := len(req.Items); n == 0 || n > evalapi.MaxTestcasesPerCreate {
		return apierror.Validation(apierror.Field{Field: "items",
			Message: fmt.Sprintf("must hold 1 to %d testcases", evalapi.MaxTestcasesPerCreate)}).Response()
	}
	t, err := s.findTestset(r.Context(), secret.Namespace, r.PathValue("testsetId"))
	if err == nil {
		err = inlineOnly(t)
	}
	if err != nil {
		return s.failure(testsetKind, err)
	}
	added := make([]runtime.RawExtension, len(req.Items))
	keys := make([]string, len(req.Items))
	var errs []apierror.Field
	for i, it := range req.Items {
		data, key, e := keyed(t, it.JSONData, "", fmt.Sprintf("items[%d].jsonData", i))
		added[i], keys[i], errs = runtime.RawExtension{Raw: data}, key, append(errs, e...)
	}
	if len(errs) > 0 {
		return apierror.Validation(errs...).Response()
	}
	return s.editTestcases(r.Context(), t, func(t *evaluationv1alpha1.Testset) error {
		items := append(slices.Clip(t.Spec.Inline), added...)
		if err := checkedItems(t, items, "items"); err != nil {
			return err
		}
		t.Spec.Inline = items
		return nil
	}, func(t *evaluationv1alpha1.Testset) apierror.Response {
		created, err := testcasesIn(t, added)
		if err != nil {
			return s.failure(testsetKind, err)
		}
		return apierror.Response{Status: http.StatusCreated, Body: evalapi.CreateTestcasesResponse{Items: created}}
	})
}

// editTestcases applies edit to t's inline testcases, as editTestset
// does, and answers with answer once the reconciler is Ready with them.
func (s *Server) editTestcases(ctx context.Context, t *evaluationv1alpha1.Testset,
	edit func(*evaluationv1alpha1.Testset) error, answer func(*evaluationv1alpha1.Testset) apierror.Response) apierror.Response {
	t, err := s.editTestset(ctx, t, func(t *evaluationv1alpha1.Testset) error {
		if err := inlineOnly(t); err != nil {
			return err
		}
		return edit(t)
	})
	if err != nil {
		return s.failure(testsetKind, err)
	}
	return s.await(ctx, updatedTestset(answer), client.ObjectKeyFromObject(t), "", t.Generation)
}

// testcasesIn is items, testcases of t, as the service answers them.
func testcasesIn(t *evaluationv1alpha1.Testset, items []runtime.RawExtension) ([]evalapi.Testcase, error) {
	set, err := testcases.FromItems(raw(items), string(t.Spec.KeyField))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(set.Cases, func(a, b testcases.Case) int { return a.Line - b.Line })
	ts := convert.TestsetResponseOf(t)
	out := make([]evalapi.Testcase, len(set.Cases))
	for i, c := range set.Cases {
		out[i] = testcaseOf(t, ts, c)
	}
	return out, nil
}

// updateTestcase is PUT /testcases/{testcaseId}: the testcase's data is
// replaced; its key, and so its id, stays.
func (s *Server) updateTestcase(w http.ResponseWriter, r *http.Request) apierror.Response {
	var req evalapi.TestcaseData
	secret, failed := s.decodeRequest(w, r, testsetKind, &req)
	if failed != nil {
		return *failed
	}
	if req.JSONData == nil {
		return apierror.Validation(apierror.Field{Field: "jsonData", Message: "Required value"}).Response()
	}
	t, c, err := s.findTestcase(r.Context(), secret.Namespace, r.PathValue("testcaseId"))
	if err == nil {
		err = inlineOnly(t)
	}
	if err != nil {
		return s.failure(testsetKind, err)
	}
	data, _, errs := keyed(t, req.JSONData, c.Key, "jsonData")
	if len(errs) > 0 {
		return apierror.Validation(errs...).Response()
	}
	return s.editTestcases(r.Context(), t, func(t *evaluationv1alpha1.Testset) error {
		// Found again by key: the list may have changed since it was read.
		cases, err := testcases.FromItems(raw(t.Spec.Inline), string(t.Spec.KeyField))
		if err != nil {
			return apierror.Conflict("The Testset's testcases are not valid: %s", err)
		}
		at := slices.IndexFunc(cases.Cases, func(x testcases.Case) bool { return x.Key == c.Key })
		if at < 0 {
			return testcaseNotFound()
		}
		i := cases.Cases[at].Line - 1
		items := slices.Clone(t.Spec.Inline)
		items[i] = runtime.RawExtension{Raw: data}
		if err := checkedItems(t, items, "jsonData"); err != nil {
			return err
		}
		if next, _ := testcases.FromItems([][]byte{data}, string(t.Spec.KeyField)); len(next.Cases) != 1 || next.Cases[0].Key != c.Key {
			return apierror.Validation(apierror.Field{Field: "jsonData." + string(t.Spec.KeyField),
				Message: "names the testcase (the Testset's keyField) and cannot change"})
		}
		t.Spec.Inline = items
		return nil
	}, func(t *evaluationv1alpha1.Testset) apierror.Response {
		updated, err := testcasesIn(t, []runtime.RawExtension{{Raw: data}})
		if err != nil {
			return s.failure(testsetKind, err)
		}
		return apierror.Response{Status: http.StatusOK, Body: updated[0]}
	})
}

// bulkDeleteInCluster is POST /testcases/bulk-delete. Ids of testcases of
// the namespace's Testsets are removed from them; any other ids are
// deleted on the service by a TestcaseDeletion (fallback), as before
// testcases were kept in the cluster.
func (s *Server) bulkDeleteInCluster(fallback http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, err := s.authenticate(r)
		if err != nil {
			apierror.Write(w, r, s.failure(testsetKind, err))
			return
		}
		body, err := s.readBody(w, r)
		if err != nil {
			apierror.Write(w, r, s.failure(testsetKind, err))
			return
		}
		var req evalapi.BulkDeleteRequest
		if errs := decodeStrict(body, &req); len(errs) == 0 {
			groups, err := s.clusterTestcases(r, secret.Namespace, req.IDs)
			if err != nil {
				apierror.Write(w, r, s.failure(testsetKind, err))
				return
			}
			if len(groups) > 0 {
				apierror.Write(w, r, s.removeTestcases(r.Context(), groups))
				return
			}
		}
		r.Body = http.MaxBytesReader(w, io.NopCloser(bytes.NewReader(body)), int64(len(body)))
		fallback.ServeHTTP(w, r)
	})
}

// testsetKeys are keys of testcases of one Testset.
type testsetKeys struct {
	testset *evaluationv1alpha1.Testset
	keys    map[string]bool
}

// clusterTestcases groups the ids that name testcases of the namespace's
// Testsets by Testset; ids of no Testset there are left out.
func (s *Server) clusterTestcases(r *http.Request, namespace string, ids []string) ([]*testsetKeys, error) {
	s.unseen.wait(r.Context(), namespace)
	byID := map[string]*testsetKeys{}
	var out []*testsetKeys
	for _, id := range ids {
		testsetID, key, ok := parseTestcaseID(id)
		if !ok {
			continue
		}
		g, seen := byID[testsetID]
		if !seen {
			t, err := s.testsetWithID(r.Context(), namespace, testsetID)
			if err != nil {
				return nil, err
			}
			if t != nil {
				g = &testsetKeys{testset: t, keys: map[string]bool{}}
				out = append(out, g)
			}
			byID[testsetID] = g
		}
		if g != nil {
			g.keys[key] = true
		}
	}
	return out, nil
}

// removeTestcases removes the testcases of each group from its Testset's
// inline list, and answers once the reconciler is Ready with each.
func (s *Server) removeTestcases(ctx context.Context, groups []*testsetKeys) apierror.Response {
	for _, g := range groups {
		if err := inlineOnly(g.testset); err != nil {
			return s.failure(testsetKind, err)
		}
	}
	for _, g := range groups {
		res := s.editTestcases(ctx, g.testset, func(t *evaluationv1alpha1.Testset) error {
			kept := make([]runtime.RawExtension, 0, len(t.Spec.Inline))
			for _, it := range t.Spec.Inline {
				set, err := testcases.FromItems([][]byte{it.Raw}, string(t.Spec.KeyField))
				if err != nil || !g.keys[set.Cases[0].Key] {
					kept = append(kept, it)
				}
			}
			t.Spec.Inline = kept
			return nil
		}, func(*evaluationv1alpha1.Testset) apierror.Response { return deleted(nil) })
		if res.Status != http.StatusOK {
			return res
		}
	}
	return deleted(nil)
}
