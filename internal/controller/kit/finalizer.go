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
	"maps"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// SyncFinalizer adds the remote-deletion finalizer to an object that wants
// it and has, or may have, a remote copy (adopted, or replaced without its
// metadata), and removes it where it has no use. An object that is right
// already costs no write; a new object gets it with its create-pending mark.
func SyncFinalizer(ctx context.Context, c client.Client, obj client.Object, wants, mayHaveRemote bool) error {
	has := controllerutil.ContainsFinalizer(obj, v1alpha1.MetricFinalizer)
	switch {
	case has && !wants:
		return PatchFinalizer(ctx, c, obj, controllerutil.RemoveFinalizer)
	case !has && wants && mayHaveRemote:
		return PatchFinalizer(ctx, c, obj, controllerutil.AddFinalizer)
	}
	return nil
}

// PatchFinalizer adds or removes the finalizer with a patch that fails on a
// stale resourceVersion, so that it never overwrites another's finalizers.
func PatchFinalizer(ctx context.Context, c client.Client, obj client.Object, edit func(client.Object, string) bool) error {
	before := obj.DeepCopyObject().(client.Object)
	edit(obj, v1alpha1.MetricFinalizer)
	err := c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("updating the finalizers: %w", err)
	}
	return nil
}

// MarkPending records the create-pending annotation and the service the
// create goes to, and the finalizer when deletesRemote, before a create that
// could leave a duplicate. A merge patch of the metadata alone, conditional
// on obj's resourceVersion: two workers holding different views of obj
// cannot both send the create, and the spec is never written back, so the
// API server's defaults (a field the object left out) cannot make it differ
// from the stored one and trip an immutability rule. The same write adds the
// finalizer: from here on a remote copy may exist, and the write drops the
// recreate annotation.
func MarkPending(ctx context.Context, c client.Client, clk clock.PassiveClock, obj client.Object, endpoint string,
	deletesRemote bool) error {
	before := obj.DeepCopyObject().(client.Object)
	annotations := maps.Clone(obj.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[v1alpha1.CreatePendingAnnotation] = clk.Now().UTC().Format(time.RFC3339)
	annotations[v1alpha1.ServiceAnnotation] = endpoint
	// The create uses up a person's permission to create again.
	delete(annotations, v1alpha1.RecreateAnnotation)
	obj.SetAnnotations(annotations)
	if deletesRemote {
		controllerutil.AddFinalizer(obj, v1alpha1.MetricFinalizer)
	}
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		obj.SetAnnotations(before.GetAnnotations())
		obj.SetFinalizers(before.GetFinalizers())
		return fmt.Errorf("recording the pending create: %w", err)
	}
	return nil
}
