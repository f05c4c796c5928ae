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

// policies are an object's managementPolicies; Metrics and Testsets read
// them alike.
type policies []ManagementAction

// allows reports whether the policies allow action a. Observe is always
// allowed; an empty list (an object stored before the field existed) means
// `*`, the behaviour it was created with.
func (ps policies) allows(a ManagementAction) bool {
	return a == ManagementObserve || len(ps) == 0 || slices.Contains(ps, ManagementAll) || slices.Contains(ps, a)
}

// deletesRemote reports whether deleting the object deletes its remote
// copy: deletionPolicy Delete, and the policies allowing Delete. A policy
// without Delete wins over deletionPolicy Delete.
func (ps policies) deletesRemote(d DeletionPolicy) bool {
	return d != DeletionPolicyOrphan && ps.allows(ManagementDelete)
}

// String is the policies as a user wrote them, for messages.
func (ps policies) String() string {
	if len(ps) == 0 {
		return `["*"]`
	}
	quoted := make([]string, len(ps))
	for i, p := range ps {
		quoted[i] = `"` + string(p) + `"`
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// Allows reports whether the spec's managementPolicies allow action a.
func (s *MetricSpec) Allows(a ManagementAction) bool { return policies(s.ManagementPolicies).allows(a) }

// DeletesRemote reports whether deleting the Metric deletes its remote Metric.
func (s *MetricSpec) DeletesRemote() bool {
	return policies(s.ManagementPolicies).deletesRemote(s.DeletionPolicy)
}

// PoliciesString is managementPolicies as a user wrote them, for messages.
func (s *MetricSpec) PoliciesString() string { return policies(s.ManagementPolicies).String() }

// Allows reports whether the spec's managementPolicies allow action a.
func (s *TestsetSpec) Allows(a ManagementAction) bool {
	return policies(s.ManagementPolicies).allows(a)
}

// DeletesRemote reports whether deleting the Testset deletes its remote Testset.
func (s *TestsetSpec) DeletesRemote() bool {
	return policies(s.ManagementPolicies).deletesRemote(s.DeletionPolicy)
}

// PoliciesString is managementPolicies as a user wrote them, for messages.
func (s *TestsetSpec) PoliciesString() string { return policies(s.ManagementPolicies).String() }
