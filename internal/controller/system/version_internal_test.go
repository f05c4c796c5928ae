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

package system

import (
	"context"
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

const systemUUID = "0b6f5a54-3c1e-4c56-9f5e-6f2b8f1f3a10"

func readySystem() *v1alpha1.System {
	s := &v1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "chat"}}
	s.Status.ID = systemUUID
	kit.SetConditions(&s.Status.Conditions, 0, kit.Ready(v1alpha1.ReasonCreated, "created"))
	return s
}

// A version's reconcile reads its System once: the service it connects
// through and the id it upserts in are of the same read, so a System that
// turns Ready, or goes, between two reads cannot split them.
func TestVersionReadsItsSystemOnce(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	v := &v1alpha1.SystemVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "v1", Generation: 1},
		Spec: v1alpha1.SystemVersionSpec{SystemRef: v1alpha1.ObjectRef{Name: "chat"},
			Config: apiextensionsv1.JSON{Raw: []byte(`{"model":"m"}`)}}}
	reads := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(v).WithObjects(v, readySystem()).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey,
			obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*v1alpha1.System); ok {
				if reads++; reads > 1 {
					// Gone since the first read.
					return apierrors.NewNotFound(schema.GroupResource{Resource: "systems"}, key.Name)
				}
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	b := kit.Base{Client: c, Reader: c, Recorder: &events.FakeRecorder{}, Connector: remote.NewConnector(c, remote.Defaults{})}
	life := (&VersionReconciler{Base: b}).lifecycle()
	if _, err := life.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(v)}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if reads != 1 {
		t.Errorf("the System was read %d times in one reconcile, want once", reads)
	}
	got := &v1alpha1.SystemVersion{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(v), got); err != nil {
		t.Fatal(err)
	}
	ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || got.Status.SystemID != systemUUID {
		t.Errorf("Ready %v in System %q, want upserted in %s, the System its reconcile read", ready, got.Status.SystemID, systemUUID)
	}
}

func TestWaitForSystem(t *testing.T) {
	notReady := readySystem()
	notReady.Status.Conditions = nil
	noID := readySystem()
	noID.Status.ID = ""
	readErr := errors.New("connection refused")
	cases := map[string]struct {
		s       *v1alpha1.System
		err     error
		wait    bool
		message string
		wantErr error
	}{
		"missing":      {nil, apierrors.NewNotFound(schema.GroupResource{Resource: "systems"}, "chat"), true, "System chat does not exist", nil},
		"unreadable":   {nil, readErr, true, "reading System chat", readErr},
		"not Ready":    {notReady, nil, true, "System chat is not Ready", nil},
		"no remote id": {noID, nil, true, "System chat is not Ready", nil},
		"Ready":        {readySystem(), nil, false, "", nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, wait, err := waitForSystem("chat", tc.s, tc.err)
			if wait != tc.wait || o.Message != tc.message {
				t.Errorf("waits %v with %q, want %v with %q", wait, o.Message, tc.wait, tc.message)
			}
			if wait && o.Reason != v1alpha1.ReasonSystemNotReady {
				t.Errorf("reason %s, want %s", o.Reason, v1alpha1.ReasonSystemNotReady)
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}
