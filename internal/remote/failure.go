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

package remote

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Failure is what a failed call to a service means for the object that
// made it. The reconcilers decide on it, never on the service's wire.
type Failure int

const (
	// NotSent: the request certainly never reached the service (connection
	// refused, a cancelled wait). A retry is safe, even of a create.
	NotSent Failure = iota + 1
	// Unauthorized: the service refused the key (401).
	Unauthorized
	// Rejected: the service refused the request and acted on nothing; the
	// request, or the service's URL, must change.
	Rejected
	// RateLimited: the service is rate limiting and acted on nothing;
	// RetryAfter says when to try again.
	RateLimited
	// Unavailable: the service answered that it failed. A retry is safe,
	// even of a create.
	Unavailable
	// OutcomeUnknown: the request was sent, but whether the service acted on
	// it is unknown (no answer, or a gateway's).
	OutcomeUnknown
	// NotFound: nothing is at the request's address, or the service does not
	// serve the operation (404, 405). Gone says whether the service itself
	// answered that the thing does not exist.
	NotFound
	// AddressNotAllowed: nothing was sent because the service's address is
	// one a namespaced EvaluationService may not reach (loopback, link-local,
	// private); its URL, or the manager's flags, must change.
	AddressNotAllowed
)

// FailureOf is what err, returned by a Client or a probe, means; 0 when
// it is not a failure of the service's (a key, a turn at the limits).
func FailureOf(err error) Failure {
	if errors.Is(err, ErrPrivateAddress) {
		return AddressNotAllowed
	}
	switch evalapi.KindOf(err) {
	case evalapi.KindNotSent:
		return NotSent
	case evalapi.KindUnauthorized:
		return Unauthorized
	case evalapi.KindRejected:
		return Rejected
	case evalapi.KindRateLimited:
		return RateLimited
	case evalapi.KindUnavailable:
		return Unavailable
	case evalapi.KindOutcomeUnknown:
		return OutcomeUnknown
	case evalapi.KindNotFound:
		return NotFound
	}
	return 0
}

// Gone reports whether err is the service's own answer that what a call
// names does not exist: a 404 with its NOT_FOUND ApiError. A bare 404 or a
// 405 (a wrong URL, a proxy, an older service) proves nothing.
func Gone(err error) bool {
	var e *evalapi.Error
	return errors.As(err, &e) && e.Kind == evalapi.KindNotFound && e.API != nil && e.API.Code == evalapi.CodeNotFound
}

// RetryAfter is when the service asked to be called again, or 0.
func RetryAfter(err error) time.Duration { return evalapi.RetryAfterOf(err) }

// maxServiceMessage bounds what of a service's error message Summary keeps.
const maxServiceMessage = 200

// Summary says what went wrong with a call without repeating what the
// service sent beyond its ApiError code and a bounded, printable message:
// what a service's condition may show.
func Summary(err error) string {
	var e *evalapi.Error
	if !errors.As(err, &e) {
		return "failed"
	}
	switch {
	case errors.Is(err, ErrPrivateAddress):
		return ErrPrivateAddress.Error() + " (a namespaced EvaluationService may not reach the cluster's network)"
	case e.API != nil:
		return fmt.Sprintf("HTTP %d %s: %s", e.StatusCode, sanitize(e.API.Code, 64), sanitize(e.API.Message, maxServiceMessage))
	case e.StatusCode != 0:
		return fmt.Sprintf("HTTP %d", e.StatusCode)
	case e.Err != nil:
		// The cause, as a Metric's condition says it (connection refused, a
		// timeout, a certificate), without the URL the status shows already.
		cause := e.Err
		if u, ok := errors.AsType[*url.Error](cause); ok {
			cause = u.Err
		}
		return sanitize(cause.Error(), maxServiceMessage)
	}
	return "no answer"
}

// sanitize keeps at most n printable runes of s.
func sanitize(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if n == 0 {
			b.WriteString("…")
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			n--
		}
	}
	return b.String()
}
