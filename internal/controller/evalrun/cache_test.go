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
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

func runWithExecutor() *v1alpha1.EvaluationRun {
	return &v1alpha1.EvaluationRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly", UID: "u1", ResourceVersion: "7",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: v1alpha1.EvaluationRunSpec{Executor: &v1alpha1.Executor{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "system"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "system", Image: "example.com/system:1",
				Args: []string{"--model=m-2"}}}},
		}}},
	}
}

// A cached EvaluationRun keeps that it has an executor but not its template,
// is marked, and the client refuses to write it back; one without an
// executor is cached as it is.
func TestCacheTransform(t *testing.T) {
	transform := CacheTransform()
	out, err := transform(runWithExecutor())
	e := out.(*v1alpha1.EvaluationRun)
	switch {
	case err != nil:
		t.Fatal(err)
	case e.Spec.Executor == nil:
		t.Fatal("the cached run no longer says it has an executor")
	case !equality.Semantic.DeepEqual(e.Spec.Executor.Template, corev1.PodTemplateSpec{}):
		t.Fatalf("the cached run kept its template: %+v", e.Spec.Executor.Template)
	case !trimcache.Trimmed(e) || e.ManagedFields != nil:
		t.Fatalf("the cached run is not marked, or kept its managedFields: %+v", e.ObjectMeta)
	}
	if err := trimcache.Guard(nil).Update(context.Background(), e); !errors.Is(err, trimcache.ErrTrimmedWrite) {
		t.Errorf("updating a trimmed run = %v, want refused", err)
	}
	if err := trimcache.Guard(nil).Patch(context.Background(), e, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"executor":{"template":{}}}}`))); !errors.Is(err, trimcache.ErrTrimmedWrite) {
		t.Errorf("patching a trimmed run's executor = %v, want refused", err)
	}

	plain := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}
	if out, err := transform(plain); err != nil || trimcache.Trimmed(out.(*v1alpha1.EvaluationRun)) {
		t.Errorf("a run without an executor was marked: %+v %v", out, err)
	}
}

// The reconciler gives a trimmed run its template back from the API server,
// unmarked, so the create guard's write sends the spec as it is stored; a
// run of the same name but another UID is not the cached one.
func TestWholeExecutor(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	stored := runWithExecutor()
	stored.ManagedFields = nil // the fake client keeps none
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).Build()
	if err := api.Get(context.Background(), client.ObjectKeyFromObject(stored), stored); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Base: kit.Base{Reader: api}}

	out, err := CacheTransform()(stored.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	e := out.(*v1alpha1.EvaluationRun)
	if err := r.wholeExecutor(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if trimcache.Trimmed(e) || !equality.Semantic.DeepEqual(e.Spec, stored.Spec) {
		t.Fatalf("the run was not given its template back: %+v %+v", e.ObjectMeta, e.Spec.Executor)
	}

	out, _ = CacheTransform()(stored.DeepCopy())
	replaced := out.(*v1alpha1.EvaluationRun)
	replaced.UID = "u0"
	if err := r.wholeExecutor(context.Background(), replaced); err == nil || !trimcache.Trimmed(replaced) {
		t.Errorf("a replaced run was given the new one's template: %v", err)
	}
}
