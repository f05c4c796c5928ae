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
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// The operations on existing Metrics (and Testsets, testsets.go) read them
// from the manager's cache, through two field indexes, so that no request
// lists from the API server.
// A Metric is in the API once it records a remote id (Metric.RecordedID),
// however it was made: through the API or with kubectl. On a standalone
// service the server records the id in the metric-id annotation when it
// creates a Metric, and answers before the reconciler copies it to status.
const (
	// projectIndex indexes Metrics and Testsets with a remote id by
	// spec.projectId; the cache keys it by namespace too.
	projectIndex = "restapi.spec.projectId"
	// remoteIDIndex indexes them by their recorded remote id.
	remoteIDIndex = "restapi.remoteID"
)

// List page sizes.
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// indexedCaches are the caches whose Metrics and Testsets are indexed
// already: servers sharing a manager share its indexes, which can be added
// only once.
var indexedCaches sync.Map

// indexResources adds the indexes of Metrics and Testsets to c, once per
// cache. Each kind is indexed only once it is in the API.
func indexResources(ctx context.Context, c cache.Cache) error {
	if _, done := indexedCaches.LoadOrStore(c, struct{}{}); done {
		return nil
	}
	metric := func(value func(*evaluationv1alpha1.Metric) string) client.IndexerFunc {
		return func(o client.Object) []string {
			if m := o.(*evaluationv1alpha1.Metric); inAPI(m) {
				return []string{value(m)}
			}
			return nil
		}
	}
	testset := func(value func(*evaluationv1alpha1.Testset) string) client.IndexerFunc {
		return func(o client.Object) []string {
			if t := o.(*evaluationv1alpha1.Testset); t.RecordedID() != "" && !t.IDRefused() {
				return []string{value(t)}
			}
			return nil
		}
	}
	system := func(value func(*evaluationv1alpha1.System) string) client.IndexerFunc {
		return func(o client.Object) []string {
			if s := o.(*evaluationv1alpha1.System); s.RecordedID() != "" {
				return []string{value(s)}
			}
			return nil
		}
	}
	for _, ix := range []struct {
		obj   client.Object
		name  string
		value client.IndexerFunc
	}{
		{&evaluationv1alpha1.Metric{}, remoteIDIndex, metric((*evaluationv1alpha1.Metric).RecordedID)},
		{&evaluationv1alpha1.Metric{}, projectIndex, metric(func(m *evaluationv1alpha1.Metric) string { return string(m.Spec.ProjectID) })},
		{&evaluationv1alpha1.Testset{}, remoteIDIndex, testset((*evaluationv1alpha1.Testset).RecordedID)},
		{&evaluationv1alpha1.Testset{}, projectIndex, testset(func(t *evaluationv1alpha1.Testset) string { return string(t.Spec.ProjectID) })},
		{&evaluationv1alpha1.System{}, remoteIDIndex, system((*evaluationv1alpha1.System).RecordedID)},
		{&evaluationv1alpha1.System{}, projectIndex, system(func(s *evaluationv1alpha1.System) string { return string(s.Spec.ProjectID) })},
		{&evaluationv1alpha1.SystemVersion{}, remoteIDIndex, func(o client.Object) []string {
			if id := o.(*evaluationv1alpha1.SystemVersion).RecordedID(); id != "" {
				return []string{id}
			}
			return nil
		}},
		{&evaluationv1alpha1.SystemVersion{}, systemRefIndex, func(o client.Object) []string {
			return []string{o.(*evaluationv1alpha1.SystemVersion).Spec.SystemRef.Name}
		}},
		{&evaluationv1alpha1.EvaluationRun{}, remoteIDIndex, func(o client.Object) []string {
			if id := o.(*evaluationv1alpha1.EvaluationRun).RecordedID(); id != "" {
				return []string{id}
			}
			return nil
		}},
	} {
		if err := c.IndexField(ctx, ix.obj, ix.name, ix.value); err != nil {
			indexedCaches.Delete(c)
			return fmt.Errorf("indexing %T by %s: %w", ix.obj, ix.name, err)
		}
	}
	return nil
}

// inAPI reports whether the API shows m: not until the service has it,
// nor under a refused id.
func inAPI(m *evaluationv1alpha1.Metric) bool {
	id := m.RecordedID()
	return id != "" && servable(m, id)
}

// getMetric is GET /metrics/{metricId}.
func (s *Server) getMetric(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(metricKind, err)
	}
	m, err := s.findMetric(r.Context(), secret.Namespace, r.PathValue("metricId"))
	if err == nil {
		err = s.whole(r.Context(), m)
	}
	if err != nil {
		return s.failure(metricKind, err)
	}
	return apierror.Response{Status: http.StatusOK, Body: convert.ResponseOf(m)}
}

// updateMetric is PATCH /metrics/{metricId}: it updates the spec and answers
// once the reconciler is Ready at the new generation.
func (s *Server) updateMetric(w http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(metricKind, err)
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return s.failure(metricKind, err)
	}
	u, errs := decodeMetricUpdate(body)
	if len(errs) > 0 {
		return apierror.Validation(errs...).Response()
	}
	m, err := s.findMetric(r.Context(), secret.Namespace, r.PathValue("metricId"))
	if err != nil {
		return s.failure(metricKind, err)
	}
	if e := tenancy.RefusedByPolicy(metricKind, &m.Spec, evaluationv1alpha1.ManagementUpdate); e != nil {
		return e.Response()
	}
	if m, err = s.patchSpec(r.Context(), m, u); err != nil {
		return s.failure(metricKind, err)
	}
	// Admission took one write; the whole Metric was written, long texts and all.
	s.admission.Charge(m.Namespace, true, tenancy.TextCost(m)-1)
	return s.await(r.Context(), updatedMetric(), client.ObjectKeyFromObject(m), "", m.Generation)
}

// patchSpec applies u to m's spec, with m's resourceVersion as the
// precondition, reading m again and retrying when someone else changed it.
// The CRD validates the result, as it validates a create.
func (s *Server) patchSpec(ctx context.Context, m *evaluationv1alpha1.Metric, u evalapi.MetricUpdate) (*evaluationv1alpha1.Metric, error) {
	key := client.ObjectKeyFromObject(m)
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := s.opts.Cache.Get(ctx, key, m); err != nil {
				return err
			}
		}
		first = false
		// The update sends the whole spec: never one missing the cache's trimmed texts.
		if err := s.whole(ctx, m); err != nil {
			return err
		}
		m.Spec = patchedSpec(m.Spec, u)
		err := s.opts.Client.Update(ctx, m)
		apierror.NoteWrite(ctx, err)
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		return nil, metricNotFound()
	case err != nil:
		return nil, apierror.WriteFailed(apierror.SpecFields(nil), err, "updating the Metric")
	}
	return m, nil
}

// patchedSpec is spec after the update u, by the service's rules
// (evalapi.MergeUpdate): a field u sends replaces the spec's, one it leaves
// out keeps its value while the variant still has it. A field the spec
// leaves to the service's default stays unset.
func patchedSpec(spec evaluationv1alpha1.MetricSpec, u evalapi.MetricUpdate) evaluationv1alpha1.MetricSpec {
	cur := convert.RequestFor(&spec)
	merged := evalapi.MergeUpdate(evalapi.Metric{
		Name: cur.Name, Description: cur.Description, EvalType: cur.EvalType, OutputType: cur.OutputType,
		PromptTemplate: cur.PromptTemplate, EvalModelName: cur.EvalModelName, Temperature: cur.Temperature,
		PassingThreshold: cur.PassingThreshold,
	}, u)
	if u.Guidelines == nil {
		merged.Guidelines = cur.Guidelines // every variant has guidelines
	}
	next := convert.SpecFor(string(spec.ProjectID), merged)
	next.APIKeySecretRef, next.DeletionPolicy = spec.APIKeySecretRef, spec.DeletionPolicy
	next.ManagementPolicies, next.AdoptionPolicy, next.ServiceRef = spec.ManagementPolicies, spec.AdoptionPolicy, spec.ServiceRef
	return next
}

// deleteMetric is DELETE /metrics/{metricId}: it deletes the resource and
// answers once it is gone, that is once its deletion policy has run.
func (s *Server) deleteMetric(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(metricKind, err)
	}
	m, err := s.findMetric(r.Context(), secret.Namespace, r.PathValue("metricId"))
	if err != nil {
		return s.failure(metricKind, err)
	}
	return s.deleteObject(r.Context(), updatedMetric(), m, &m.Spec)
}

// deleteObject deletes obj, of ep's kind and under the managementPolicies
// of spec, and answers once it is gone, that is once its deletion policy
// has run.
func (s *Server) deleteObject(ctx context.Context, ep *endpoint, obj evaluationv1alpha1.Object, spec tenancy.Policed) apierror.Response {
	if e := tenancy.RefusedByPolicy(ep.kind, spec, evaluationv1alpha1.ManagementDelete); e != nil {
		return e.Response()
	}
	uid := obj.GetUID()
	err := s.opts.Client.Delete(ctx, obj, client.Preconditions{UID: &uid})
	apierror.NoteWrite(ctx, err)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) { // gone already, or replaced
		return s.failure(ep.kind, apierror.WriteFailed(ep.fields, err, "deleting the "+ep.kind))
	}
	return s.waitFor(ctx, ep, client.ObjectKeyFromObject(obj), func(obj evaluationv1alpha1.Object) (apierror.Response, bool, string) {
		if obj == nil || obj.GetUID() != uid {
			return apierror.Response{Status: http.StatusOK, Body: evalapi.SuccessResponse{Success: true}}, true, ""
		}
		_, v, reason := judge(ep, obj)
		if v == refused || v == stuck { // the finalizer stalled: the remote copy may still exist
			return apierror.New(http.StatusBadGateway, apierror.CodeUpstreamError,
				"Deleting the "+ep.kind+" needs the attention of the cluster's administrator",
				resourceDetails(ep.kind, client.ObjectKeyFromObject(obj), reason)).Response(), true, reason
		}
		return apierror.Response{}, false, reason
	})
}

// listMetrics is GET /projects/{projectId}/metrics: the project's Metrics
// with a remote id, newest first, a page at a time.
func (s *Server) listMetrics(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(metricKind, err)
	}
	limit, after, err := parseListQuery(r.URL.Query())
	if err != nil {
		return s.failure(metricKind, err)
	}
	s.unseen.wait(r.Context(), secret.Namespace)
	var list evaluationv1alpha1.MetricList
	err = s.opts.Cache.List(r.Context(), &list, client.InNamespace(secret.Namespace),
		client.MatchingFields{projectIndex: r.PathValue("projectId")}, client.UnsafeDisableDeepCopy)
	if err != nil {
		return s.failure(metricKind, fmt.Errorf("listing Metrics from the cache: %w", err))
	}
	items, more := listPage(list.Items, after, limit)
	if end := pageEnd(items); end < len(items) {
		items, more = items[:end], true
	}
	page := evalapi.MetricPage{Data: make([]evalapi.Metric, 0, len(items)), HasMore: more}
	for _, m := range items {
		if trimcache.Trimmed(m) {
			m = m.DeepCopy() // whole reads the Metric into it: the cache's own stays as it is
		}
		if err := s.whole(r.Context(), m); err != nil {
			return s.failure(metricKind, err)
		}
		page.Data = append(page.Data, convert.ResponseOf(m))
	}
	if more {
		cursor := positionOf(items[len(items)-1]).cursor()
		page.NextCursor = &cursor
	}
	total := len(list.Items)
	page.Total = &total
	return apierror.Response{Status: http.StatusOK, Body: page}
}

// whole replaces a Metric the cache holds trimmed with the whole Metric,
// read from the API server: answers and updates need its texts. A Metric
// cached whole costs no read; one read whole is paid for by its namespace's
// read budget, by the size of its texts (tenancy.TextCost).
func (s *Server) whole(ctx context.Context, m *evaluationv1alpha1.Metric) error {
	if !trimcache.Trimmed(m) {
		return nil
	}
	err := trimcache.Whole(ctx, s.opts.Reader, m)
	if apierrors.IsNotFound(err) {
		return metricNotFound()
	}
	if err == nil {
		s.admission.Charge(m.Namespace, false, tenancy.TextCost(m))
	}
	return err
}

// metricKind names Metrics in logs and error details.
const metricKind = "Metric"

// findMetric returns the Metric of namespace whose remote id is id.
// Another namespace's Metric is not found either: a key cannot even learn
// that it exists.
func (s *Server) findMetric(ctx context.Context, namespace, id string) (*evaluationv1alpha1.Metric, error) {
	var m *evaluationv1alpha1.Metric
	err := s.lookUp(ctx, metricKind, namespace, func() (found bool, err error) {
		m, err = s.metricWithID(ctx, namespace, id)
		return m != nil, err
	})
	if err == nil && m == nil {
		err = metricNotFound()
	}
	return m, err
}

// lookUp runs look, which reads the cache, until it finds what it looks
// for, an object of kind in namespace.
//
// A miss waits up to missGrace for the cache to show it: with several
// replicas, the one that answered the create (or the leader that set the
// id) may be a moment ahead of this one's watch, and a client that creates
// and then deletes through a Service must not get a 404 in between.
func (s *Server) lookUp(ctx context.Context, kind, namespace string, look func() (bool, error)) error {
	s.unseen.wait(ctx, namespace)
	if found, err := look(); found || err != nil {
		return err
	}
	key := waitKey{kind: kind, NamespacedName: types.NamespacedName{Namespace: namespace}}
	changed := s.waiters.add(key)
	defer s.waiters.remove(key, changed)
	timer := time.NewTimer(missGrace)
	defer timer.Stop()
	for {
		// Looked up after registering, so no change is missed in between.
		if found, err := look(); found || err != nil {
			return err
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// missGrace bounds how long a lookup by id waits for the cache to show it.
const missGrace = time.Second

// metricWithID is the cache's Metric of namespace whose remote id is id, or
// nil.
func (s *Server) metricWithID(ctx context.Context, namespace, id string) (*evaluationv1alpha1.Metric, error) {
	var list evaluationv1alpha1.MetricList
	err := s.opts.Cache.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{remoteIDIndex: id})
	if err != nil {
		return nil, fmt.Errorf("looking up a Metric in the cache: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	return holder(list.Items), nil
}

func metricNotFound() *apierror.Error {
	return apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No Metric has this id", nil)
}

// position is an object's place in a list: newest first by creation time,
// then by uid (not the name, which a cursor would show to the client). A
// cursor is the position of the last object of a page, so the next page
// starts after it however many objects were added since.
type position struct {
	Created int64  `json:"c"`
	UID     string `json:"u"`
}

func positionOf(o metav1.Object) position {
	return position{Created: o.GetCreationTimestamp().Unix(), UID: string(o.GetUID())}
}

// listPage is the page a list request answers from items: those after the
// position after (nil: from the first), in list order, at most limit; more
// reports whether any follow. items are listed from the cache without a
// deep copy (they share its maps and slices) and stay as they are: only
// pointers to them are sorted, by positions computed once each, so a page
// costs little more in a namespace of thousands than in one of a few.
func listPage[T any, PT interface {
	*T
	metav1.Object
}](items []T, after *position, limit int) (page []PT, more bool) {
	type placed struct {
		at  position
		obj PT
	}
	all := make([]placed, len(items))
	for i := range items {
		all[i] = placed{at: positionOf(PT(&items[i])), obj: &items[i]}
	}
	slices.SortFunc(all, func(a, b placed) int { return a.at.compare(b.at) })
	start := 0
	if after != nil {
		var found bool
		start, found = slices.BinarySearchFunc(all, *after, func(p placed, at position) int { return p.at.compare(at) })
		if found {
			start++
		}
	}
	end := min(start+limit, len(all))
	page = make([]PT, 0, end-start)
	for _, p := range all[start:end] {
		page = append(page, p.obj)
	}
	return page, end < len(all)
}

// projectPage is the page of items (a project's objects, listed from the
// cache) after the position after, at most limit, each answered by answer,
// with the cursor of the next page when there is one.
func projectPage[T any, PT interface {
	*T
	metav1.Object
}, A any](items []T, after *position, limit int, answer func(PT) (A, error)) (evalapi.Page[A], error) {
	objs, more := listPage[T, PT](items, after, limit)
	total := len(items)
	page := evalapi.Page[A]{Data: make([]A, 0, len(objs)), HasMore: more, Total: &total}
	for _, o := range objs {
		a, err := answer(o)
		if err != nil {
			return page, err
		}
		page.Data = append(page.Data, a)
	}
	if more {
		cursor := positionOf(objs[len(objs)-1]).cursor()
		page.NextCursor = &cursor
	}
	return page, nil
}

// compare orders positions as the list does.
func (p position) compare(q position) int {
	return cmp.Or(cmp.Compare(q.Created, p.Created), cmp.Compare(p.UID, q.UID))
}

func (p position) cursor() string {
	b, _ := json.Marshal(p) //nolint:errchkjson // an int and a string always encode
	return base64.RawURLEncoding.EncodeToString(b)
}

// parseListQuery reads limit (1 to 100, default 20) and cursor; after is
// nil for the first page.
func parseListQuery(q url.Values) (limit int, after *position, err error) {
	if limit, err = parseLimit(q); err != nil {
		return 0, nil, err
	}
	if v := q.Get("cursor"); v != "" {
		var p position
		b, decErr := base64.RawURLEncoding.DecodeString(v)
		if decErr != nil || json.Unmarshal(b, &p) != nil || p.UID == "" {
			return 0, nil, apierror.Validation(apierror.Field{Field: "cursor",
				Message: "must be the nextCursor of an earlier page"})
		}
		after = &p
	}
	return limit, after, nil
}

// parseLimit reads a list's limit: 1 to maxPageSize, defaultPageSize unset.
func parseLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return defaultPageSize, nil
	}
	limit, err := strconv.Atoi(v)
	if err != nil || limit < 1 || limit > maxPageSize {
		return 0, apierror.Validation(apierror.Field{Field: "limit",
			Message: fmt.Sprintf("must be a whole number from 1 to %d", maxPageSize)})
	}
	return limit, nil
}

// decodeMetricUpdate decodes the body of PATCH /metrics/{metricId}, which
// must name the variant: evalType and outputType.
func decodeMetricUpdate(data []byte) (evalapi.MetricUpdate, []apierror.Field) {
	var u evalapi.MetricUpdate
	if errs := decodeStrict(data, &u); len(errs) > 0 {
		return u, errs
	}
	var errs []apierror.Field
	if u.EvalType == "" {
		errs = append(errs, apierror.Field{Field: "evalType", Message: "Required value"})
	}
	if u.OutputType == "" {
		errs = append(errs, apierror.Field{Field: "outputType", Message: "Required value"})
	}
	return u, append(errs, updateTextErrors(u)...)
}
