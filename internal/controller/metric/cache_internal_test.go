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

package metric

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// settledMetric is a Metric Ready at its generation under id met_1, with
// its texts in spec and status.
func settledMetric() *v1alpha1.Metric {
	m := &v1alpha1.Metric{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", Generation: 1,
			Annotations: map[string]string{v1alpha1.MetricIDAnnotation: "met_1"}},
		Spec: v1alpha1.MetricSpec{ProjectID: "p", Name: "judge", EvalType: "ai", OutputType: "int",
			PromptTemplate: ptr.To[v1alpha1.Text]("a long prompt {{outputs.response}}"), Guidelines: ptr.To[v1alpha1.Text]("g"),
			Description: ptr.To[v1alpha1.Text]("d")},
	}
	convert.SetStatus(&m.Status, evalapi.ResponseFor("met_1", convert.RequestFor(&m.Spec)))
	kit.SetConditions(&m.Status.Conditions, 1, kit.Ready(v1alpha1.ReasonCreated, "created"))
	return m
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func transformed(t *testing.T, m *v1alpha1.Metric) *v1alpha1.Metric {
	t.Helper()
	out, err := CacheTransform()(m)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*v1alpha1.Metric)
}

func TestMetricCacheTransformTrimsOnlySettledMetrics(t *testing.T) {
	m := transformed(t, settledMetric())
	if !trimcache.Trimmed(m) || m.Spec.PromptTemplate != nil || m.Spec.Guidelines != nil || m.Spec.Description != nil ||
		m.Status.Guidelines != nil || m.Status.Description != nil {
		t.Errorf("a settled Metric is cached with its texts: %+v", m)
	}
	if m.Spec.Name != "judge" || m.Status.ID != "met_1" {
		t.Errorf("trimming lost more than the texts: %+v", m)
	}

	cases := map[string]func(*v1alpha1.Metric){
		"spec changed since":   func(m *v1alpha1.Metric) { m.Generation = 2 },
		"no id recorded yet":   func(m *v1alpha1.Metric) { m.Annotations = nil; m.Status.ID = "" },
		"id not in status yet": func(m *v1alpha1.Metric) { m.Status.ID = "" },
		"create pending": func(m *v1alpha1.Metric) {
			m.Annotations[v1alpha1.CreatePendingAnnotation] = "2026-01-01T00:00:00Z"
		},
		"stalled": func(m *v1alpha1.Metric) {
			kit.SetConditions(&m.Status.Conditions, 1, kit.Stalled(v1alpha1.ReasonRemoteNotFound, "404"))
		},
	}
	for name, edit := range cases {
		m := settledMetric()
		edit(m)
		if m = transformed(t, m); trimcache.Trimmed(m) || m.Spec.PromptTemplate == nil {
			t.Errorf("%s: trimmed, though a reconcile may need the texts", name)
		}
	}
}

func TestMetricCacheTransformTrimsLongTextsAtOnce(t *testing.T) {
	long := func(m *v1alpha1.Metric, n int) *v1alpha1.Metric {
		m.Spec.PromptTemplate = ptr.To(v1alpha1.Text(strings.Repeat("p", n)))
		m.Annotations, m.Status = nil, v1alpha1.MetricStatus{} // new: nothing recorded yet
		return m
	}
	if m := transformed(t, long(settledMetric(), cachedTextLimit-2)); trimcache.Trimmed(m) {
		t.Errorf("a new Metric with %d bytes of text is trimmed; only longer texts are", m.TextBytes())
	}
	if m := transformed(t, long(settledMetric(), cachedTextLimit)); !trimcache.Trimmed(m) || m.Spec.PromptTemplate != nil {
		t.Errorf("a new Metric with texts over %d bytes is cached with them", cachedTextLimit)
	}
}

func TestTrimGuardNeverSendsATrimmedSpec(t *testing.T) {
	ctx := context.Background()
	whole := settledMetric()
	c := trimcache.Guard(fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(whole.DeepCopy()).
		WithStatusSubresource(&v1alpha1.Metric{}).Build())
	cached := func() *v1alpha1.Metric {
		m := &v1alpha1.Metric{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(whole), m); err != nil {
			t.Fatal(err)
		}
		return transformed(t, m)
	}

	if err := c.Update(ctx, cached()); !errors.Is(err, trimcache.ErrTrimmedWrite) {
		t.Errorf("Update of a trimmed Metric: %v, want it refused", err)
	}
	m := cached()
	withPrompt := m.DeepCopy()
	withPrompt.Spec.PromptTemplate = ptr.To[v1alpha1.Text]("a long prompt {{outputs.response}}")
	if err := c.Patch(ctx, m, client.MergeFrom(withPrompt)); !errors.Is(err, trimcache.ErrTrimmedWrite) {
		t.Errorf("a patch that would erase the prompt: %v, want it refused", err)
	}

	// What the reconcilers patch on a trimmed Metric goes through, and keeps the texts.
	m = cached()
	before := m.DeepCopy()
	m.Finalizers = append(m.Finalizers, v1alpha1.MetricFinalizer)
	if err := c.Patch(ctx, m, client.MergeFrom(before)); err != nil {
		t.Errorf("finalizer patch of a trimmed Metric: %v", err)
	}
	if err := kit.PatchAnnotations(ctx, c, cached(), map[string]any{v1alpha1.RetryAnnotation: "1"}); err != nil {
		t.Errorf("annotation patch of a trimmed Metric: %v", err)
	}
	stored := &v1alpha1.Metric{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(whole), stored); err != nil {
		t.Fatal(err)
	}
	if trimcache.Trimmed(stored) || *stored.Spec.PromptTemplate != *whole.Spec.PromptTemplate ||
		*stored.Spec.Guidelines != "g" || *stored.Spec.Description != "d" {
		t.Errorf("the stored Metric lost its texts or gained the marker: %+v", stored)
	}
}
