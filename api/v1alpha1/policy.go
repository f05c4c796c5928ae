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

package v1alpha1

import (
	"slices"
	"strings"
)

// Allows reports whether the spec's managementPolicies allow action a.
// Observe is always allowed; an empty list (an object stored before the
// field existed) means `*`, the behaviour it was created with.
func (s *MetricSpec) Allows(a ManagementAction) bool {
	return a == ManagementObserve || len(s.ManagementPolicies) == 0 ||
		slices.Contains(s.ManagementPolicies, ManagementAll) || slices.Contains(s.ManagementPolicies, a)
}

// DeletesRemote reports whether deleting the object deletes its remote
// Metric: deletionPolicy Delete, and managementPolicies allowing Delete.
// A policy without Delete wins over deletionPolicy Delete.
func (s *MetricSpec) DeletesRemote() bool {
	return s.DeletionPolicy != DeletionPolicyOrphan && s.Allows(ManagementDelete)
}

// PoliciesString is managementPolicies as a user wrote them, for messages.
func (s *MetricSpec) PoliciesString() string {
	if len(s.ManagementPolicies) == 0 {
		return `["*"]`
	}
	quoted := make([]string, len(s.ManagementPolicies))
	for i, p := range s.ManagementPolicies {
		quoted[i] = `"` + string(p) + `"`
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}
