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
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestAdviseRetry(t *testing.T) {
	gr := schema.GroupResource{Group: "evaluation.eval-operator.dev", Resource: "metrics"}
	cases := []struct {
		name       string
		status     int
		writeErr   error // set: the request wrote, with this outcome
		wrote      bool
		idemKey    string
		retry      string // want x-should-retry; "" for none
		retryAfter string
	}{
		{name: "success", status: http.StatusCreated, wrote: true},
		{name: "a validation error", status: http.StatusBadRequest},
		{name: "503 before any write", status: http.StatusServiceUnavailable, retry: "true", retryAfter: "1"},
		{name: "500 before any write", status: http.StatusInternalServerError, retry: "true", retryAfter: "1"},
		{name: "429 before any write", status: http.StatusTooManyRequests, retry: "true", retryAfter: "1"},
		{name: "a write the API server refused", status: http.StatusServiceUnavailable, wrote: true,
			writeErr: apierrors.NewTooManyRequests("busy", 1), retry: "true", retryAfter: "1"},
		{name: "504 after a write", status: http.StatusGatewayTimeout, wrote: true, retry: "false"},
		{name: "502 after a write", status: http.StatusBadGateway, wrote: true, retry: "false"},
		{name: "a write that timed out", status: http.StatusServiceUnavailable, wrote: true,
			writeErr: apierrors.NewTimeoutError("slow", 1), retry: "false"},
		{name: "a write that failed in transit", status: http.StatusInternalServerError, wrote: true,
			writeErr: errors.New("connection reset"), retry: "false"},
		{name: "504 after a write, with an Idempotency-Key", status: http.StatusGatewayTimeout, wrote: true,
			idemKey: "k", retry: "true"},
		{name: "a conflict before a write", status: http.StatusConflict, writeErr: apierrors.NewConflict(gr, "m", nil),
			wrote: true, retry: "true", retryAfter: "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := WithAttempt(httptest.NewRequest(http.MethodPost, "/", nil))
			if tc.idemKey != "" {
				r.Header.Set(IdempotencyKeyHeader, tc.idemKey)
			}
			if tc.wrote {
				NoteWrite(r.Context(), tc.writeErr)
			}
			h := http.Header{}
			adviseRetry(h, tc.status, r)
			if got := h.Get(ShouldRetryHeader); got != tc.retry {
				t.Errorf("%s = %q, want %q", ShouldRetryHeader, got, tc.retry)
			}
			if got := h.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tc.retryAfter)
			}
		})
	}
}

func TestAdviseRetryKeepsTheAPIServersDelay(t *testing.T) {
	r := WithAttempt(httptest.NewRequest(http.MethodPost, "/", nil))
	h := http.Header{"Retry-After": {"7"}}
	adviseRetry(h, http.StatusServiceUnavailable, r)
	if h.Get("Retry-After") != "7" || h.Get(ShouldRetryHeader) != "true" {
		t.Fatalf("headers = %v", h)
	}
}
