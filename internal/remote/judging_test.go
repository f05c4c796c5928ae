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

package remote_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/judge"
	"github.com/eval-operator/eval-operator/internal/remote"
)

func TestCountScoreCountsEachRecordAndMetricOnce(t *testing.T) {
	run := &v1alpha1.EvaluationRun{}
	for _, c := range []struct {
		index int
		pass  *bool
		want  error
	}{{1, ptr.To(true), nil}, {9, ptr.To(false), nil}, {2, nil, nil}, {9, ptr.To(true), remote.ErrScored}, {2, ptr.To(true), remote.ErrScored}} {
		if err := remote.CountScore(run, "met_1", "tone", c.index, c.pass); (c.want == nil && err != nil) || !errors.Is(err, c.want) {
			t.Errorf("record %d: %v, want %v", c.index, err, c.want)
		}
	}
	m := run.Status.Metrics[0]
	if m.Passed != 1 || m.Failed != 1 || m.Unjudged != 1 || run.Status.Scores != 2 {
		t.Errorf("counts %+v, scores %d: want 1 passed, 1 failed, 1 unjudged, 2 scores", m, run.Status.Scores)
	}
	for index, want := range map[int]bool{1: true, 2: true, 3: false, 9: true, 10: false} {
		if got := remote.Scored(run, "met_1", index); got != want {
			t.Errorf("Scored(%d) = %v, want %v", index, got, want)
		}
	}
}

func TestJudgeRecordKeepsABoundedRecordOfItsRun(t *testing.T) {
	run := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "run-1", UID: "u1"}}
	huge, _ := json.Marshal(map[string]string{"a": strings.Repeat("x", 1<<20), "b": "short"})
	cm := remote.JudgeRecord(run, 7, judge.Record{Inputs: json.RawMessage(`{"q":"why"}`), Outputs: huge,
		Expected: json.RawMessage(`{}`)})
	if cm.Namespace != "team-a" || cm.OwnerReferences[0].UID != "u1" {
		t.Errorf("%s/%s owned by %v: want the run's namespace and the run", cm.Namespace, cm.Name, cm.OwnerReferences)
	}
	if n := len(cm.Data["outputs"]); n > 64<<10 {
		t.Errorf("outputs kept in %d bytes, want at most 64 KiB", n)
	}
	name, index, rec, ok := remote.RecordOf(cm)
	if !ok || name != "run-1" || index != 7 || string(rec.Inputs) != `{"q":"why"}` {
		t.Errorf("RecordOf = %q, %d, %s, %v", name, index, rec.Inputs, ok)
	}
	cm.OwnerReferences = nil
	if _, _, _, ok := remote.RecordOf(cm); ok {
		t.Error("a record no run owns was read as one")
	}
}
