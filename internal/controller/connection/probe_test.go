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

package connection

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
)

func TestProbeOutcome(t *testing.T) {
	const every = 10 * time.Minute
	apiErr := func(kind evalapi.ErrorKind, status int, code, msg string) error {
		return &evalapi.Error{Kind: kind, Op: "ListProjects", StatusCode: status,
			API: &evalapi.APIError{Code: code, Message: msg, Details: map[string]any{}}}
	}
	cases := []struct {
		name    string
		err     error
		phase   kit.Phase
		reason  string
		requeue time.Duration
		backoff bool
	}{
		{"answered", nil, kit.PhaseReady, v1alpha1.ReasonConnected, every, false},
		{"401", apiErr(evalapi.KindUnauthorized, 401, "UNAUTHORIZED", "no"), kit.PhaseStalled, v1alpha1.ReasonUnauthorized, every, false},
		{"400", apiErr(evalapi.KindRejected, 400, "VALIDATION_ERROR", "bad"), kit.PhaseStalled, v1alpha1.ReasonRejected, every, false},
		{"404", apiErr(evalapi.KindNotFound, 404, "NOT_FOUND", "no route"), kit.PhaseStalled, v1alpha1.ReasonRejected, every, false},
		{"503", apiErr(evalapi.KindUnavailable, 503, "INTERNAL_ERROR", "down"), kit.PhaseProgressing, v1alpha1.ReasonUnreachable, 0, true},
		{"no answer", &evalapi.Error{Kind: evalapi.KindNotSent, Op: "ListProjects", Err: errors.New("connection refused")},
			kit.PhaseProgressing, v1alpha1.ReasonUnreachable, 0, true},
		{"a private address", &evalapi.Error{Kind: evalapi.KindNotSent, Op: "ListProjects",
			Err: fmt.Errorf("dial: %w", remote.ErrPrivateAddress)}, kit.PhaseStalled, v1alpha1.ReasonRejected, every, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, res, err := probeOutcome(tc.err, every)
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

// A probe without an answer says its cause in the words a Metric's condition
// uses, never the client's internal error kinds.
func TestProbeSummarySaysTheCause(t *testing.T) {
	refused := &evalapi.Error{Kind: evalapi.KindNotSent, Op: "ListProjects", Err: &url.Error{Op: "Get",
		URL: "https://192.0.2.1/api/v2/projects?limit=1", Err: errors.New("dial tcp 192.0.2.1:443: connect: connection refused")}}
	o, _, _ := probeOutcome(refused, time.Minute)
	if !strings.Contains(o.Message, "dial tcp 192.0.2.1:443: connect: connection refused") {
		t.Errorf("message %q does not say the cause", o.Message)
	}
	for _, kind := range []evalapi.ErrorKind{evalapi.KindNotSent, evalapi.KindOutcomeUnknown, evalapi.KindUnavailable} {
		o, _, _ := probeOutcome(&evalapi.Error{Kind: kind, Op: "ListProjects"}, time.Minute)
		if strings.Contains(o.Message, kind.String()) {
			t.Errorf("message %q names the internal kind %s", o.Message, kind)
		}
	}
}
