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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// judgedRun is a run of Testset qa on service svc that judged version at
// second completed (0: no completion time) with verdict.
func judgedRun(name, version, verdict string, completed int) v1alpha1.EvaluationRun {
	e := v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{v1alpha1.RunIDAnnotation: "run-" + name}},
		Spec:   v1alpha1.EvaluationRunSpec{TestsetRef: &v1alpha1.ObjectRef{Name: "qa"}},
		Status: v1alpha1.EvaluationRunStatus{Verdict: v1alpha1.Verdict(verdict), SystemVersionID: version, Service: "svc"}}
	if completed > 0 {
		e.Status.CompletionTime = &metav1.Time{Time: time.Unix(int64(completed), 0)}
	}
	return e
}

func TestLatestPassed(t *testing.T) {
	self := judgedRun("canary", "v2", "", 0)
	otherTestset := judgedRun("other-testset", "v1", "Passed", 90)
	otherTestset.Spec.TestsetRef.Name = "smoke"
	byID := judgedRun("by-id", "v1", "Passed", 95)
	byID.Spec.TestsetRef, byID.Spec.TestsetID = nil, "ts_1"
	otherService := judgedRun("other-service", "v1", "Passed", 80)
	otherService.Status.Service = "elsewhere"
	unrecorded := judgedRun("unrecorded", "v1", "Passed", 70)
	unrecorded.Annotations = nil
	runs := []v1alpha1.EvaluationRun{
		judgedRun("b-old", "v1", "Passed", 10),
		judgedRun("a-latest", "v1", "Passed", 50),
		judgedRun("failed-later", "v1", "Failed", 60),
		judgedRun("inconclusive-later", "v1", "Inconclusive", 61),
		judgedRun("another-version", "v9", "Passed", 99),
		otherTestset, byID, otherService, unrecorded,
	}
	if got := latestPassed(runs, &self, "v1"); got == nil || got.Name != "a-latest" {
		t.Errorf("latest Passed run of v1: %v, want a-latest", got)
	}
	if got := latestPassed(runs, &self, "v3"); got != nil {
		t.Errorf("a version without a run: %s, want none", got.Name)
	}
	self.Name = "a-latest"
	if got := latestPassed(runs, &self, "v1"); got == nil || got.Name != "b-old" {
		t.Errorf("the run itself left out: %v, want b-old", got)
	}
}

func TestCompletedAfter(t *testing.T) {
	at := func(name string, completed, created int) *v1alpha1.EvaluationRun {
		e := judgedRun(name, "v1", "Passed", completed)
		e.CreationTimestamp = metav1.Time{Time: time.Unix(int64(created), 0)}
		return &e
	}
	for _, c := range []struct {
		what string
		a, b *v1alpha1.EvaluationRun
		want bool
	}{
		{"a later completion", at("a", 20, 1), at("b", 10, 5), true},
		{"an earlier completion", at("a", 10, 5), at("b", 20, 1), false},
		{"a completion over none", at("a", 10, 1), at("b", 0, 5), true},
		{"none under a completion", at("a", 0, 5), at("b", 10, 1), false},
		{"the same second: the later created", at("a", 10, 2), at("b", 10, 1), true},
		{"the same second and creation: the first by name", at("a", 10, 1), at("b", 10, 1), true},
		{"the same second and creation: not the second by name", at("b", 10, 1), at("a", 10, 1), false},
	} {
		if got := completedAfter(c.a, c.b); got != c.want {
			t.Errorf("%s: %t, want %t", c.what, got, c.want)
		}
	}
}

func TestSameTestset(t *testing.T) {
	ref := func(name string) v1alpha1.EvaluationRunSpec {
		return v1alpha1.EvaluationRunSpec{TestsetRef: &v1alpha1.ObjectRef{Name: name}}
	}
	id := func(id v1alpha1.ResourceID) v1alpha1.EvaluationRunSpec {
		return v1alpha1.EvaluationRunSpec{TestsetID: id}
	}
	for _, c := range []struct {
		what string
		a, b v1alpha1.EvaluationRunSpec
		want bool
	}{
		{"one Testset of the namespace", ref("qa"), ref("qa"), true},
		{"two Testsets", ref("qa"), ref("smoke"), false},
		{"one remote id", id("ts_1"), id("ts_1"), true},
		{"two remote ids", id("ts_1"), id("ts_2"), false},
		{"a reference and an id", ref("qa"), id("ts_1"), false},
		{"no Testset at all", id(""), id(""), false},
	} {
		if got := sameTestset(&c.a, &c.b); got != c.want {
			t.Errorf("%s: %t, want %t", c.what, got, c.want)
		}
	}
}

func TestPromotionDecided(t *testing.T) {
	e := &v1alpha1.EvaluationRun{}
	if promotionDecided(e.Status.Conditions) {
		t.Error("no Promoted condition: decided")
	}
	setPromoted(e, metav1.ConditionUnknown, v1alpha1.ReasonPromoting, "retrying")
	if promotionDecided(e.Status.Conditions) {
		t.Error("Unknown (retried): decided")
	}
	for _, status := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse} {
		setPromoted(e, status, v1alpha1.ReasonPromoted, "done")
		if !promotionDecided(e.Status.Conditions) {
			t.Errorf("%s: not decided", status)
		}
	}
}
