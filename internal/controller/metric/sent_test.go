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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// Two reconciles of one edit, the second from a cache that does not show
// the first's status yet, send one update: the service's deletion of a
// mistaken default enqueued a Metric twice, and CI saw the edit sent twice.
func TestAnEditIsSentOnceWhileTheCacheLags(t *testing.T) {
	ctx := context.Background()
	upstream := evalapitest.New()
	t.Cleanup(upstream.Close)
	svc, err := evalapi.NewClient(evalapi.Options{BaseURL: upstream.URL()})
	if err != nil {
		t.Fatal(err)
	}
	created, err := svc.CreateMetric(ctx, evalapitest.DefaultKey, "p", evalapitest.MinimalRequest("human", "boolean"))
	if err != nil {
		t.Fatal(err)
	}

	scheme := testScheme(t)
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "key"},
		Data: map[string][]byte{v1alpha1.DefaultAPIKeySecretKey: []byte(evalapitest.DefaultKey)}}
	kc := fake.NewClientBuilder().WithScheme(scheme).WithObjects(key).Build()
	r := &Reconciler{Base: kit.Base{Client: kc, Reader: kc, Clock: clock.RealClock{}},
		drift: kit.NewDriftSchedules(clock.RealClock{}), recovery: newRecovery(0), sent: newSentSpecs()}

	// Generation 2 edits the guidelines; the cache still shows Ready at 1.
	stale := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", UID: "uid-m", Generation: 2,
		Annotations: map[string]string{v1alpha1.MetricIDAnnotation: created.ID}},
		Spec: convert.SpecFor("p", evalapitest.MinimalRequest("human", "boolean"))}
	stale.Spec.Guidelines = ptr.To[v1alpha1.Text]("edited")
	stale.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "key"}
	stale.Status.ID = created.ID
	kit.SetConditions(&stale.Status.Conditions, 1, updated(stale, created.ID))

	conn, err := remote.NewConnector(kc, remote.Defaults{Service: svc}).Connect(ctx, stale)
	if err != nil {
		t.Fatal(err)
	}
	scopeOf := func(m *v1alpha1.Metric) *scope { return &scope{Obj: m, Conn: conn, Client: conn.Metric(m)} }
	for i := range 2 {
		o, _, err := r.syncRemote(ctx, scopeOf(stale.DeepCopy()), created.ID)
		if err != nil || o.Reason != v1alpha1.ReasonUpdated {
			t.Fatalf("reconcile %d: %v, %v", i, o, err)
		}
	}
	if n := upstream.Calls(evalapitest.OpUpdateMetric); n != 1 {
		t.Errorf("%d updates sent for one edit, want 1", n)
	}

	// Once the cache shows it synced, the next edit is sent.
	synced := stale.DeepCopy()
	kit.SetConditions(&synced.Status.Conditions, 2, updated(synced, created.ID))
	if _, _, err := r.syncRemote(ctx, scopeOf(synced), created.ID); err != nil {
		t.Fatal(err)
	}
	next := synced.DeepCopy()
	next.Generation = 3
	if _, _, err := r.syncRemote(ctx, scopeOf(next), created.ID); err != nil {
		t.Fatal(err)
	}
	if n := upstream.Calls(evalapitest.OpUpdateMetric); n != 2 {
		t.Errorf("%d updates sent for two edits, want 2", n)
	}
}
