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

package main

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// existsFunc says whether an object of kind is in the cluster.
type existsFunc func(ctx context.Context, kind, namespace, name string) (bool, error)

// checkRefs marks each admitted EvaluationRun invalid whose testsetRef or
// metricRefs name a Testset or Metric of its namespace that is neither among
// the manifests nor, when inCluster is set, in the cluster.
func checkRefs(ctx context.Context, res checkResult, inCluster existsFunc) error {
	r := refChecker{names: map[string]map[string][]string{}, inCluster: inCluster}
	for _, c := range res.objects {
		kind, ns := c.Object.GetKind(), c.Object.GetNamespace()
		if r.names[kind] == nil {
			r.names[kind] = map[string][]string{}
		}
		r.names[kind][ns] = append(r.names[kind][ns], c.Object.GetName())
	}
	for i := range res.objects {
		c := &res.objects[i]
		if c.err != nil || c.Object.GetKind() != "EvaluationRun" {
			continue
		}
		var run v1alpha1.EvaluationRun
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.stored.Object, &run); err != nil {
			return err
		}
		ns := c.Object.GetNamespace()
		var errs field.ErrorList
		spec := field.NewPath("spec")
		if run.Spec.TestsetRef != nil {
			e, err := r.missing(ctx, spec.Child("testsetRef", "name"), "Testset", ns, run.Spec.TestsetRef.Name)
			if err != nil {
				return err
			}
			errs = append(errs, e...)
		}
		for j, ref := range run.Spec.MetricRefs {
			e, err := r.missing(ctx, spec.Child("metricRefs").Index(j).Child("name"), "Metric", ns, ref.Name)
			if err != nil {
				return err
			}
			errs = append(errs, e...)
		}
		if len(errs) > 0 {
			c.err = apierrors.NewInvalid(c.Object.GroupVersionKind().GroupKind(), c.Object.GetName(), errs)
		}
	}
	return nil
}

// refChecker finds the objects a run names.
type refChecker struct {
	// names are the manifests' objects by kind and namespace.
	names     map[string]map[string][]string
	inCluster existsFunc
}

// missing is the error at path when no object of kind, namespace and name
// is among the manifests or, with inCluster, in the cluster.
func (r refChecker) missing(ctx context.Context, path *field.Path, kind, namespace, name string) (field.ErrorList, error) {
	if slices.Contains(r.names[kind][namespace], name) {
		return nil, nil
	}
	place := "among the manifests"
	if r.inCluster != nil {
		found, err := r.inCluster(ctx, kind, namespace, name)
		if err != nil || found {
			return nil, err
		}
		place = "among the manifests or in the cluster"
	}
	e := field.NotFound(path, name)
	e.Detail = fmt.Sprintf("no %s of namespace %s %s", kind, namespace, place)
	if namespace == "" {
		e.Detail = fmt.Sprintf("no %s without a namespace %s", kind, place)
	}
	if like := similar(name, r.names[kind][namespace]); like != "" {
		e.Detail += fmt.Sprintf("; did you mean %q?", like)
	}
	return field.ErrorList{e}, nil
}

// liveExists looks an object of ours up in the cluster.
func liveExists(c client.Client) existsFunc {
	return func(ctx context.Context, kind, namespace, name string) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind))
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("reading %s %s/%s from the cluster: %w", kind, namespace, name, err)
		}
		return true, nil
	}
}

// similar is the name among names nearest to name, if a typo away (at most
// two edits, and fewer than half its length), else "".
func similar(name string, names []string) string {
	best, bestDist := "", min(3, (len(name)+1)/2)
	for _, n := range names {
		if d := editDistance(name, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
