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
	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// adoptionOutcome refuses to act on a recorded id that m never read (status
// does not hold it: a metric-id annotation a person wrote) where conn may
// not adopt: under a cluster service's shared key that id may be another
// namespace's remote Metric.
func adoptionOutcome(s *scope, id string) (kit.Outcome, bool) {
	m := s.Obj
	if s.Conn.MayAdopt || m.Status.ID == id {
		return kit.Outcome{}, false
	}
	return adoptionNotAllowed(s.Conn, "adopting remote Metric "+id+" from annotation "+v1alpha1.MetricIDAnnotation,
		"remove the annotation to create a new remote Metric"), true
}

// adoptionNotAllowed is the outcome of an adoption, what, refused because
// s.Conn's key is shared by namespaces; instead says what else a person can do.
func adoptionNotAllowed(conn *remote.Connection, what, instead string) kit.Outcome {
	return kit.Stalled(v1alpha1.ReasonAdoptionNotAllowed, what+" is refused: "+sharedKey(conn)+
		"; give this object its own spec.apiKeySecretRef, or "+instead)
}

// sharedKey says why conn may not adopt.
func sharedKey(conn *remote.Connection) string {
	return conn.Service + "'s key is shared by every namespace it allows, so whose remote Metric this is cannot be " +
		"told, and its spec.adoption does not allow adoption"
}
