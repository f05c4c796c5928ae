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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

func TestSyncedCondition(t *testing.T) {
	up := syncedCondition(3, nil, `["Observe"]`)
	if up.Status != metav1.ConditionTrue || up.Reason != v1alpha1.ReasonUpToDate || up.ObservedGeneration != 3 {
		t.Fatalf("equal: got %+v", up)
	}
	drifted := syncedCondition(3, []string{"promptTemplate", "temperature"}, `["Observe"]`)
	if drifted.Status != metav1.ConditionFalse || drifted.Reason != v1alpha1.ReasonDrifted {
		t.Fatalf("drifted: got %+v", drifted)
	}
	for _, want := range []string{"promptTemplate, temperature", `["Observe"]`, "Update"} {
		if !strings.Contains(drifted.Message, want) {
			t.Errorf("drifted message %q does not name %q", drifted.Message, want)
		}
	}
}

// One Warning event per new difference: the same difference found again,
// or an equal remote, is no news.
func TestNewDifference(t *testing.T) {
	a := syncedCondition(1, []string{"name"}, `["Observe"]`)
	b := syncedCondition(1, []string{"name", "guidelines"}, `["Observe"]`)
	var conds []metav1.Condition
	if !newDifference(conds, a) {
		t.Fatal("a first difference is new")
	}
	meta.SetStatusCondition(&conds, a)
	if newDifference(conds, a) {
		t.Fatal("the same difference again is not new")
	}
	if !newDifference(conds, b) {
		t.Fatal("another field drifting is new")
	}
	if newDifference(conds, syncedCondition(1, nil, `["Observe"]`)) {
		t.Fatal("no difference is never new")
	}
	meta.SetStatusCondition(&conds, syncedCondition(1, nil, `["Observe"]`))
	if !newDifference(conds, a) {
		t.Fatal("a difference after the remote was equal again is new")
	}
}

func TestPolicies(t *testing.T) {
	spec := func(p ...v1alpha1.ManagementAction) *v1alpha1.MetricSpec {
		return &v1alpha1.MetricSpec{ManagementPolicies: p, DeletionPolicy: v1alpha1.DeletionPolicyDelete}
	}
	cases := []struct {
		spec                   *v1alpha1.MetricSpec
		create, update, delete bool
	}{
		{spec(), true, true, true},
		{spec(v1alpha1.ManagementAll), true, true, true},
		{spec(v1alpha1.ManagementObserve), false, false, false},
		{spec(v1alpha1.ManagementCreate, v1alpha1.ManagementDelete), true, false, true},
	}
	for _, c := range cases {
		got := []bool{c.spec.Allows(v1alpha1.ManagementCreate), c.spec.Allows(v1alpha1.ManagementUpdate), c.spec.DeletesRemote()}
		if got[0] != c.create || got[1] != c.update || got[2] != c.delete || !c.spec.Allows(v1alpha1.ManagementObserve) {
			t.Errorf("%s: got create, update, delete %v", c.spec.PoliciesString(), got)
		}
	}
	orphan := spec(v1alpha1.ManagementAll)
	orphan.DeletionPolicy = v1alpha1.DeletionPolicyOrphan
	if orphan.DeletesRemote() {
		t.Error("deletionPolicy Orphan deletes the remote Metric")
	}
}

// A gone remote Metric offers the recreate annotation only where the
// policies allow a create; otherwise the message says why not.
func TestRemoteNotFoundOffersWhatThePoliciesAllow(t *testing.T) {
	m := &v1alpha1.Metric{}
	all := remoteNotFound(m, "met_1")
	if !strings.Contains(all.Message, v1alpha1.RecreateAnnotation) {
		t.Errorf("with every policy, %q does not offer %s", all.Message, v1alpha1.RecreateAnnotation)
	}
	m.Spec.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementObserve, v1alpha1.ManagementUpdate}
	observe := remoteNotFound(m, "met_1")
	if observe.Reason != v1alpha1.ReasonRemoteNotFound || strings.Contains(observe.Message, v1alpha1.RecreateAnnotation) {
		t.Errorf("without Create: got %s %q, want RemoteNotFound without %s", observe.Reason, observe.Message, v1alpha1.RecreateAnnotation)
	}
	for _, want := range []string{"met_1", `["Observe", "Update"]`, "do not allow Create", v1alpha1.MetricIDAnnotation} {
		if !strings.Contains(observe.Message, want) {
			t.Errorf("without Create, %q does not name %q", observe.Message, want)
		}
	}
}
