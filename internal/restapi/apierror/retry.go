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

package apierror

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ShouldRetryHeader tells the service's SDKs whether to retry an answer. They
// follow it before their own rules, which retry 408, 409, 429 and every 5xx
// twice without an Idempotency-Key: a blind retry of a request that already
// wrote a resource would create a second one.
const ShouldRetryHeader = "X-Should-Retry"

// IdempotencyKeyHeader is the request header that makes a POST safe to retry.
const IdempotencyKeyHeader = "Idempotency-Key"

// attempt is what one request has done so far, as far as retrying it goes.
type attempt struct {
	// wrote is set before the request's first write to the API server: from
	// then on the write may have happened, whatever its answer said.
	wrote atomic.Bool
}

type attemptKey struct{}

// WithAttempt starts tracking the writes of the request r.
func WithAttempt(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), attemptKey{}, &attempt{}))
}

// markWrite records that the request of ctx is about to write.
func markWrite(ctx context.Context) {
	if a, ok := ctx.Value(attemptKey{}).(*attempt); ok {
		a.wrote.Store(true)
	}
}

// retryable reports whether the SDKs retry status by their own rules.
func retryable(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	return status >= http.StatusInternalServerError
}

// adviseRetry sets ShouldRetryHeader on an answer the SDKs would retry.
// Before any write a retry is harmless: true, with a Retry-After. After one
// it is safe only as an Idempotency-Key replay; without a key it is false, so
// a request that timed out after creating its resource is not made twice.
func adviseRetry(h http.Header, status int, r *http.Request) {
	if !retryable(status) {
		return
	}
	if a, ok := r.Context().Value(attemptKey{}).(*attempt); ok && a.wrote.Load() {
		h.Set(ShouldRetryHeader, strconv.FormatBool(r.Header.Get(IdempotencyKeyHeader) != ""))
		return
	}
	h.Set(ShouldRetryHeader, "true")
	if h.Get("Retry-After") == "" {
		h.Set("Retry-After", "1")
	}
}

// NoteWrite records that the request of ctx may have written through the
// API server: unless err is the API server's refusal, which writes nothing.
// A timeout is no refusal; the write may have happened.
func NoteWrite(ctx context.Context, err error) {
	var status apierrors.APIStatus
	if errors.As(err, &status) && !apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) {
		return
	}
	markWrite(ctx)
}
