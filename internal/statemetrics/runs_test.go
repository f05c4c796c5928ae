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
	judged := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "v42"}}
	judged.Status.Verdict = "Failed"
	judged.Status.Metrics = []v1alpha1.MetricResult{
		{Name: "exact", PassRate: ptr.To(0.75)},
		{Name: "tone"}, // no scores: no ratio
	}
	running := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "v43"}}
	want := `
# HELP evaloperator_evaluationrun_pass_ratio A judged EvaluationRun's pass ratio of one Metric: passed over scored records.
# TYPE evaloperator_evaluationrun_pass_ratio gauge
evaloperator_evaluationrun_pass_ratio{metric="exact",name="v42",namespace="team-a"} 0.75
# HELP evaloperator_evaluationrun_verdict 1 for a judged EvaluationRun's verdict (Passed, Failed or Inconclusive).
# TYPE evaloperator_evaluationrun_verdict gauge
evaloperator_evaluationrun_verdict{name="v42",namespace="team-a",verdict="Failed"} 1
`
	if err := testutil.CollectAndCompare(NewRunCollector(reader(t, judged, running)), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
