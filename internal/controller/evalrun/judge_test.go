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
	"strings"
	"testing"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

func TestJudgeBudgetSpentAndScoredBy(t *testing.T) {
	e := &v1alpha1.EvaluationRun{}
	if got := judgeBudgetSpent(e) + scoredBy(e); got != "" {
		t.Errorf("a run no judge scored: %q, want nothing", got)
	}
	e.Status.Judge = &v1alpha1.JudgeStatus{Service: "EvaluationService/default", Endpoint: "vllm:8000",
		Models: []string{"gpt-4o=qwen"}, Requests: 7}
	if got := judgeBudgetSpent(e); got != "" {
		t.Errorf("a judge within its budget: %q, want nothing", got)
	}
	if got, want := scoredBy(e), "; AI Metrics scored by the judge of EvaluationService/default (vllm:8000, model gpt-4o=qwen)"; got != want {
		t.Errorf("scoredBy = %q, want %q", got, want)
	}
	e.Status.Judge.BudgetSpent = true
	if got := judgeBudgetSpent(e); !strings.HasPrefix(got, "JudgeBudgetSpent: ") || !strings.Contains(got, "after 7 requests") {
		t.Errorf("a spent budget: %q, want the reason and the requests", got)
	}
}
