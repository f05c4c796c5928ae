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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

func TestSetConditions(t *testing.T) {
	cases := []struct {
		name        string
		o           Outcome
		ready       metav1.ConditionStatus
		reconciling bool
		stalled     bool
	}{
		{"ready", Ready(v1alpha1.ReasonCreated, "ok"), metav1.ConditionTrue, false, false},
		{"progressing", Progressing(v1alpha1.ReasonUpstreamUnavailable, "500"), metav1.ConditionFalse, true, false},
		{"stalled", Stalled(v1alpha1.ReasonRejected, "400"), metav1.ConditionFalse, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Start from the opposite state, so every condition has to move.
			conds := []metav1.Condition{}
			SetConditions(&conds, 1, Stalled(v1alpha1.ReasonUnauthorized, "401"))
			SetConditions(&conds, 1, Progressing(v1alpha1.ReasonCreating, "sending"))
			SetConditions(&conds, 2, tc.o)

			r := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
			if r == nil || r.Status != tc.ready || r.Reason != tc.o.Reason || r.Message != tc.o.Message || r.ObservedGeneration != 2 {
				t.Fatalf("Ready = %+v, want status %s reason %s generation 2", r, tc.ready, tc.o.Reason)
			}
			if got := meta.IsStatusConditionTrue(conds, v1alpha1.ConditionReconciling); got != tc.reconciling {
				t.Errorf("Reconciling true = %v, want %v", got, tc.reconciling)
			}
			if got := meta.IsStatusConditionTrue(conds, v1alpha1.ConditionStalled); got != tc.stalled {
				t.Errorf("Stalled true = %v, want %v", got, tc.stalled)
			}
			// Abnormal-true conditions are absent, not False, when inactive (kstatus).
			for _, c := range conds {
				if c.Status != metav1.ConditionTrue && c.Type != v1alpha1.ConditionReady {
					t.Errorf("condition %s present with status %s", c.Type, c.Status)
				}
			}
		})
	}
}

func TestSetConditionsKeepsTransitionTime(t *testing.T) {
	conds := []metav1.Condition{}
	SetConditions(&conds, 1, Ready(v1alpha1.ReasonCreated, "ok"))
	old := metav1.NewTime(metav1.Now().Add(-3600e9))
	conds[0].LastTransitionTime = old
	SetConditions(&conds, 1, Ready(v1alpha1.ReasonCreated, "ok"))
	if got := meta.FindStatusCondition(conds, v1alpha1.ConditionReady).LastTransitionTime; !got.Equal(&old) {
		t.Fatalf("LastTransitionTime moved to %v without a transition", got)
	}
}

func TestChangesState(t *testing.T) {
	conds := []metav1.Condition{}
	if !changesState(conds, Ready(v1alpha1.ReasonCreated, "")) {
		t.Error("the first outcome must count as a change")
	}
	SetConditions(&conds, 1, Stalled(v1alpha1.ReasonUnauthorized, "401"))
	if changesState(conds, Stalled(v1alpha1.ReasonUnauthorized, "another message")) {
		t.Error("the same reason with another message is not a change")
	}
	if !changesState(conds, Stalled(v1alpha1.ReasonSecretNotFound, "")) {
		t.Error("a new reason is a change")
	}
}

func TestEventType(t *testing.T) {
	for o, want := range map[Outcome]string{
		Ready(v1alpha1.ReasonCreated, ""):                   corev1.EventTypeNormal,
		Progressing(v1alpha1.ReasonCreating, ""):            corev1.EventTypeNormal,
		Progressing(v1alpha1.ReasonDeleting, ""):            corev1.EventTypeNormal,
		Progressing(v1alpha1.ReasonRunning, ""):             corev1.EventTypeNormal,
		Progressing(v1alpha1.ReasonPending, ""):             corev1.EventTypeNormal,
		Progressing(v1alpha1.ReasonReferencesNotReady, ""):  corev1.EventTypeWarning,
		Progressing(v1alpha1.ReasonUpstreamUnavailable, ""): corev1.EventTypeWarning,
		Stalled(v1alpha1.ReasonCreateOutcomeUnknown, ""):    corev1.EventTypeWarning,
	} {
		if got := EventType(o); got != want {
			t.Errorf("eventType(%v) = %s, want %s", o, got, want)
		}
	}
}

func TestStalledOn(t *testing.T) {
	conds := []metav1.Condition{}
	SetConditions(&conds, 3, Stalled(v1alpha1.ReasonRejected, "400"))
	if StalledOn(conds, v1alpha1.ReasonRejected, 3) == nil {
		t.Error("stalled on Rejected at generation 3")
	}
	if StalledOn(conds, v1alpha1.ReasonRejected, 4) != nil {
		t.Error("a new generation must be retried")
	}
	if StalledOn(conds, v1alpha1.ReasonUnauthorized, 3) != nil {
		t.Error("another reason must not match")
	}
}

// A message quoting a tenant's value whole (a 400,000-byte key) is cut to
// what the API server takes, every condition's alike: a longer one would
// have the whole status refused.
func TestSetConditionsBoundsMessages(t *testing.T) {
	long := "testcases 1 and 2 have the same i \"" + strings.Repeat("K", 400_000) + "\""
	conds := []metav1.Condition{{Type: v1alpha1.ConditionSynced, Status: metav1.ConditionFalse, Reason: "R", Message: long}}
	SetConditions(&conds, 1, Stalled(testcases.ReasonDuplicate, long))
	if len(conds) != 3 {
		t.Fatalf("conditions = %d, want Synced, Ready and Stalled", len(conds))
	}
	for _, c := range conds {
		if len(c.Message) > MaxConditionMessage || !strings.HasSuffix(c.Message, "... (cut from 400036 bytes)") ||
			!strings.HasPrefix(c.Message, "testcases 1 and 2 have the same i \"KKK") {
			t.Errorf("%s message: %d bytes, ending %q", c.Type, len(c.Message), c.Message[max(0, len(c.Message)-40):])
		}
	}
	short := []metav1.Condition{}
	SetConditions(&short, 1, Ready(v1alpha1.ReasonCreated, "created remote Metric m1"))
	if got := short[0].Message; got != "created remote Metric m1" {
		t.Errorf("a short message became %q", got)
	}
}
