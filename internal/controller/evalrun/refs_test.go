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

package evalrun

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

func TestWaitingFor(t *testing.T) {
	if got, want := waitingFor([]string{"Testset qa not found"}), "Testset qa not found"; got != want {
		t.Errorf("one: %q, want %q", got, want)
	}
	two := waitingFor([]string{"Metric exact not found", "Metric quality is not Ready (Rejected: 400)"})
	if want := "Metric exact not found; Metric quality is not Ready (Rejected: 400)"; two != want {
		t.Errorf("two: %q, want %q", two, want)
	}
	many := make([]string, 0, 13)
	for i := range 13 {
		many = append(many, fmt.Sprintf("Metric m%d not found", i))
	}
	got := waitingFor(many)
	if !strings.Contains(got, "Metric m9 not found; and 3 more") || strings.Contains(got, "m10") {
		t.Errorf("thirteen: %q, want the first %d named, then and 3 more", got, maxUnmet)
	}
}

func TestNotReady(t *testing.T) {
	m := &v1alpha1.Metric{}
	if got, want := notReady("Metric", "exact", m), "Metric exact is not Ready"; got != want {
		t.Errorf("no condition yet: %q, want %q", got, want)
	}
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady,
		Status: metav1.ConditionFalse, Reason: "Pending"})
	if got, want := notReady("Metric", "exact", m), "Metric exact is not Ready (Pending)"; got != want {
		t.Errorf("a reason alone: %q, want %q", got, want)
	}
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionReady,
		Status: metav1.ConditionFalse, Reason: "Rejected", Message: strings.Repeat("x", 1000)})
	got := notReady("Metric", "exact", m)
	if !strings.HasPrefix(got, "Metric exact is not Ready (Rejected: xxx") || len(got) > 250 {
		t.Errorf("a long message: %q (%d bytes), want its reason and a cut message", got, len(got))
	}
}
