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

package tenancy

import (
	"net/http"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// RefusedByPolicy is the answer to a write that m's managementPolicies do
// not allow (action Update for a PATCH, Delete for a DELETE), given before
// anything is written: the cluster would otherwise accept a change the
// operator never sends to the service, or drop the object and keep the
// remote copy, a silent success either way. kind names the object's kind.
func RefusedByPolicy(kind string, spec Policed, action evaluationv1alpha1.ManagementAction) *apierror.Error {
	if spec.Allows(action) {
		return nil
	}
	e := apierror.New(http.StatusForbidden, apierror.CodeForbidden,
		"The "+kind+"'s managementPolicies "+spec.PoliciesString()+" do not allow "+string(action)+
			": the cluster only mirrors this "+kind+"; change it where it is managed",
		map[string]any{"managementPolicies": spec.PoliciesString(), "action": string(action)})
	e.Header = http.Header{apierror.ShouldRetryHeader: {"false"}}
	return e
}

// Policed is the spec of a kind under managementPolicies.
type Policed interface {
	Allows(evaluationv1alpha1.ManagementAction) bool
	PoliciesString() string
}
