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
	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

func TestRunCollectorExportsJudgedRuns(t *testing.T) {
	judged := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "support-2dhll",
		Labels: map[string]string{v1alpha1.CanaryLabel: "support", v1alpha1.RevisionLabel: "7c9f8d6b5"}}}
	judged.Spec.SystemVersionID = "v42"
	judged.Status.Verdict = "Failed"
	judged.Status.Metrics = []v1alpha1.MetricResult{
		{Name: "exact", PassRate: ptr.To(0.75)},
		{Name: "tone"}, // no scores: no ratio
	}
	running := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "v43"}}
	byHand := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "by-hand"}}
	byHand.Status.Verdict = "Passed"
	// A gate's run names its SystemVersion: the id it sent is in its status.
	linked := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "support-8kq2x"}}
	linked.Spec.SystemVersionRef = &v1alpha1.ObjectRef{Name: "support-a5d1df9b7e"}
	linked.Status.SystemVersionID = "0b9c3f7e-4d2a-4c1e-9f3b-2a6d8e1c5b70"
	linked.Status.Verdict = "Passed"
	want := `
# HELP evaloperator_evaluationrun_pass_ratio A judged EvaluationRun's pass ratio of one Metric: passed over scored records.
# TYPE evaloperator_evaluationrun_pass_ratio gauge
evaloperator_evaluationrun_pass_ratio{canary="support",metric="exact",name="support-2dhll",namespace="team-a",revision="7c9f8d6b5",system_version="v42"} 0.75
# HELP evaloperator_evaluationrun_verdict 1 for a judged EvaluationRun's verdict (Passed, Failed or Inconclusive).
# TYPE evaloperator_evaluationrun_verdict gauge
evaloperator_evaluationrun_verdict{canary="support",name="support-2dhll",namespace="team-a",revision="7c9f8d6b5",system_version="v42",verdict="Failed"} 1
evaloperator_evaluationrun_verdict{canary="",name="by-hand",namespace="team-a",revision="",system_version="",verdict="Passed"} 1
evaloperator_evaluationrun_verdict{canary="",name="support-8kq2x",namespace="team-a",revision="",system_version="0b9c3f7e-4d2a-4c1e-9f3b-2a6d8e1c5b70",verdict="Passed"} 1
`
	if err := testutil.CollectAndCompare(NewRunCollector(reader(t, judged, running, byHand, linked)), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
