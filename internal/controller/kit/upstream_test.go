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

package kit

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
)

func TestUpstreamFailure(t *testing.T) {
	cases := []struct {
		err     *evalapi.Error
		phase   Phase
		reason  string
		requeue time.Duration
		backoff bool // returned as an error, so the work queue backs off
	}{
		{&evalapi.Error{Kind: evalapi.KindUnauthorized, StatusCode: 401}, PhaseStalled, v1alpha1.ReasonUnauthorized, unauthorizedRetry, false},
		{&evalapi.Error{Kind: evalapi.KindRejected, StatusCode: 400}, PhaseStalled, v1alpha1.ReasonRejected, 0, false},
		{&evalapi.Error{Kind: evalapi.KindRateLimited, StatusCode: 429, RetryAfter: 7 * time.Second}, PhaseProgressing, v1alpha1.ReasonUpstreamUnavailable, 7 * time.Second, false},
		{&evalapi.Error{Kind: evalapi.KindRateLimited, StatusCode: 429}, PhaseProgressing, v1alpha1.ReasonUpstreamUnavailable, 0, true},
		{&evalapi.Error{Kind: evalapi.KindUnavailable, StatusCode: 503}, PhaseProgressing, v1alpha1.ReasonUpstreamUnavailable, 0, true},
		{&evalapi.Error{Kind: evalapi.KindNotSent, Err: errors.New("connection refused")}, PhaseProgressing, v1alpha1.ReasonUpstreamUnavailable, 0, true},
		{&evalapi.Error{Kind: evalapi.KindOutcomeUnknown, Err: errors.New("reset")}, PhaseProgressing, v1alpha1.ReasonUpstreamUnavailable, 0, true},
		// An address a namespaced service may not reach is its setting to change, not an outage.
		{&evalapi.Error{Kind: evalapi.KindNotSent, Err: fmt.Errorf("dial: %w: 127.0.0.1", remote.ErrPrivateAddress)},
			PhaseStalled, v1alpha1.ReasonServiceNotAllowed, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.err.Kind.String(), func(t *testing.T) {
			o, res, err := UpstreamFailure(tc.err)
			if o.Phase != tc.phase || o.Reason != tc.reason {
				t.Errorf("outcome = %v, want phase %v reason %s", o, tc.phase, tc.reason)
			}
			if res.RequeueAfter != tc.requeue {
				t.Errorf("RequeueAfter = %s, want %s", res.RequeueAfter, tc.requeue)
			}
			if (err != nil) != tc.backoff {
				t.Errorf("error = %v, want backoff %v", err, tc.backoff)
			}
		})
	}
}

func TestKeyFailure(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		phase   Phase
		reason  string
		backoff bool
	}{
		{"missing Secret", &remote.KeyError{Reason: v1alpha1.ReasonSecretNotFound, Message: "Secret \"k\" not found"},
			PhaseStalled, v1alpha1.ReasonSecretNotFound, false},
		{"not an ak_ key", &remote.KeyError{Reason: v1alpha1.ReasonInvalidCredentials, Message: "not an API key"},
			PhaseStalled, v1alpha1.ReasonInvalidCredentials, false},
		{"failed read", &remote.KeyError{Reason: v1alpha1.ReasonSecretUnreadable, Message: "reading Secret \"k\"",
			Err: errors.New("connection refused")},
			PhaseProgressing, v1alpha1.ReasonSecretUnreadable, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, o, err := KeyFailure(tc.err)
			if !ok {
				t.Fatalf("keyFailure did not take %v for a key failure", tc.err)
			}
			if o.Phase != tc.phase || o.Reason != tc.reason {
				t.Errorf("outcome = %v, want phase %v reason %s", o, tc.phase, tc.reason)
			}
			if (err != nil) != tc.backoff {
				t.Errorf("error = %v, want backoff %v", err, tc.backoff)
			}
		})
	}
}
