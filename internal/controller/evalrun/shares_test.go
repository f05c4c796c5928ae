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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

func sharedRun(parallelism *int32) *v1alpha1.EvaluationRun {
	return &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "nightly"},
		Spec: v1alpha1.EvaluationRunSpec{Executor: &v1alpha1.Executor{Parallelism: parallelism,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "exec"}}}}}}}
}

func TestExecutorJobSpreadsOverIndexedPods(t *testing.T) {
	env := executorEnv{url: "http://api", runID: "run-1", secret: "key", key: "apiKey"}
	one := executorJob(sharedRun(nil), env, sharedRun(nil).Spec.Executor.Template)
	if one.Spec.CompletionMode != nil || ptr.Deref(one.Spec.BackoffLimit, -1) != 0 || one.Spec.BackoffLimitPerIndex != nil {
		t.Fatalf("a run without parallelism got %+v, want one Pod and backoffLimit 0", one.Spec)
	}
	e := sharedRun(ptr.To[int32](4))
	job := executorJob(e, env, e.Spec.Executor.Template)
	s := job.Spec
	if ptr.Deref(s.CompletionMode, "") != batchv1.IndexedCompletion || ptr.Deref(s.Completions, 0) != 4 ||
		ptr.Deref(s.Parallelism, 0) != 4 || ptr.Deref(s.BackoffLimitPerIndex, -1) != 0 || s.BackoffLimit != nil {
		t.Fatalf("job spec %+v, want 4 Indexed completions at once, each tried once", s)
	}
	if env := s.Template.Spec.Containers[0].Env; env[len(env)-1] != (corev1.EnvVar{Name: EnvShares, Value: "4"}) {
		t.Fatalf("env %v lacks %s=4", env, EnvShares)
	}
}

func TestFailedShares(t *testing.T) {
	e := sharedRun(ptr.To[int32](4))
	job := executorJob(e, executorEnv{}, e.Spec.Executor.Template)
	if got := failedShares(job); got != "" {
		t.Errorf("no failed index: %q", got)
	}
	job.Status.FailedIndexes = ptr.To("1,3")
	if got, want := failedShares(job), "; share(s) 1,3 of 4 failed (their Pods' logs say why)"; got != want {
		t.Errorf("failedShares = %q, want %q", got, want)
	}
}
