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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// patcherFixture is a Metric stored in a fake API server that counts status
// patches, as a reconcile would find it: Ready for its generation.
type patcherFixture struct {
	b       *Base
	metric  *v1alpha1.Metric
	patches int
	events  chan string
}

func newPatcherFixture(t *testing.T) *patcherFixture {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	m := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", Generation: 1}}
	SetConditions(&m.Status.Conditions, 1, Ready(v1alpha1.ReasonCreated, "created"))
	m.Status.ObservedGeneration = 1
	f := &patcherFixture{events: make(chan string, 10)}
	f.b = &Base{
		Client: fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(m).WithObjects(m).
			WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client,
				sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				f.patches++
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			}}).Build(),
		Recorder: &events.FakeRecorder{Events: f.events},
	}
	f.metric = f.get(t)
	return f
}

func (f *patcherFixture) get(t *testing.T) *v1alpha1.Metric {
	t.Helper()
	m := &v1alpha1.Metric{}
	if err := f.b.Client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "m"}, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (f *patcherFixture) finish(t *testing.T, p *StatusPatcher, o Outcome) {
	t.Helper()
	if _, err := p.Finish(context.Background(), o, ctrl.Result{}, nil); err != nil {
		t.Fatalf("Finish: %v", err)
	}
}

func TestStatusPatcherWritesNothingWithoutChange(t *testing.T) {
	f := newPatcherFixture(t)
	f.finish(t, f.b.NewStatusPatcher(f.metric), Ready(v1alpha1.ReasonCreated, "created"))
	if f.patches != 0 || len(f.events) != 0 {
		t.Errorf("%d patches and %d events, want none", f.patches, len(f.events))
	}
}

func TestStatusPatcherEmitsEventOnlyWhenReadyChanges(t *testing.T) {
	cases := []struct {
		name    string
		o       Outcome
		patches int
		events  int
	}{
		{"new reason", Progressing(v1alpha1.ReasonUpstreamUnavailable, "503"), 1, 1},
		{"same reason, new message", Ready(v1alpha1.ReasonCreated, "created again"), 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newPatcherFixture(t)
			f.finish(t, f.b.NewStatusPatcher(f.metric), tc.o)
			if f.patches != tc.patches || len(f.events) != tc.events {
				t.Errorf("%d patches and %d events, want %d and %d", f.patches, len(f.events), tc.patches, tc.events)
			}
			got := meta.FindStatusCondition(f.get(t).Status.Conditions, v1alpha1.ConditionReady)
			if got.Reason != tc.o.Reason || got.Message != tc.o.Message {
				t.Errorf("stored Ready = %s %q, want %s %q", got.Reason, got.Message, tc.o.Reason, tc.o.Message)
			}
		})
	}
}

func TestStatusPatcherCheckpointMovesTheSnapshot(t *testing.T) {
	f := newPatcherFixture(t)
	p := f.b.NewStatusPatcher(f.metric)
	deleting := Progressing(v1alpha1.ReasonDeleting, "deleted 100 of 200 testcases")
	if err := p.Checkpoint(context.Background(), deleting); err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	f.finish(t, p, deleting)
	if f.patches != 1 || len(f.events) != 1 {
		t.Errorf("%d patches and %d events, want 1 and 1: Finish has nothing new to write", f.patches, len(f.events))
	}
}

func TestStatusPatcherAfterTheReconcileWroteTheObject(t *testing.T) {
	f := newPatcherFixture(t)
	p := f.b.NewStatusPatcher(f.metric)
	// As a create does: the Update moves the resourceVersion past the snapshot's.
	f.metric.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: "t"}
	if err := f.b.Client.Update(context.Background(), f.metric); err != nil {
		t.Fatal(err)
	}
	f.metric.Status.ID = "met_1"
	f.finish(t, p, Ready(v1alpha1.ReasonCreated, "created"))
	if got := f.get(t).Status.ID; got != "met_1" {
		t.Errorf("stored status.id = %q, want met_1", got)
	}
}

func TestStatusPatcherRefusesToOverwriteANewerStatus(t *testing.T) {
	f := newPatcherFixture(t)
	p := f.b.NewStatusPatcher(f.metric)
	newer := f.get(t)
	newer.Status.ID = "met_newer"
	if err := f.b.Client.Status().Update(context.Background(), newer); err != nil {
		t.Fatal(err)
	}
	_, err := p.Finish(context.Background(), Progressing(v1alpha1.ReasonUpstreamUnavailable, "503"), ctrl.Result{}, nil)
	if err == nil {
		t.Fatal("Finish from a stale copy succeeded, want a conflict")
	}
	if got := f.get(t).Status.ID; got != "met_newer" {
		t.Errorf("stored status.id = %q, want the newer met_newer", got)
	}
}

func TestStatusPatcherLogsTheDecision(t *testing.T) {
	f := newPatcherFixture(t)
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	ctx := ctrl.LoggerInto(context.Background(), log)
	o := Progressing(v1alpha1.ReasonUpstreamUnavailable, "503")
	if _, err := f.b.NewStatusPatcher(f.metric).Finish(ctx, o, ctrl.Result{RequeueAfter: 7e9}, nil); err != nil {
		t.Fatal(err)
	}
	want := `"msg"="Reconciled" "phase"="Progressing" "reason"="UpstreamUnavailable" "requeueAfter"="7s" "backoff"=false`
	if len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("logged %q, want one line with %s", lines, want)
	}
}

// A first create held back until the cache shows the namespace's service
// writes nothing: no status, no event, no error; it comes back when told.
func TestStatusPatcherWaitsForTheCache(t *testing.T) {
	f := newPatcherFixture(t)
	p := f.b.NewStatusPatcher(f.metric)
	p.Resolved("ClusterEvaluationService/default")
	lag := fmt.Errorf("creating: %w", &remote.CacheLag{After: time.Second, Service: "EvaluationService/default"})
	res, err := p.Finish(context.Background(), Progressing(v1alpha1.ReasonUpstreamUnavailable, lag.Error()), ctrl.Result{}, lag)
	if err != nil || res.RequeueAfter != time.Second {
		t.Errorf("Finish = %+v, %v; want a requeue after 1s and no error", res, err)
	}
	if f.patches != 0 || len(f.events) != 0 {
		t.Errorf("%d patches and %d events, want none", f.patches, len(f.events))
	}
}
