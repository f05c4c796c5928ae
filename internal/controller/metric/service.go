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

package metric

import (
	"context"
	"fmt"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// checkService stops a Metric that cannot use the service it resolves to:
// the service is missing or does not allow the namespace (cerr), or the
// Metric's remote id or pending create belongs to another service, which
// a call to this one could not reach (or would reach the wrong Metric of).
// An id recorded before the service record existed belongs to the service
// the Metric resolves to now, which is recorded at once.
func (r *Reconciler) checkService(ctx context.Context, conn *remote.Connection, cerr error, m *v1alpha1.Metric) (
	kit.Outcome, bool, error,
) {
	if cerr != nil {
		o, _, err := kit.ConnectFailure(cerr)
		return o, true, err
	}
	if !mayHaveRemote(m) {
		return kit.Outcome{}, false, nil
	}
	switch recorded := m.Annotations[v1alpha1.ServiceAnnotation]; recorded {
	case conn.Endpoint:
		return kit.Outcome{}, false, nil
	case "":
		err := r.patchAnnotations(ctx, m, map[string]any{v1alpha1.ServiceAnnotation: conn.Endpoint})
		if err != nil {
			return kit.Progressing(v1alpha1.ReasonPending, "recording the service of the remote id"), true, err
		}
		return kit.Outcome{}, false, nil
	default:
		return serviceChanged(m, recorded, conn), true, nil
	}
}

// serviceChanged is the outcome of a Metric whose remote side belongs to
// the service at recorded while it now resolves to conn.
func serviceChanged(m *v1alpha1.Metric, recorded string, conn *remote.Connection) kit.Outcome {
	what := "the pending create"
	if id := m.RecordedID(); id != "" {
		what = "remote Metric " + id
	}
	return kit.Stalled(v1alpha1.ReasonServiceChanged, fmt.Sprintf(
		"%s belongs to the service at %s, but this Metric now resolves to %s at %s, so nothing is called: "+
			"point spec.serviceRef (or the default service) back at %s, or, to start over on the new service, "+
			"remove the %s, %s and %s annotations",
		what, recorded, conn.Service, conn.Endpoint, recorded,
		v1alpha1.MetricIDAnnotation, v1alpha1.CreatePendingAnnotation, v1alpha1.ServiceAnnotation))
}

// adoptionOutcome refuses to act on a recorded id that m never read (status
// does not hold it: a metric-id annotation a person wrote) where conn may
// not adopt: under a cluster service's shared key that id may be another
// namespace's remote Metric.
func adoptionOutcome(conn *remote.Connection, m *v1alpha1.Metric, id string) (kit.Outcome, bool) {
	if conn.MayAdopt || m.Status.ID == id {
		return kit.Outcome{}, false
	}
	return adoptionNotAllowed(conn, "adopting remote Metric "+id+" from annotation "+v1alpha1.MetricIDAnnotation,
		"remove the annotation to create a new remote Metric"), true
}

// adoptionNotAllowed is the outcome of an adoption, what, refused because
// conn's key is shared by namespaces; instead says what else a person can do.
func adoptionNotAllowed(conn *remote.Connection, what, instead string) kit.Outcome {
	return kit.Stalled(v1alpha1.ReasonAdoptionNotAllowed, what+" is refused: "+sharedKey(conn)+
		"; give this object its own spec.apiKeySecretRef, or "+instead)
}

// sharedKey says why conn may not adopt.
func sharedKey(conn *remote.Connection) string {
	return conn.Service + "'s key is shared by every namespace it allows, so whose remote Metric this is cannot be " +
		"told, and its spec.adoption does not allow adoption"
}
