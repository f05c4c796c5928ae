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

package kit

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// lifecycleFixture runs the stored Metric of a patcherFixture through a
// Lifecycle on the standalone service, recording the stages its kind's
// parts were called in.
type lifecycleFixture struct {
	*patcherFixture
	life  *Lifecycle[*v1alpha1.Metric, remote.MetricClient]
	calls []string
}

func newLifecycleFixture(t *testing.T, edit func(*v1alpha1.Metric)) *lifecycleFixture {
	t.Helper()
	f := &lifecycleFixture{patcherFixture: newPatcherFixture(t)}
	edit(f.metric)
	if err := f.b.Client.Update(context.Background(), f.metric); err != nil {
		t.Fatal(err)
	}
	f.b.Connector = remote.NewConnector(f.b.Client, remote.Defaults{})
	step := func(name string, o Outcome) func(context.Context, *Scope[*v1alpha1.Metric, remote.MetricClient]) (
		Outcome, ctrl.Result, error) {
		return func(context.Context, *Scope[*v1alpha1.Metric, remote.MetricClient]) (Outcome, ctrl.Result, error) {
			f.calls = append(f.calls, name)
			return o, ctrl.Result{}, nil
		}
	}
	f.life = &Lifecycle[*v1alpha1.Metric, remote.MetricClient]{Base: *f.b,
		New:            func() *v1alpha1.Metric { return &v1alpha1.Metric{} },
		ClientFor:      (*remote.Connection).Metric,
		Remote:         &MetricIDs,
		NeedsFinalizer: remote.MetricClient.NeedsFinalizer,
		Finalize:       step("finalize", Progressing(v1alpha1.ReasonDeletingRemote, "deleting")),
		Claim: func(_ context.Context, s *Scope[*v1alpha1.Metric, remote.MetricClient]) (Outcome, bool, error) {
			f.calls = append(f.calls, "claim")
			return Stalled(v1alpha1.ReasonMetricIDClaimed, "claimed"), s.Obj.Annotations["claimed"] != "", nil
		},
		Steps: step("steps", Ready(v1alpha1.ReasonSynced, "synced")),
	}
	return f
}

func (f *lifecycleFixture) reconcile(t *testing.T) *v1alpha1.Metric {
	t.Helper()
	if _, err := f.life.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "m"}}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return f.get(t)
}

func TestLifecycleRunsTheStagesInOrder(t *testing.T) {
	f := newLifecycleFixture(t, func(*v1alpha1.Metric) {})
	m := f.reconcile(t)
	if !slices.Equal(f.calls, []string{"claim", "steps"}) {
		t.Errorf("stages %v, want claim, steps", f.calls)
	}
	if got := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady).Reason; got != v1alpha1.ReasonSynced || f.patches != 1 {
		t.Errorf("Ready %s after %d status patches, want Synced after one", got, f.patches)
	}
}

func TestLifecycleStopsBeforeTheKindsSteps(t *testing.T) {
	cases := map[string]struct {
		edit   func(*v1alpha1.Metric)
		calls  []string
		reason string
	}{
		"paused": {func(m *v1alpha1.Metric) { m.Annotations = map[string]string{v1alpha1.PausedAnnotation: "true"} },
			nil, v1alpha1.ReasonPaused},
		"remote id of another service": {func(m *v1alpha1.Metric) {
			m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: "met_1", v1alpha1.ServiceAnnotation: "https://other"}
		}, nil, v1alpha1.ReasonServiceChanged},
		"claim refused": {func(m *v1alpha1.Metric) { m.Annotations = map[string]string{"claimed": "yes"} },
			[]string{"claim"}, v1alpha1.ReasonMetricIDClaimed},
		"being deleted": {func(m *v1alpha1.Metric) { m.Finalizers = []string{v1alpha1.MetricFinalizer} },
			[]string{"finalize"}, v1alpha1.ReasonDeletingRemote},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newLifecycleFixture(t, tc.edit)
			if name == "being deleted" {
				if err := f.b.Client.Delete(context.Background(), f.metric); err != nil {
					t.Fatal(err)
				}
			}
			m := f.reconcile(t)
			if !slices.Equal(f.calls, tc.calls) {
				t.Errorf("stages %v, want %v", f.calls, tc.calls)
			}
			if got := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady).Reason; got != tc.reason {
				t.Errorf("Ready %s, want %s", got, tc.reason)
			}
		})
	}
}

func TestLifecycleWritesNothingUnsaid(t *testing.T) {
	f := newLifecycleFixture(t, func(*v1alpha1.Metric) {})
	f.life.Steps = func(_ context.Context, s *Scope[*v1alpha1.Metric, remote.MetricClient]) (Outcome, ctrl.Result, error) {
		s.Unsaid()
		return Stalled(v1alpha1.ReasonRejected, "never written"), ctrl.Result{}, nil
	}
	if f.reconcile(t); f.patches != 0 {
		t.Errorf("%d status patches, want none", f.patches)
	}
}

func TestLifecycleLeavesAnUnconnectedObjectUnresolved(t *testing.T) {
	f := newLifecycleFixture(t, func(*v1alpha1.Metric) {})
	f.metric.Status.Service = "kept"
	if err := f.b.Client.Status().Update(context.Background(), f.metric); err != nil {
		t.Fatal(err)
	}
	f.life.Remote, f.life.NeedsFinalizer = nil, nil
	// Connected through another object that is not ready: that object
	// reaches the steps as read, so they need not read it again.
	via := &v1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "not-ready"}}
	f.life.Connect = func(context.Context, *v1alpha1.Metric) (v1alpha1.Object, *remote.Connection, error) {
		return via, nil, nil
	}
	steps := f.life.Steps
	f.life.Steps = func(ctx context.Context, s *Scope[*v1alpha1.Metric, remote.MetricClient]) (Outcome, ctrl.Result, error) {
		if s.Conn != nil || s.Client != nil {
			t.Errorf("steps given connection %v and client %v, want none", s.Conn, s.Client)
		}
		if s.Via != via {
			t.Errorf("steps given Via %v, want the object Connect returned", s.Via)
		}
		return steps(ctx, s)
	}
	if m := f.reconcile(t); m.Status.Service != "kept" || !slices.Equal(f.calls, []string{"claim", "steps"}) {
		t.Errorf("status.service %q after stages %v, want kept after claim, steps", m.Status.Service, f.calls)
	}
}

func TestLifecycleFinalizesWithoutRemoteIDs(t *testing.T) {
	cases := map[string]struct {
		connErr   error
		calls     []string
		reason    string
		finalizer bool
	}{
		"connected": {nil, []string{"claim", "steps"}, v1alpha1.ReasonSynced, true},
		"service unusable": {&remote.ServiceError{Reason: v1alpha1.ReasonServiceNotFound, Message: "no service"},
			nil, v1alpha1.ReasonServiceNotFound, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newLifecycleFixture(t, func(*v1alpha1.Metric) {})
			f.life.Remote = nil
			f.life.NeedsFinalizer = func(remote.MetricClient) bool { return true }
			connect := f.life.Connector.Connect
			f.life.Connect = func(ctx context.Context, m *v1alpha1.Metric) (v1alpha1.Object, *remote.Connection, error) {
				conn, _ := connect(ctx, m)
				return nil, conn, tc.connErr
			}
			m := f.reconcile(t)
			if !slices.Equal(f.calls, tc.calls) {
				t.Errorf("stages %v, want %v", f.calls, tc.calls)
			}
			if got := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady).Reason; got != tc.reason {
				t.Errorf("Ready %s, want %s", got, tc.reason)
			}
			if got := slices.Contains(m.Finalizers, v1alpha1.MetricFinalizer); got != tc.finalizer {
				t.Errorf("finalizer %v, want %v (no remote id is recorded)", got, tc.finalizer)
			}
		})
	}
}
