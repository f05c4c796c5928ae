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
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A conflict is a requeue, not an error: controller-runtime logs every
// returned error as "Reconciler error" with a stack trace and counts it.
func TestConflictsRequeue(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "evaluation.eval-operator.dev", Resource: "metrics"}, "m",
		errors.New("the object has been modified"))
	other := errors.New("the service answered 500")
	cases := []struct {
		name    string
		res     ctrl.Result
		err     error
		wantRes ctrl.Result
		wantErr error
	}{
		{"a conflict", ctrl.Result{}, conflict, ctrl.Result{RequeueAfter: time.Second}, nil},
		{"a wrapped conflict", ctrl.Result{}, fmt.Errorf("patching status: %w", conflict), ctrl.Result{RequeueAfter: time.Second}, nil},
		{"another error", ctrl.Result{}, other, ctrl.Result{}, other},
		{"success", ctrl.Result{RequeueAfter: time.Minute}, nil, ctrl.Result{RequeueAfter: time.Minute}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inner := reconcile.Func(func(context.Context, ctrl.Request) (ctrl.Result, error) { return tc.res, tc.err })
			res, err := ConflictsRequeue{Reconciler: inner, After: time.Second}.Reconcile(context.Background(), ctrl.Request{})
			if res != tc.wantRes || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("got (%+v, %v), want (%+v, %v)", res, err, tc.wantRes, tc.wantErr)
			}
		})
	}
}
