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
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// unauthorizedRetry is how long a 401 waits before the key is tried again
// without a change to its Secret (a change re-triggers at once).
const unauthorizedRetry = 5 * time.Minute

// UpstreamFailure maps a failed service call (a kind's remote client) to the
// object's outcome and to how the call is retried: a returned error backs off exponentially in the
// work queue; a nil error with no RequeueAfter waits for a change.
func UpstreamFailure(err error) (Outcome, ctrl.Result, error) {
	if ok, o, err := KeyFailure(err); ok {
		return o, ctrl.Result{}, err
	}
	switch remote.FailureOf(err) {
	case remote.Unauthorized:
		return Stalled(v1alpha1.ReasonUnauthorized,
				"the service refused the API key (401): update the referenced Secret"),
			ctrl.Result{RequeueAfter: unauthorizedRetry}, nil
	case remote.Rejected:
		return Stalled(v1alpha1.ReasonRejected, "the service rejected the request: "+err.Error()),
			ctrl.Result{}, nil
	case remote.AddressNotAllowed:
		// The service's setting, not the request: the object waits for the
		// service (or the manager) to change, not for its own spec.
		return Stalled(v1alpha1.ReasonServiceNotAllowed, "the service's address may not be reached: "+remote.Summary(err)+
				"; change its url, or run the manager with --allow-private-service-addresses"),
			ctrl.Result{}, nil
	case remote.NotFound:
		// Nothing at the request's address, e.g. a create in a project that
		// does not exist; sending the same request again finds nothing again.
		return Stalled(v1alpha1.ReasonRejected, "the service found nothing to act on: "+err.Error()),
			ctrl.Result{}, nil
	case remote.RateLimited:
		if after := remote.RetryAfter(err); after > 0 {
			return Progressing(v1alpha1.ReasonUpstreamUnavailable,
					fmt.Sprintf("the service is rate limiting (429); retrying in %s", after)),
				ctrl.Result{RequeueAfter: after}, nil
		}
	}
	return Progressing(v1alpha1.ReasonUpstreamUnavailable, "the service call failed; retrying: "+err.Error()),
		ctrl.Result{}, err
}

// ConnectFailure maps a service that could not be resolved: one that is
// missing or not allowed waits for a change to the services (the service
// watch re-triggers); a failed read backs off.
func ConnectFailure(err error) (Outcome, ctrl.Result, error) {
	if s, ok := errors.AsType[*remote.ServiceError](err); ok {
		return Stalled(s.Reason, s.Message), ctrl.Result{}, nil
	}
	return Progressing(v1alpha1.ReasonUpstreamUnavailable, "resolving the service: "+err.Error()), ctrl.Result{}, err
}

// KeyFailure maps a call that failed because the object's key could not
// be used, so nothing was sent: a missing or unusable key waits for its
// Secret to change (the Secret watch re-triggers); a failed read of the
// Secret backs off (rerr). Neither waits for a set time. ok is false for
// any other failure.
func KeyFailure(err error) (ok bool, o Outcome, rerr error) {
	var k *remote.KeyError
	switch {
	case !errors.As(err, &k):
		return false, Outcome{}, nil
	case k.Err != nil:
		return true, Progressing(k.Reason, k.Message), err
	}
	return true, Stalled(k.Reason, k.Message), nil
}
