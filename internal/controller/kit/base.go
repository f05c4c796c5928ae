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

// Package kit is what every family of reconcilers shares: the dependencies
// of a reconciler (Base), the outcome of a reconcile and the conditions it
// sets, the one status patch at its end, pausing and retrying by
// annotation, the mapping of a service's failure to an outcome, and the
// registration of a kind with its watches of Secrets and services.
package kit

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// BackoffMax is the longest delay before a failed reconcile is retried.
const BackoffMax = 5 * time.Minute

// Base holds what every reconciler of a kind needs.
type Base struct {
	// Client reads from the manager's cache and writes to the API server.
	Client   client.Client
	Recorder recorder.EventRecorder
	// Connector resolves the service each object uses.
	Connector *remote.Connector
	// Reader reads from the API server, uncached.
	Reader client.Reader
	Clock  clock.PassiveClock
	// Backoff is the first retry delay of a failed call.
	Backoff time.Duration
}

// GetLive reads the object of req into obj and reports whether there is
// anything to reconcile: not when the object is gone, nor when it is being
// deleted without the operator's finalizer (nothing is left to do).
func (b *Base) GetLive(ctx context.Context, req ctrl.Request, obj v1alpha1.Object) (bool, error) {
	log := ctrl.LoggerFrom(ctx).V(1)
	if err := b.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("Skipped: not found")
			return false, nil
		}
		return false, fmt.Errorf("reading %s: %w", req.NamespacedName, err)
	}
	if !obj.GetDeletionTimestamp().IsZero() && !controllerutil.ContainsFinalizer(obj, v1alpha1.MetricFinalizer) {
		log.Info("Skipped: being deleted")
		return false, nil
	}
	return true, nil
}
