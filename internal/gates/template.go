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

// Package gates makes the EvaluationRuns that rollouts wait on from a
// template (an EvaluationRun manifest kept in a file or a ConfigMap), and
// the SystemVersion of the release each one judges.
package gates

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// TemplateKey is the ConfigMap key a template is read from by default.
const TemplateKey = "evaluationrun.yaml"

// ErrNotEvaluationRun is a template that is not an EvaluationRun manifest.
var ErrNotEvaluationRun = errors.New("the template is not an EvaluationRun")

// FromTemplate is the run data describes, in namespace: its spec, labels and
// annotations; its name is left to the caller (Prefix is the template's).
func FromTemplate(data []byte, namespace string) (*v1alpha1.EvaluationRun, error) {
	t := &v1alpha1.EvaluationRun{}
	if err := yaml.UnmarshalStrict(data, t); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotEvaluationRun, err)
	}
	if t.Kind != "EvaluationRun" {
		return nil, fmt.Errorf("%w: its kind is %q, not EvaluationRun", ErrNotEvaluationRun, t.Kind)
	}
	return &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Name: t.Name, Namespace: namespace,
		Labels: t.Labels, Annotations: t.Annotations}, Spec: t.Spec}, nil
}

// Prefix is the generated-name prefix of the runs made from run's
// template: its name and a dash, or "gate-".
func Prefix(run *v1alpha1.EvaluationRun) string {
	if run.Name == "" {
		return "gate-"
	}
	return strings.TrimSuffix(run.Name, "-") + "-"
}
