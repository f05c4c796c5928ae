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

package oneshot

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// alreadyGone reports whether err is the service's own answer that what a
// deletion names does not exist: a 404 with its NOT_FOUND ApiError. That
// deletion is complete, e.g. when GitOps recreated a deletion object that
// ttlSecondsAfterFinished had removed.
func alreadyGone(err error) bool { return remote.Gone(err) }

// deletionFailure maps a failed deletion call that did not find the thing
// gone. A 404 or 405 without the service's NOT_FOUND (a wrong --api-url path,
// a proxy, an older service) proves nothing: it never completes a deletion,
// and like any other 4xx it waits for a person.
func deletionFailure(err error) (kit.Outcome, ctrl.Result, error) {
	if remote.FailureOf(err) == remote.NotFound {
		return kit.Stalled(v1alpha1.ReasonRejected,
			"the service did not answer as itself that it is already gone; check --api-url: "+err.Error()), ctrl.Result{}, nil
	}
	return kit.UpstreamFailure(err)
}
