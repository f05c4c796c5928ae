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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
)

func TestPersonEdited(t *testing.T) {
	const (
		id       = v1alpha1.MetricIDAnnotation
		pending  = v1alpha1.CreatePendingAnnotation
		recreate = v1alpha1.RecreateAnnotation
	)
	unknown := []metav1.Condition{}
	kit.SetConditions(&unknown, 1, kit.Stalled(v1alpha1.ReasonCreateOutcomeUnknown, ""))
	unauthorized := []metav1.Condition{}
	kit.SetConditions(&unauthorized, 1, kit.Stalled(v1alpha1.ReasonUnauthorized, ""))

	cases := []struct {
		name  string
		old   map[string]string
		new   map[string]string
		conds []metav1.Condition
		want  bool
	}{
		{"adopt a new Metric", nil, map[string]string{id: "m1"}, nil, true},
		{"adopt after CreateOutcomeUnknown", map[string]string{pending: "t"}, map[string]string{pending: "t", id: "m1"}, unknown, true},
		{"change the adopted id", map[string]string{id: "m1"}, map[string]string{id: "m2"}, nil, true},
		{"clear pending after CreateOutcomeUnknown", map[string]string{pending: "t"}, nil, unknown, true},
		{"operator records the id", map[string]string{pending: "t"}, map[string]string{id: "m1"}, nil, false},
		{"operator marks a create pending", nil, map[string]string{pending: "t"}, nil, false},
		{"operator clears pending after a failed create", map[string]string{pending: "t"}, nil, unauthorized, false},
		{"operator clears pending on a new Metric", map[string]string{pending: "t"}, nil, nil, false},
		{"unrelated annotation", nil, map[string]string{"team": "a"}, nil, false},
		{"kubectl replace drops the id", map[string]string{id: "m1"}, nil, nil, true},
		{"allow a recreate", map[string]string{id: "m1"}, map[string]string{id: "m1", recreate: "m1"}, nil, true},
		{"recreate unchanged", map[string]string{id: "m1", recreate: "m1"}, map[string]string{id: "m1", recreate: "m1", "team": "a"}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Generation: 1, Annotations: tc.new}}
			m.Status.Conditions = tc.conds
			if got := personEdited(tc.old, m); got != tc.want {
				t.Errorf("personEdited = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMetricChangedOnLostFinalizer(t *testing.T) {
	with := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Generation: 1, Finalizers: []string{v1alpha1.MetricFinalizer}}}
	without := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	cases := []struct {
		name     string
		old, new *v1alpha1.Metric
		want     bool
	}{
		{"finalizer removed (a replace)", with, without, true},
		{"finalizer added (the operator's write)", without, with, false},
		{"finalizer kept", with, with, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := metricChanged.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("metricChanged.Update = %v, want %v", got, tc.want)
			}
		})
	}
}
