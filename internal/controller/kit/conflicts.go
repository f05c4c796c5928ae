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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ConflictsRequeue runs a reconciler and turns an optimistic-lock conflict
// (a write based on a copy someone changed meanwhile) into a requeue after
// after: the normal course of a controller, not an error to log with a
// stack trace and count as one. The next reconcile reads the newer copy.
type ConflictsRequeue struct {
	reconcile.Reconciler
	After time.Duration
}

func (c ConflictsRequeue) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := c.Reconciler.Reconcile(ctx, req)
	if err == nil || !apierrors.IsConflict(err) {
		return res, err
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Conflict: the object changed meanwhile; reconciling again", "reason", err.Error())
	return ctrl.Result{RequeueAfter: c.After}, nil
}
