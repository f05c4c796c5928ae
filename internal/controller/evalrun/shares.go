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
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// EnvShares tells an executor's Pods how many shares the run is spread
// over; the Job controller sets each Pod's JOB_COMPLETION_INDEX.
const EnvShares = "EVAL_SHARES"

// spread makes job run e's executor as spec.executor.parallelism Pods at
// once, one per share: an Indexed Job whose failed share is not tried
// again (it could write its records twice) while the others go on.
func spread(job *batchv1.Job, e *v1alpha1.EvaluationRun) {
	n := ptr.Deref(e.Spec.Executor.Parallelism, 1)
	if n <= 1 {
		return
	}
	job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	job.Spec.Completions, job.Spec.Parallelism = ptr.To(n), ptr.To(n)
	job.Spec.BackoffLimit, job.Spec.BackoffLimitPerIndex = nil, ptr.To[int32](0)
	shares := corev1.EnvVar{Name: EnvShares, Value: strconv.Itoa(int(n))}
	for i := range job.Spec.Template.Spec.Containers {
		c := &job.Spec.Template.Spec.Containers[i]
		c.Env = append(c.Env, shares)
	}
}

// failedShares names the shares of an Indexed Job that failed, for the
// verdict's message: "; share(s) 1,3 of 4 failed".
func failedShares(job *batchv1.Job) string {
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion ||
		ptr.Deref(job.Status.FailedIndexes, "") == "" {
		return ""
	}
	return fmt.Sprintf("; share(s) %s of %d failed (their Pods' logs say why)", *job.Status.FailedIndexes,
		ptr.Deref(job.Spec.Completions, 1))
}
