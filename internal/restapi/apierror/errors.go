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

// Package apierror is how the REST server answers: an ApiError body with
// its status and headers, the validation errors that name the API's fields,
// and whether the service's SDKs may retry the answer.
package apierror

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
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
// internal/restapi/protocol.go): the request is not one HTTP/1.1 can carry.
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

// CodeForbidden: the Kubernetes API server refused the write because the
// namespace is being deleted, or the object's managementPolicies forbid it.
const CodeForbidden = "FORBIDDEN"

// CodeConflict: the request cannot be carried out on the resource as it
// is, e.g. a testcase write to a Testset whose testcases come from Git.
const CodeConflict = "CONFLICT"

// CodeQuotaExceeded: the namespace holds as many objects of the kind as its
// budget or ResourceQuota allows; retrying does not help until some are deleted.
const CodeQuotaExceeded = "QUOTA_EXCEEDED"

// StatusClientClosedRequest is the status of a request whose client hung up
// before its answer (nginx's 499): no one reads the answer, but the request
// metrics count it apart from the server's own failures.
const StatusClientClosedRequest = 499

// CodeClientClosedRequest: the client hung up before its answer.
const CodeClientClosedRequest = "CLIENT_CLOSED_REQUEST"

// Response is an answer to a request: a status code and a JSON body.
type Response struct {
	Status int
	Body   any
	Header http.Header
}

// Error is a request's failure as the API reports it: an ApiError body
// under status, and the headers that go with it (Allow, Retry-After). It is
// an error so that the steps of a request can return it like any other; its
// message and details never hold an API key.
type Error struct {
	Status        int
	Code, Message string
	Details       map[string]any
	Header        http.Header
	// Note, when set, is the refusal behind the answer that is worth a
	// V(1) log line: the tenant's situation, not the server's fault.
	Note error
}

// New is the error answered with status, code, message and details.
func New(status int, code, message string, details map[string]any) *Error {
	return &Error{Status: status, Code: code, Message: message, Details: details}
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// Response is the answer that reports e; details is {} rather than null when
// there are none, as the API's schema requires an object.
func (e *Error) Response() Response {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return Response{Status: e.Status, Header: e.Header,
		Body: evalapi.APIError{Code: e.Code, Message: e.Message, Details: details}}
}

// Field is one entry of details.errors of a VALIDATION_ERROR.
type Field struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// BodyField names the whole request body in details.errors, for errors no
// single field caused (syntax errors, an empty body).
const BodyField = "body"

// Validation is a VALIDATION_ERROR listing errs; its message names the
// first, for clients that show only the message.
func Validation(errs ...Field) *Error {
	msg := fmt.Sprintf("The request is invalid: %s: %s", errs[0].Field, errs[0].Message)
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return New(http.StatusBadRequest, evalapi.CodeValidation, msg, map[string]any{"errors": errs})
}

// Unauthorized is the answer to a request without a valid key.
func Unauthorized() *Error {
	return New(http.StatusUnauthorized, evalapi.CodeUnauthorized, evalapi.MessageUnauthorized, nil)
}

// Internal is the answer to a request the server failed, saying no more.
func Internal() *Error {
	return New(http.StatusInternalServerError, evalapi.CodeInternal, "An internal error occurred", nil)
}

// NotFound is the answer to a request no route serves.
func NotFound() *Error {
	return New(http.StatusNotFound, evalapi.CodeNotFound, "No such route", nil)
}

// Write sends res as the answer to r.
func Write(w http.ResponseWriter, r *http.Request, res Response) {
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	adviseRetry(w.Header(), res.Status, r)
	if res.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", bearerChallenge(r))
	}
	SetAnswerHeaders(w.Header())
	w.WriteHeader(res.Status)
	// The client may be gone; there is no one left to tell about a failed write.
	_ = json.NewEncoder(w).Encode(res.Body)
}

// bearerChallenge is the WWW-Authenticate of a 401 (RFC 6750): a request
// that sent a token learns that it is invalid.
func bearerChallenge(r *http.Request) string {
	if r.Header.Get("Authorization") == "" {
		return `Bearer realm="eval-operator"`
	}
	return `Bearer realm="eval-operator", error="invalid_token"`
}

// SetJSONHeaders sets the headers of a JSON answer.
func SetJSONHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
}

// SetAnswerHeaders sets the headers of an answer to one request.
func SetAnswerHeaders(h http.Header) {
	SetJSONHeaders(h)
	// Answers describe one request's outcome; no cache may reuse them.
	h.Set("Cache-Control", "no-store")
}

// FieldMapper turns a field path of the custom resource ("spec.testcaseIds[3]")
// into the name the API uses for it ("ids[3]").
type FieldMapper func(string) string

// Invalid maps the API server's refusal of a resource (the CRD's
// OpenAPI and CEL rules) to a VALIDATION_ERROR naming the API's fields; it
// is nil when err is no such refusal.
func Invalid(err error, mapField FieldMapper) *Error {
	if !apierrors.IsInvalid(err) {
		return nil
	}
	var errs []Field
	if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			// The API server quotes a bad value whole: a 1 MB evalType would come back twice.
			errs = append(errs, Field{Field: quote.Bounded(causeField(c.Field, mapField)),
				Message: quote.Bounded(causeMessage(c.Message, mapField))})
		}
	}
	if len(errs) == 0 {
		errs = []Field{{Field: BodyField, Message: "the request was refused by the Kubernetes API server"}}
	}
	return Validation(errs...)
}

// causeField maps the field of a cause; a cause about no field in particular
// (the API server writes "<nil>") is about the body.
func causeField(field string, mapField FieldMapper) string {
	if field == "" || field == "<nil>" {
		return BodyField
	}
	return mapField(field)
}

// specPathInBody is how the OpenAPI validation names a field in a message.
var specPathInBody = regexp.MustCompile(`spec\.[A-Za-z0-9_.\[\]]+ in body`)

// causeMessage renames the resource's fields the message mentions ("spec.name
// in body should be...") to the API's ("name should be...").
func causeMessage(msg string, mapField FieldMapper) string {
	return specPathInBody.ReplaceAllStringFunc(msg, func(m string) string {
		return mapField(strings.TrimSuffix(m, " in body"))
	})
}

// SpecFields maps a resource field path to an API field name: the prefix
// "spec." is dropped and the first path element renamed through rename.
func SpecFields(rename map[string]string) FieldMapper {
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

// Conflict is a CONFLICT that retrying does not resolve.
func Conflict(format string, args ...any) *Error {
	e := New(http.StatusConflict, CodeConflict, fmt.Sprintf(format, args...), nil)
	e.Header = http.Header{ShouldRetryHeader: {"false"}}
	return e
}

// QuotaExceeded is the answer to a create over a namespace's budget or
// ResourceQuota.
func QuotaExceeded(message string, details map[string]any) *Error {
	e := New(http.StatusForbidden, CodeQuotaExceeded, message, details)
	e.Header = http.Header{ShouldRetryHeader: {"false"}}
	return e
}

// ForbiddenWrite maps the API server's Forbidden answer to a create that
// is the tenant's situation, a full ResourceQuota or a namespace being
// deleted, to a 403 that says why, and is nil for any other error: another
// Forbidden (RBAC) is the server's own fault, a 500. The server logs the
// refusal (Note) once, at V(1), without a stack trace.
func ForbiddenWrite(err error) *Error {
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) {
		return nil
	}
	st := status.Status()
	message := "The Kubernetes API server refused the write: " + quote.Bounded(st.Message)
	var e *Error
	switch {
	case strings.Contains(st.Message, "exceeded quota"): // the quota admission plugin's wording
		e = QuotaExceeded(message, nil)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		e = New(http.StatusForbidden, CodeForbidden, message, nil)
		e.Header = http.Header{ShouldRetryHeader: {"false"}}
	default:
		return nil
	}
	e.Note = err
	return e
}

// WriteFailed is the failure of a refused write: a VALIDATION_ERROR for an
// invalid resource, a 503 with Retry-After when the API server is busy, and
// the server's own fault (doing what) otherwise.
func WriteFailed(fields FieldMapper, err error, doing string) error {
	if e := Invalid(err, fields); e != nil {
		return e
	}
	if e := ForbiddenWrite(err); e != nil {
		return e
	}
	if apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsServiceUnavailable(err) {
		e := New(http.StatusServiceUnavailable, CodeServiceUnavailable,
			"The Kubernetes API server is busy; retry later", nil)
		delay, ok := apierrors.SuggestsClientDelay(err)
		if !ok || delay < 1 {
			delay = 1
		}
		e.Header = http.Header{"Retry-After": {strconv.Itoa(delay)}}
		return e
	}
	return fmt.Errorf("%s: %w", doing, err)
}
