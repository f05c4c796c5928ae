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
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// listProjects is GET /projects: the projects of the key's namespace. The
// cluster knows a project only as the projectId its Metrics name, so each
// has a null name and description, and they come in the order of their
// ids. It is the API's cheap authenticated call, which another cluster's
// operator uses to probe a service it points at this server.
func (s *Server) listProjects(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(metricKind, err)
	}
	limit, after, err := parseProjectQuery(r.URL.Query())
	if err != nil {
		return s.failure(metricKind, err)
	}
	s.unseen.wait(r.Context(), secret.Namespace)
	var list evaluationv1alpha1.MetricList
	err = s.opts.Cache.List(r.Context(), &list, client.InNamespace(secret.Namespace), client.UnsafeDisableDeepCopy)
	if err != nil {
		return s.failure(metricKind, fmt.Errorf("listing Metrics from the cache: %w", err))
	}
	var ids []string
	for i := range list.Items {
		if m := &list.Items[i]; inAPI(m) {
			ids = append(ids, string(m.Spec.ProjectID))
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	start, _ := slices.BinarySearch(ids, after)
	if after != "" && start < len(ids) && ids[start] == after {
		start++
	}
	end := min(start+limit, len(ids))
	total := len(ids)
	page := evalapi.ProjectPage{Data: make([]evalapi.Project, 0, end-start), HasMore: end < len(ids), Total: &total}
	for _, id := range ids[start:end] {
		page.Data = append(page.Data, evalapi.Project{ID: id})
	}
	if page.HasMore {
		cursor := base64.RawURLEncoding.EncodeToString([]byte(ids[end-1]))
		page.NextCursor = &cursor
	}
	return apierror.Response{Status: http.StatusOK, Body: page}
}

// parseProjectQuery reads GET /projects' limit and cursor: the project id
// the previous page ended with, encoded.
func parseProjectQuery(q url.Values) (limit int, after string, err error) {
	if limit, err = parseLimit(q); err != nil {
		return 0, "", err
	}
	if v := q.Get("cursor"); v != "" {
		b, decErr := base64.RawURLEncoding.DecodeString(v)
		if decErr != nil || !evaluationv1alpha1.ValidResourceID(string(b)) {
			return 0, "", apierror.Validation(apierror.Field{Field: "cursor", Message: "must be the nextCursor of an earlier page"})
		}
		after = string(b)
	}
	return limit, after, nil
}
