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
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// An executor template is schemaless in the CRD, so nothing bounds it below
// the API server's request limit (1.5 MiB), and only two steps of a run's
// life read it: the check before the run is created and the Job's create.
// The cache keeps every EvaluationRun without it, so the manager's memory
// does not grow with the templates tenants store. A trimmed copy keeps
// spec.executor (a run with an executor still says so) and is marked with
// trimcache.TrimmedAnnotation; the reconciler reads the template from the
// API server before those two steps, and its client (trimcache.Guard)
// refuses any write that would send the trimmed spec back.

// CacheTransform is the cache transform of EvaluationRuns (cache.ByObject):
// it strips managedFields, as the default transform does for every object,
// and the executor's template.
func CacheTransform() toolscache.TransformFunc {
	return trimcache.TrimTransform(func(e *v1alpha1.EvaluationRun) bool {
		if e.Spec.Executor == nil {
			return false
		}
		e.Spec.Executor.Template = corev1.PodTemplateSpec{}
		return true
	})
}

// wholeExecutor gives a trimmed e its executor's template, read from the API
// server; a run that is whole already costs no read. The spec is immutable,
// so the template read belongs to e as long as the run is the same object.
func (r *Reconciler) wholeExecutor(ctx context.Context, e *v1alpha1.EvaluationRun) error {
	if !trimcache.Trimmed(e) {
		return nil
	}
	whole := &v1alpha1.EvaluationRun{}
	if err := trimcache.Read(ctx, r.Reader, e, whole); err != nil {
		return err
	}
	if whole.UID != e.UID {
		return fmt.Errorf("EvaluationRun %s/%s was replaced by another of its name", e.Namespace, e.Name)
	}
	e.Spec.Executor = whole.Spec.Executor
	delete(e.Annotations, trimcache.TrimmedAnnotation)
	return nil
}
