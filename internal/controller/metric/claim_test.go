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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
)

// claimant is a Metric created at minute min that claims id through its
// annotation, and has recorded it in status when held.
func claimant(name string, minute int, id string, held bool) v1alpha1.Metric {
	m := v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{
		Name: name, UID: types.UID(name),
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC)),
		Annotations:       map[string]string{v1alpha1.MetricIDAnnotation: id},
	}}
	if held {
		m.Status.ID = id
	}
	return m
}

func TestHolderOf(t *testing.T) {
	const id, endpoint = "met_1", "https://a.example.com/api/v2"
	refused := claimant("refused", 0, id, false)
	kit.SetConditions(&refused.Status.Conditions, 1, kit.Claimed(kit.MetricIDs, id, &refused, &refused))
	elsewhere := claimant("elsewhere", 0, id, true)
	elsewhere.Annotations[v1alpha1.ServiceAnnotation] = "https://b.example.com/api/v2"
	here := claimant("here", 0, id, true)
	here.Annotations[v1alpha1.ServiceAnnotation] = endpoint
	cases := []struct {
		name   string
		m      v1alpha1.Metric
		others []v1alpha1.Metric
		want   string // the holder ahead of m; "" when m holds id
	}{
		{"alone", claimant("a", 1, id, false), nil, ""},
		{"itself only", claimant("a", 1, id, true), []v1alpha1.Metric{claimant("a", 1, id, true)}, ""},
		{"a newer copy of the annotation stalls", claimant("new", 2, id, false),
			[]v1alpha1.Metric{claimant("old", 1, id, true)}, "old"},
		{"the holder keeps its id against a newer copy", claimant("old", 1, id, true),
			[]v1alpha1.Metric{claimant("new", 2, id, false)}, ""},
		// An older Metric annotated later with an id another already serves does not take it.
		{"recorded in status wins over older", claimant("older", 0, id, false),
			[]v1alpha1.Metric{claimant("serving", 5, id, true)}, "serving"},
		{"between two new claims the older holds", claimant("b", 2, id, false),
			[]v1alpha1.Metric{claimant("a", 1, id, false)}, "a"},
		{"same time: the first by name", claimant("b", 1, id, false),
			[]v1alpha1.Metric{claimant("a", 1, id, false)}, "a"},
		{"a refused claim holds nothing", claimant("b", 1, id, false), []v1alpha1.Metric{refused}, ""},
		{"another id is no claim", claimant("b", 2, id, false), []v1alpha1.Metric{claimant("a", 1, "met_2", true)}, ""},
		{"the same id on another service is no claim", claimant("b", 2, id, false), []v1alpha1.Metric{elsewhere}, ""},
		{"the same id on this service is", claimant("b", 2, id, false), []v1alpha1.Metric{elsewhere, here}, "here"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if h, found := kit.HolderOf(id, endpoint, &tc.m, kit.Pointers(tc.others)); found {
				got = h.Name
			}
			if got != tc.want {
				t.Errorf("holder = %q, want %q", got, tc.want)
			}
		})
	}
}

// A claimant learns the holder's name only when they share a namespace.
func TestClaimedNamesHolderOfTheSameNamespaceOnly(t *testing.T) {
	claimant, holder := claimant("alice", 1, "met_1", false), claimant("bobs-metric", 0, "met_1", true)
	claimant.Namespace, holder.Namespace = "team-a", "team-a"
	if o := kit.Claimed(kit.MetricIDs, "met_1", &claimant, &holder); !strings.Contains(o.Message, "Metric bobs-metric of this namespace") {
		t.Errorf("same namespace: message %q does not name the holder", o.Message)
	}
	holder.Namespace = "team-b"
	o := kit.Claimed(kit.MetricIDs, "met_1", &claimant, &holder)
	if strings.Contains(o.Message, "bobs-metric") || strings.Contains(o.Message, "team-b") ||
		!strings.Contains(o.Message, "another object of the cluster") {
		t.Errorf("another namespace: message %q names the holder or its namespace", o.Message)
	}
	if o.Phase != kit.PhaseStalled || o.Reason != v1alpha1.ReasonMetricIDClaimed {
		t.Errorf("outcome = %+v, want kit.Stalled MetricIDClaimed", o)
	}
}

func TestIDRefused(t *testing.T) {
	valid := claimant("a", 1, "met_1", true)
	if valid.IDRefused() {
		t.Error("a valid held id is refused")
	}
	long := claimant("a", 1, strings.Repeat("x", 300), false)
	if !long.IDRefused() {
		t.Error("a 300-character id is not refused")
	}
	control := claimant("a", 1, "met\x7f1", false)
	if !control.IDRefused() {
		t.Error("an id with DEL is not refused")
	}
	o := kit.InvalidID(kit.MetricIDs, long.Annotations[v1alpha1.MetricIDAnnotation])
	if o.Phase != kit.PhaseStalled || o.Reason != v1alpha1.ReasonInvalidMetricID || len(o.Message) > 300 {
		t.Errorf("invalid id outcome = %+v: want kit.Stalled InvalidMetricID, a message quoting a bounded prefix", o)
	}
}
