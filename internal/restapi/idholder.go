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

package restapi

import (
	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
)

// Answers about a Metric are built by convert.ResponseOf from validated
// values; these decide which Metric (or Testset) answers for an id.

// servable reports whether m may be served under its recorded id id: a
// valid id that m holds (not refused as a duplicate or an invalid claim).
func servable(m *evaluationv1alpha1.Metric, id string) bool {
	return evaluationv1alpha1.ValidResourceID(id) && !m.IDRefused()
}

// holder is the object that holds the id all of items claim: the
// reconciler's choice, so GET by id reaches the object that serves it.
func holder[T any, PT interface {
	*T
	evaluationv1alpha1.IDClaim
}](items []T) PT {
	h := PT(&items[0])
	for i := range items[1:] {
		if o := PT(&items[1+i]); evaluationv1alpha1.HoldsIDBefore(o, h) {
			h = o
		}
	}
	return h
}
