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

package controller

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/evalrun"
	"github.com/eval-operator/eval-operator/internal/controller/metric"
	"github.com/eval-operator/eval-operator/internal/controller/oneshot"
)

// CacheOptions are the manager's cache options; cmd/main.go and the tests'
// managers both use them, so the tests cache what production caches.
// namespaces, when not empty, are the only namespaces the cache lists and
// watches (--watch-namespaces); empty means all.
func CacheOptions(namespaces []string) cache.Options {
	opts := cache.Options{
		// managedFields are never read here; dropping them from the cache
		// saves a third of the memory with many objects.
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			// The Secret watch is metadata only, but a Secret's annotations
			// can hold its data: `kubectl apply` writes the whole Secret into
			// kubectl.kubernetes.io/last-applied-configuration.
			&corev1.Secret{}: {Transform: stripAnnotations},
			// The ConfigMap watch (Testsets' sources) is metadata only too,
			// and kubectl apply copies a ConfigMap's data into an annotation.
			&corev1.ConfigMap{}: {Transform: stripAnnotations},
			// A settled Metric is cached without its prompt, so memory does
			// not grow with prompt size.
			&v1alpha1.Metric{}: {Transform: metric.CacheTransform()},
			// A finished bulk deletion is cached without its ids.
			&v1alpha1.TestcaseDeletion{}: {Transform: oneshot.CacheTransform()},
			// An EvaluationRun is cached without its executor's template,
			// which only the run's create and its Job's read.
			&v1alpha1.EvaluationRun{}: {Transform: evalrun.CacheTransform()},
			// Only the EvaluationRuns' executor Jobs, not every Job of the cluster.
			&batchv1.Job{}: {Label: executorJobs},
		},
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = make(map[string]cache.Config, len(namespaces))
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// stripAnnotations drops a cached Secret's or ConfigMap's annotations and its
// managedFields (never read), keeping what the watch maps from: name,
// namespace and labels.
func stripAnnotations(in any) (any, error) {
	if obj, err := meta.Accessor(in); err == nil {
		obj.SetAnnotations(nil)
		obj.SetManagedFields(nil)
	}
	return in, nil
}

// executorJobs selects the executor Jobs of EvaluationRuns.
var executorJobs = func() labels.Selector {
	req, err := labels.NewRequirement(evalrun.ExecutorLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key
	}
	return labels.NewSelector().Add(*req)
}()
