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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// endpoint is one operation of the API (a route and a method), carried out
// by creating a custom resource and answering from it once the reconciler has
// processed it.
type endpoint struct {
	// route is the route pattern; method the one method it answers.
	route, method string
	// kind is the resource kind, for waiters, logs and error details.
	kind string
	// namePrefix starts the names of the resources the endpoint creates.
	namePrefix string
	// hasBody says whether the request carries a JSON body.
	hasBody bool
	// newObject returns an empty resource of the kind.
	newObject func() evaluationv1alpha1.Object
	// build decodes the request into the resource to create, whose
	// apiKeySecretRef is secret, and into its hashInput: the decoded request,
	// whose JSON encoding is the same for requests that mean the same, so an
	// Idempotency-Key replay can be told from a different request. A nil
	// obj without errs means there is nothing to do: noop answers.
	build func(r *http.Request, body []byte, secret types.NamespacedName) (obj client.Object, hashInput any, errs []apierror.Field)
	// noop is the answer to a request with nothing to do.
	noop apierror.Response
	// updates says the resource exists already and the request changed it:
	// a refusal leaves it in place rather than deleting it.
	updates bool
	// fields maps the resource's field paths to the API's names.
	fields apierror.FieldMapper
	// succeed is the answer once the resource is Ready.
	succeed func(client.Object) apierror.Response
	// local, when set, lets the create alone carry out the request where
	// the namespace's service is standalone (the cluster is the system of
	// record). Nil: the request waits for the reconciler.
	local *localCreate
	// calls, when set, is how many service calls carrying out obj over conn
	// sends; nil means one. A tenant's write budget pays for each (see
	// admission.charge).
	calls func(obj client.Object, conn *remote.Connection) int
	// partial, when set, says what a refused resource did before it was
	// refused, or nil when it changed nothing: only then is it discarded.
	partial func(client.Object) map[string]any
}

// localCreate is how a request is carried out by its create alone.
type localCreate struct {
	// answer is the answer once the create is committed.
	answer func(created client.Object) apierror.Response
	// readable says a client reads the resource back (GET, list): the
	// reads in its namespace that follow the answer wait until the cache
	// shows it (see unseen), so they find it.
	readable bool
}

// keyRef points a resource at the apiKey of secret, the caller's key Secret.
func keyRef(secret types.NamespacedName) *evaluationv1alpha1.SecretKeySelector {
	return &evaluationv1alpha1.SecretKeySelector{Name: secret.Name, Key: evaluationv1alpha1.DefaultAPIKeySecretKey}
}

// createMetric is POST /projects/{projectId}/metrics.
func createMetric() *endpoint {
	return &endpoint{
		route:      routeMetrics,
		method:     http.MethodPost,
		kind:       "Metric",
		namePrefix: "metric-",
		hasBody:    true,
		newObject:  func() evaluationv1alpha1.Object { return &evaluationv1alpha1.Metric{} },
		build: func(r *http.Request, body []byte, secret types.NamespacedName) (client.Object, any, []apierror.Field) {
			req, errs := decodeMetricRequest(body)
			if len(errs) > 0 {
				return nil, nil, errs
			}
			projectID := r.PathValue("projectId")
			m := &evaluationv1alpha1.Metric{Spec: convert.SpecFor(projectID, req)}
			m.Spec.APIKeySecretRef = keyRef(secret)
			return m, struct {
				ProjectID string                `json:"projectId"`
				Request   evalapi.MetricRequest `json:"request"`
			}{projectID, req}, nil
		},
		fields:  apierror.SpecFields(nil),
		succeed: createdMetric,
		local:   &localCreate{answer: createdMetric, readable: true},
	}
}

func createdMetric(obj client.Object) apierror.Response {
	return apierror.Response{Status: http.StatusCreated, Body: convert.ResponseOf(obj.(*evaluationv1alpha1.Metric))}
}

// updatedMetric is PATCH /metrics/{metricId} once it has updated the spec:
// it waits like a create, for Ready at the generation the update made.
func updatedMetric() *endpoint {
	return &endpoint{
		kind:      "Metric",
		newObject: func() evaluationv1alpha1.Object { return &evaluationv1alpha1.Metric{} },
		fields:    apierror.SpecFields(nil),
		updates:   true,
		succeed: func(obj client.Object) apierror.Response {
			return apierror.Response{Status: http.StatusOK, Body: convert.ResponseOf(obj.(*evaluationv1alpha1.Metric))}
		},
	}
}

// bulkDeleteTestcases is POST /testcases/bulk-delete.
func bulkDeleteTestcases(ttl *int32) *endpoint {
	return &endpoint{
		route:      routeBulkDelete,
		method:     http.MethodPost,
		kind:       "TestcaseDeletion",
		namePrefix: "testcases-",
		hasBody:    true,
		newObject:  func() evaluationv1alpha1.Object { return &evaluationv1alpha1.TestcaseDeletion{} },
		build: func(_ *http.Request, body []byte, secret types.NamespacedName) (client.Object, any, []apierror.Field) {
			req, errs := decodeBulkDeleteRequest(body)
			if len(errs) > 0 || (req.IDs != nil && len(req.IDs) == 0) {
				return nil, nil, errs // none, or no ids: deleting none succeeds, as the service does
			}
			d := &evaluationv1alpha1.TestcaseDeletion{Spec: evaluationv1alpha1.TestcaseDeletionSpec{
				TestcaseIDs:             convert.ResourceIDs(req.IDs),
				APIKeySecretRef:         keyRef(secret),
				TTLSecondsAfterFinished: ttl,
			}}
			return d, req, nil
		},
		noop:   deleted(nil),
		fields: apierror.SpecFields(map[string]string{"testcaseIds": "ids"}),
		succeed: func(obj client.Object) apierror.Response {
			return deletionSucceeded(obj.(*evaluationv1alpha1.TestcaseDeletion).Status.DeletionStatus)
		},
		local: deletedLocally,
		calls: func(obj client.Object, conn *remote.Connection) int {
			return conn.BulkDeleteCalls(len(obj.(*evaluationv1alpha1.TestcaseDeletion).Spec.TestcaseIDs))
		},
		partial: func(obj client.Object) map[string]any {
			d := obj.(*evaluationv1alpha1.TestcaseDeletion)
			n := int(d.Status.Deleted)
			if n == 0 {
				return nil
			}
			// The service deletes the ids in list order, a batch at a time.
			return map[string]any{"deleted": n, "deletedIds": d.Spec.TestcaseIDs[:min(n, len(d.Spec.TestcaseIDs))]}
		},
	}
}

// deleteTestset is DELETE /testsets/{testsetId}.
func deleteTestset(ttl *int32) *endpoint {
	return &endpoint{
		route:      routeTestset,
		method:     http.MethodDelete,
		kind:       "TestsetDeletion",
		namePrefix: "testset-",
		newObject:  func() evaluationv1alpha1.Object { return &evaluationv1alpha1.TestsetDeletion{} },
		build: func(r *http.Request, _ []byte, secret types.NamespacedName) (client.Object, any, []apierror.Field) {
			testsetID := r.PathValue("testsetId")
			d := &evaluationv1alpha1.TestsetDeletion{Spec: evaluationv1alpha1.TestsetDeletionSpec{
				TestsetID:               evaluationv1alpha1.ResourceID(testsetID),
				APIKeySecretRef:         keyRef(secret),
				TTLSecondsAfterFinished: ttl,
			}}
			return d, testsetID, nil
		},
		fields: apierror.SpecFields(nil),
		succeed: func(obj client.Object) apierror.Response {
			return deletionSucceeded(obj.(*evaluationv1alpha1.TestsetDeletion).Status)
		},
		local: deletedLocally,
	}
}

// deletedLocally answers a deletion on a standalone service as soon as its
// resource is committed: there is no remote copy of anything to delete, so
// the reconciler can only record success, and no request reads the resource
// back. A 10,000-id bulk delete is answered after the one create of its 1.3
// MB resource rather than after that and a rewrite of it for its status.
var deletedLocally = &localCreate{answer: deleted}

// deleted is a successful deletion's answer.
func deleted(client.Object) apierror.Response {
	return apierror.Response{Status: http.StatusOK, Body: evalapi.SuccessResponse{Success: true}}
}

func deletionSucceeded(st evaluationv1alpha1.DeletionStatus) apierror.Response {
	return apierror.Response{Status: http.StatusOK, Body: evalapi.SuccessResponse{Success: st.Success != nil && *st.Success}}
}

// ttlSeconds converts a TTL to the resources' ttlSecondsAfterFinished.
func ttlSeconds(d time.Duration) *int32 {
	s := int32(d / time.Second) //nolint:gosec // New bounds d to 365 days
	return &s
}
