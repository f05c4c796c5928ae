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
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/quote"
)

// Error codes this server adds to those of the Evaluation Service API.
const (
	// CodeIdempotencyKeyReused: the Idempotency-Key was used before with a different request.
	CodeIdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED"
	// CodeRejected: the upstream service refused the request (reason Rejected).
	CodeRejected = "REJECTED"
	// CodeUpstreamTimeout: the resource exists but the reconciler had not
	// finished with it within the sync timeout.
	CodeUpstreamTimeout = "UPSTREAM_TIMEOUT"
	// CodeUpstreamError: the reconciler stalled and needs a person, e.g. reason CreateOutcomeUnknown.
	CodeUpstreamError = "UPSTREAM_ERROR"
	// CodeResourceDeleted: the resource carrying the request was deleted
	// before the reconciler finished with it.
	CodeResourceDeleted = "RESOURCE_DELETED"
	// CodeServiceUnavailable: the Kubernetes API server is overloaded or unreachable.
	CodeServiceUnavailable = "SERVICE_UNAVAILABLE"
)

// Error codes of the answers net/http gives before any handler runs (see
// protocol.go): the request is not one HTTP/1.1 can carry.
const (
	// CodeBadRequest: a malformed request line or header, a missing or
	// malformed Host header, or a plain HTTP request to the TLS port.
	CodeBadRequest = "BAD_REQUEST"
	// CodeExpectationFailed: an Expect header other than 100-continue.
	CodeExpectationFailed = "EXPECTATION_FAILED"
	// CodeHeadersTooLarge: the request's headers are over the server's limit.
	CodeHeadersTooLarge = "HEADERS_TOO_LARGE"
	// CodeNotImplemented: a Transfer-Encoding other than chunked.
	CodeNotImplemented = "NOT_IMPLEMENTED"
	// CodeHTTPVersionNotSupported: an HTTP version other than 1.0 and 1.1.
	CodeHTTPVersionNotSupported = "HTTP_VERSION_NOT_SUPPORTED"
)

// StatusClientClosedRequest is the status of a request whose client hung up
// before its answer (nginx's 499): no one reads the answer, but the request
// metrics count it apart from the server's own failures.
const StatusClientClosedRequest = 499

// CodeClientClosedRequest: the client hung up before its answer.
const CodeClientClosedRequest = "CLIENT_CLOSED_REQUEST"

// response is an answer to a request: a status code and a JSON body.
type response struct {
	status int
	body   any
	header http.Header
}

// apiError is a request's failure as the API reports it: an ApiError body
// under status, and the headers that go with it (Allow, Retry-After). It is
// an error so that the steps of a request can return it like any other; its
// message and details never hold an API key.
type apiError struct {
	status        int
	code, message string
	details       map[string]any
	header        http.Header
	// note, when set, is the refusal behind the answer that is worth a
	// V(1) log line: the tenant's situation, not the server's fault.
	note error
}

func newAPIError(status int, code, message string, details map[string]any) *apiError {
	return &apiError{status: status, code: code, message: message, details: details}
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message)
}

// response is the answer that reports e; details is {} rather than null when
// there are none, as the API's schema requires an object.
func (e *apiError) response() response {
	details := e.details
	if details == nil {
		details = map[string]any{}
	}
	return response{status: e.status, header: e.header,
		body: evalapi.APIError{Code: e.code, Message: e.message, Details: details}}
}

// fieldError is one entry of details.errors of a VALIDATION_ERROR.
type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// bodyField names the whole request body in details.errors, for errors no
// single field caused (syntax errors, an empty body).
const bodyField = "body"

// validationError is a VALIDATION_ERROR listing errs; its message names the
// first, for clients that show only the message.
func validationError(errs ...fieldError) *apiError {
	msg := fmt.Sprintf("The request is invalid: %s: %s", errs[0].Field, errs[0].Message)
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return newAPIError(http.StatusBadRequest, evalapi.CodeValidation, msg, map[string]any{"errors": errs})
}

func unauthorized() *apiError {
	return newAPIError(http.StatusUnauthorized, evalapi.CodeUnauthorized, evalapi.MessageUnauthorized, nil)
}

func internalError() *apiError {
	return newAPIError(http.StatusInternalServerError, evalapi.CodeInternal, "An internal error occurred", nil)
}

func notFound() *apiError {
	return newAPIError(http.StatusNotFound, evalapi.CodeNotFound, "No such route", nil)
}

// write sends res as the answer to r.
func write(w http.ResponseWriter, r *http.Request, res response) {
	for k, v := range res.header {
		w.Header()[k] = v
	}
	adviseRetry(w.Header(), res.status, r)
	if res.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", bearerChallenge(r))
	}
	setAnswerHeaders(w.Header())
	w.WriteHeader(res.status)
	// The client may be gone; there is no one left to tell about a failed write.
	_ = json.NewEncoder(w).Encode(res.body)
}

// bearerChallenge is the WWW-Authenticate of a 401 (RFC 6750): a request
// that sent a token learns that it is invalid.
func bearerChallenge(r *http.Request) string {
	if r.Header.Get("Authorization") == "" {
		return `Bearer realm="eval-operator"`
	}
	return `Bearer realm="eval-operator", error="invalid_token"`
}

func setJSONHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
}

// setAnswerHeaders sets the headers of an answer to one request.
func setAnswerHeaders(h http.Header) {
	setJSONHeaders(h)
	// Answers describe one request's outcome; no cache may reuse them.
	h.Set("Cache-Control", "no-store")
}

// fieldMapper turns a field path of the custom resource ("spec.testcaseIds[3]")
// into the name the API uses for it ("ids[3]").
type fieldMapper func(string) string

// invalidResource maps the API server's refusal of a resource (the CRD's
// OpenAPI and CEL rules) to a VALIDATION_ERROR naming the API's fields; it
// is nil when err is no such refusal.
func invalidResource(err error, mapField fieldMapper) *apiError {
	if !apierrors.IsInvalid(err) {
		return nil
	}
	var errs []fieldError
	if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			// The API server quotes a bad value whole: a 1 MB evalType would come back twice.
			errs = append(errs, fieldError{Field: quote.Bounded(causeField(c.Field, mapField)),
				Message: quote.Bounded(causeMessage(c.Message, mapField))})
		}
	}
	if len(errs) == 0 {
		errs = []fieldError{{Field: bodyField, Message: "the request was refused by the Kubernetes API server"}}
	}
	return validationError(errs...)
}

// causeField maps the field of a cause; a cause about no field in particular
// (the API server writes "<nil>") is about the body.
func causeField(field string, mapField fieldMapper) string {
	if field == "" || field == "<nil>" {
		return bodyField
	}
	return mapField(field)
}

// specPathInBody is how the OpenAPI validation names a field in a message.
var specPathInBody = regexp.MustCompile(`spec\.[A-Za-z0-9_.\[\]]+ in body`)

// causeMessage renames the resource's fields the message mentions ("spec.name
// in body should be...") to the API's ("name should be...").
func causeMessage(msg string, mapField fieldMapper) string {
	return specPathInBody.ReplaceAllStringFunc(msg, func(m string) string {
		return mapField(strings.TrimSuffix(m, " in body"))
	})
}

// specFields maps a resource field path to an API field name: the prefix
// "spec." is dropped and the first path element renamed through rename.
func specFields(rename map[string]string) fieldMapper {
	return func(path string) string {
		path = strings.TrimPrefix(path, "spec.")
		end := strings.IndexAny(path, ".[")
		if end < 0 {
			end = len(path)
		}
		if to, ok := rename[path[:end]]; ok {
			return to + path[end:]
		}
		return path
	}
}
