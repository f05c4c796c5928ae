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
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// readyMetric is a Metric Ready at generation 1.
func readyMetric() *v1alpha1.Metric {
	m := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	SetConditions(&m.Status.Conditions, 1, Ready(v1alpha1.ReasonAdopted, "adopted"))
	return m
}

func pause(m *v1alpha1.Metric) {
	m.Annotations = map[string]string{v1alpha1.PausedAnnotation: "true"}
}

func TestPauseKeepsReadyOnlyForTheSpecItReached(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*v1alpha1.Metric)
		ready metav1.ConditionStatus
	}{
		{"ready at this generation", func(*v1alpha1.Metric) {}, metav1.ConditionTrue},
		{"spec changed since", func(m *v1alpha1.Metric) { m.Generation = 2 }, metav1.ConditionFalse},
		{"stalled", func(m *v1alpha1.Metric) {
			SetConditions(&m.Status.Conditions, 1, Stalled(v1alpha1.ReasonRejected, "400"))
		}, metav1.ConditionFalse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := readyMetric()
			tc.edit(m)
			pause(m)
			o, held := HoldIfPaused(m)
			if !held || o.Reason != v1alpha1.ReasonPaused {
				t.Fatalf("holdIfPaused = %+v, %v; want held with reason Paused", o, held)
			}
			SetConditions(&m.Status.Conditions, m.Generation, o)
			if got := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady).Status; got != tc.ready {
				t.Errorf("Ready = %s, want %s", got, tc.ready)
			}
			for _, c := range []string{v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled} {
				if meta.FindStatusCondition(m.Status.Conditions, c) != nil {
					t.Errorf("%s present while paused", c)
				}
			}
		})
	}
}

func TestResumeRestoresTheConditionsThePauseReplaced(t *testing.T) {
	m := readyMetric()
	SetConditions(&m.Status.Conditions, 1, Stalled(v1alpha1.ReasonRejected, "400"))
	before := append([]metav1.Condition(nil), m.Status.Conditions...)
	pause(m)
	// Paused twice: the second pass must not stash the Paused condition.
	for range 2 {
		o, _ := HoldIfPaused(m)
		SetConditions(&m.Status.Conditions, 1, o)
	}

	m.Annotations = nil
	if o, held := HoldIfPaused(m); held {
		t.Fatalf("holdIfPaused held %+v without the annotation", o)
	}
	if !equality.Semantic.DeepEqual(m.Status.Conditions, before) {
		t.Errorf("conditions after resume = %+v, want %+v", m.Status.Conditions, before)
	}
}
