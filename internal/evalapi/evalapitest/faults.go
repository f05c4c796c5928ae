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

package evalapitest

import (
	"math/rand/v2"
	"net/http"
	"time"
)

// Fault is a failure the Server plays instead of, or around, its normal
// answer to one request. Use the values and constructors below.
type Fault struct {
	kind       faultKind
	status     int
	retryAfter string
	delay      time.Duration
	// then runs after the request is handled, before it is answered.
	then func()
}

type faultKind int

const (
	noFault faultKind = iota
	faultStatus
	faultSlow
	faultReset
	faultCommitThenReset
	faultSuccessFalse
	faultGateway
)

// The faults. None of them commits anything, except Slow (which answers
// normally, late) and CommitThenReset.
var (
	// Status500 answers 500 INTERNAL_ERROR.
	Status500 = Fault{kind: faultStatus, status: http.StatusInternalServerError}
	// Status401 answers 401 UNAUTHORIZED, whatever the key.
	Status401 = Fault{kind: faultStatus, status: http.StatusUnauthorized}
	// Reset reads the whole request, then closes the connection without an
	// answer: the client sent the request, the service did nothing.
	Reset = Fault{kind: faultReset}
	// CommitThenReset handles the request normally (a valid create or
	// deletion is committed), then closes the connection without an answer.
	CommitThenReset = Fault{kind: faultCommitThenReset}
	// SuccessFalse makes a valid deletion answer {"success":false} without
	// deleting anything. Other operations are answered normally.
	SuccessFalse = Fault{kind: faultSuccessFalse}
	// Status502Gateway answers 502 with a proxy's HTML page.
	Status502Gateway = GatewayStatus(http.StatusBadGateway)
	// Status504Gateway answers 504 with a proxy's HTML page.
	Status504Gateway = GatewayStatus(http.StatusGatewayTimeout)
)

// Status429 answers 429 RATE_LIMITED with the Retry-After header set to
// retryAfter verbatim (delay-seconds such as "3", or an HTTP-date); "" sends none.
func Status429(retryAfter string) Fault {
	return Fault{kind: faultStatus, status: http.StatusTooManyRequests, retryAfter: retryAfter}
}

// Status answers code with an ApiError, committing nothing: 400
// VALIDATION_ERROR for a rejection the CRD cannot foresee, 404 NOT_FOUND for
// a thing already gone, 500 INTERNAL_ERROR; a status without a code of the
// API carries the code of its name (403 FORBIDDEN, 409 CONFLICT, 503
// SERVICE_UNAVAILABLE for an outage).
func Status(code int) Fault {
	return Fault{kind: faultStatus, status: code}
}

// GatewayStatus answers code with an HTML page instead of an ApiError, as a
// proxy in front of the service does, committing nothing.
func GatewayStatus(code int) Fault {
	return Fault{kind: faultGateway, status: code}
}

// Then handles the request normally, then runs fn before answering: the
// service changes between this request and the client's next one, as when
// a person edits it in the service's web UI meanwhile. fn may call the
// Server's test methods (EditSystem, EditMetric, ...).
func Then(fn func()) Fault {
	return Fault{then: fn}
}

// Slow waits d, then answers normally. The wait ends early when the client
// goes away (the request is then still handled, as a real service would) or
// the Server closes.
func Slow(d time.Duration) Fault {
	return Fault{kind: faultSlow, delay: d}
}

// faults hands out the faults of the requests: the queued ones of the
// operation first, then random ones. Callers hold the Server's lock.
type faults struct {
	queued   map[string][]Fault
	fraction float64
	kinds    []Fault
	random   *rand.Rand
}

func (f *faults) inject(op string, fs []Fault) {
	if f.queued == nil {
		f.queued = map[string][]Fault{}
	}
	f.queued[op] = append(f.queued[op], fs...)
}

func (f *faults) failRandomly(fraction float64, seed int64, kinds []Fault) {
	f.fraction, f.kinds, f.random = fraction, kinds, nil
	if fraction > 0 && len(kinds) > 0 {
		// Reproducible faults need a seeded generator, not a secure one.
		f.random = rand.New(rand.NewPCG(uint64(seed), 0)) //nolint:gosec
	}
}

func (f *faults) next(op string) Fault {
	if q := f.queued[op]; len(q) > 0 {
		f.queued[op] = q[1:]
		return q[0]
	}
	if f.random != nil && f.random.Float64() < f.fraction {
		return f.kinds[f.random.IntN(len(f.kinds))]
	}
	return Fault{}
}
