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

package evalapi

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidKey is the Err of a KindNotSent error whose key is not Valid:
// such a key is never sent, so callers can report invalid credentials rather
// than a network problem.
var ErrInvalidKey = fmt.Errorf("the API key is not %s followed by at least %d visible ASCII characters, so it was not sent",
	KeyPrefix, MinKeySecretLen)

// ErrorKind classifies a failed call by what the caller should do about it.
type ErrorKind int

const (
	// KindNotSent: the request certainly never reached the service (invalid
	// key, connection refused, client-side rate limit wait cancelled). Safe to
	// retry, even a create.
	KindNotSent ErrorKind = iota + 1
	// KindUnauthorized: the service answered 401. Retrying with the same key is pointless.
	KindUnauthorized
	// KindRejected: the service answered a 4xx other than 401, 404, 405, 408
	// and 429, or a 3xx. It acted on nothing; the request, or the base URL, must change.
	KindRejected
	// KindRateLimited: the service answered 429 and acted on nothing;
	// RetryAfter says when to try again.
	KindRateLimited
	// KindUnavailable: the service itself answered that the request failed:
	// a 500 (or another 5xx but 502 and 504) carrying its own ApiError (code,
	// message and details all present), any 503, or a 408 (the request timed
	// out before the service read it whole). A retry is safe, even of a create.
	KindUnavailable
	// KindOutcomeUnknown: the request was sent, but whether the service acted
	// on it is unknown: no answer arrived (timeout, connection reset), a 2xx
	// answer could not be read, or a gateway answered in the service's place
	// (every 502 and 504, and any other 5xx without the service's ApiError)
	// after it may have forwarded the request.
	KindOutcomeUnknown
	// KindNotFound: the service answered 404 or 405. Either the addressed
	// thing does not exist, or the service does not serve the operation (an
	// older service); API holds the ApiError (NOT_FOUND) when the service sent
	// one. Callers decide what it means (a deletion finds the thing already
	// gone, a read finds nothing); it never means a create is due.
	KindNotFound
)

func (k ErrorKind) String() string {
	switch k {
	case KindNotSent:
		return "NotSent"
	case KindUnauthorized:
		return "Unauthorized"
	case KindRejected:
		return "Rejected"
	case KindRateLimited:
		return "RateLimited"
	case KindUnavailable:
		return "Unavailable"
	case KindOutcomeUnknown:
		return "OutcomeUnknown"
	case KindNotFound:
		return "NotFound"
	default:
		return fmt.Sprintf("ErrorKind(%d)", int(k))
	}
}

// Error is the error every Service method returns. Its text never holds the API key.
type Error struct {
	Kind ErrorKind
	// Op is the operation, e.g. "CreateMetric".
	Op string
	// StatusCode is the HTTP status, 0 when no answer arrived.
	StatusCode int
	// API is the decoded error body, when the service sent one.
	API *APIError
	// RetryAfter is the service's Retry-After, when it sent one.
	RetryAfter time.Duration
	// Err is the underlying transport error, if any.
	Err error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s", e.Op, e.Kind)
	if e.StatusCode != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.StatusCode)
	}
	if e.API != nil {
		msg += ": " + e.API.Error()
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// invalidKey is the error for a key that must not be sent.
func invalidKey(op serviceOp) *Error {
	return &Error{Kind: KindNotSent, Op: op.name, Err: ErrInvalidKey}
}

// KindOf returns the kind of a Service error, or 0 when err is not one.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// RetryAfterOf returns the Retry-After the service asked for, or 0.
func RetryAfterOf(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}
