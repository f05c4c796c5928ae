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

package testset

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

func TestSetSynced(t *testing.T) {
	var conds []metav1.Condition
	setSynced(&conds, 3, testcases.Plan{}, false)
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionSynced)
	if c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonUpToDate || c.ObservedGeneration != 3 {
		t.Errorf("nothing to do: %+v", c)
	}
	setSynced(&conds, 4, testcases.Plan{Delete: []string{"a", "b"}}, true)
	c = meta.FindStatusCondition(conds, v1alpha1.ConditionSynced)
	if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonDrifted ||
		!strings.Contains(c.Message, "0 to create, 0 to update, 2 to delete") || !strings.Contains(c.Message, "field mapping") {
		t.Errorf("a difference: %+v", c)
	}
}

func TestUpToDate(t *testing.T) {
	set := testcases.Set{Digest: "sha256:1"}
	ready := func(generation int64, digest string) *v1alpha1.Testset {
		ts := &v1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: v1alpha1.TestsetStatus{Digest: digest}}
		kit.SetConditions(&ts.Status.Conditions, generation, kit.Ready(v1alpha1.ReasonSynced, "synced"))
		return ts
	}
	if o, ok := upToDate(ready(2, "sha256:1"), set); !ok || o.Reason != v1alpha1.ReasonSynced {
		t.Errorf("Ready at its generation with the digest: %v %+v", ok, o)
	}
	if _, ok := upToDate(ready(1, "sha256:1"), set); ok {
		t.Error("a new generation must sync")
	}
	if _, ok := upToDate(ready(2, "sha256:0"), set); ok {
		t.Error("a new digest must sync")
	}
	stalled := ready(2, "sha256:1")
	kit.SetConditions(&stalled.Status.Conditions, 2, kit.Stalled(v1alpha1.ReasonRemoteNotFound, "gone"))
	if _, ok := upToDate(stalled, set); ok {
		t.Error("a Testset that is not Ready must sync")
	}
}

func TestSyncedSets(t *testing.T) {
	s := newSyncedSets()
	s.record("u", 2, "sha256:1")
	if !s.synced("u", 2, "sha256:1") || s.synced("u", 3, "sha256:1") || s.synced("u", 2, "sha256:2") {
		t.Error("synced must match the generation and digest recorded")
	}
	s.forget("u")
	if s.synced("u", 2, "sha256:1") {
		t.Error("forgotten")
	}
}
