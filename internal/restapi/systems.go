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
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=systemversions,verbs=get;list;watch

// routeSystemVersion is where the SDKs read a version by id.
const routeSystemVersion = BasePath + "/systems/versions/{systemVersionId}"

// systemVersionKind names the kind in errors.
const systemVersionKind = "SystemVersion"

// getSystemVersion answers the SystemVersion of the key's namespace with
// the id: the SDKs' run-and-evaluate helpers read it after creating a run
// that names it. Kept in the cluster, it is Ready before a run names it, so
// the cache is read without waiting.
func (s *Server) getSystemVersion(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(systemVersionKind, err)
	}
	var list evaluationv1alpha1.SystemVersionList
	err = s.opts.Cache.List(r.Context(), &list, client.InNamespace(secret.Namespace),
		client.MatchingFields{remoteIDIndex: r.PathValue("systemVersionId")})
	if err != nil {
		return s.failure(systemVersionKind, err)
	}
	if len(list.Items) == 0 {
		return s.failure(systemVersionKind, apierror.New(http.StatusNotFound, evalapi.CodeNotFound,
			"No SystemVersion has this id", nil))
	}
	return apierror.Response{Status: http.StatusOK, Body: convert.SystemVersionResponseOf(&list.Items[0])}
}
