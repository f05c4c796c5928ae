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
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchAnnotations sets annotations on obj (a nil value removes one) with
// one merge patch, retrying transient failures: it records what exists
// only in this process until it lands (a remote id).
func PatchAnnotations(ctx context.Context, c client.Client, obj client.Object, annotations map[string]any) error {
	patch, err := annotationPatch(annotations, "")
	if err != nil {
		return err
	}
	err = retry.OnError(retry.DefaultBackoff, isTransient, func() error {
		return c.Patch(ctx, obj, patch)
	})
	if err != nil {
		return fmt.Errorf("patching annotations: %w", err)
	}
	return nil
}

// PatchAnnotationsIfCurrent patches annotations only if obj is the stored
// version: a decision taken on a stale copy fails with a conflict and is
// taken again.
func PatchAnnotationsIfCurrent(ctx context.Context, c client.Client, obj client.Object, annotations map[string]any) error {
	patch, err := annotationPatch(annotations, obj.GetResourceVersion())
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("patching annotations: %w", err)
	}
	return nil
}

// annotationPatch is a merge patch of annotations, conditional on
// resourceVersion unless it is empty.
func annotationPatch(annotations map[string]any, resourceVersion string) (client.Patch, error) {
	metadata := map[string]any{"annotations": annotations}
	if resourceVersion != "" {
		metadata["resourceVersion"] = resourceVersion
	}
	data, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return nil, fmt.Errorf("encoding annotations: %w", err)
	}
	return client.RawPatch(types.MergePatchType, data), nil
}

func isTransient(err error) bool {
	return !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err)
}
