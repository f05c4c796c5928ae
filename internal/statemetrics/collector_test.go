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

package statemetrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// conditions returns a Ready condition with status and reason, and a
// Stalled one when stalled, as the reconcilers write them.
func conditions(status metav1.ConditionStatus, reason string, stalled bool) []metav1.Condition {
	c := []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: status, Reason: reason}}
	if stalled {
		c = append(c, metav1.Condition{Type: v1alpha1.ConditionStalled, Status: metav1.ConditionTrue, Reason: reason})
	}
	return c
}

func metric(ns, name string, conds []metav1.Condition) *v1alpha1.Metric {
	m := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Status.Conditions = conds
	return m
}

func reader(t *testing.T, objs ...client.Object) client.Reader {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func TestCollectCountsObjectsByState(t *testing.T) {
	deletion := &v1alpha1.TestsetDeletion{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "d"}}
	deletion.Status.Conditions = conditions(metav1.ConditionTrue, v1alpha1.ReasonCompleted, false)
	r := reader(t,
		metric("a", "m1", conditions(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown, true)),
		metric("b", "m2", conditions(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown, true)),
		metric("a", "m3", conditions(metav1.ConditionTrue, v1alpha1.ReasonCreated, false)),
		metric("a", "m4", nil),
		deletion,
	)

	want := `
# HELP evaloperator_objects Objects by kind, Ready condition status and reason, and whether they are Stalled (waiting for a person or a change).
# TYPE evaloperator_objects gauge
evaloperator_objects{kind="Metric",ready="False",reason="CreateOutcomeUnknown",stalled="true"} 2
evaloperator_objects{kind="Metric",ready="True",reason="Created",stalled="false"} 1
evaloperator_objects{kind="Metric",ready="Unknown",reason="",stalled="false"} 1
evaloperator_objects{kind="TestsetDeletion",ready="True",reason="Completed",stalled="false"} 1
`
	if err := testutil.CollectAndCompare(New(r, false), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestCollectAddsTheNamespaceOnlyWhenAsked(t *testing.T) {
	r := reader(t,
		metric("a", "m1", conditions(metav1.ConditionFalse, v1alpha1.ReasonUnauthorized, true)),
		metric("b", "m2", conditions(metav1.ConditionFalse, v1alpha1.ReasonUnauthorized, true)),
	)

	want := `
# HELP evaloperator_objects Objects by kind, Ready condition status and reason, and whether they are Stalled (waiting for a person or a change).
# TYPE evaloperator_objects gauge
evaloperator_objects{kind="Metric",object_namespace="a",ready="False",reason="Unauthorized",stalled="true"} 1
evaloperator_objects{kind="Metric",object_namespace="b",ready="False",reason="Unauthorized",stalled="true"} 1
`
	if err := testutil.CollectAndCompare(New(r, true), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestCollectWithNoObjectsExportsNoSeries(t *testing.T) {
	if n := testutil.CollectAndCount(New(reader(t), false)); n != 0 {
		t.Errorf("got %d series, want 0", n)
	}
}
