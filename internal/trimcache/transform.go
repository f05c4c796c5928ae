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

package trimcache

import (
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TrimTransform is a cache transform (cache.ByObject) for objects of type
// T: it strips managedFields, as the default transform does for every
// object, and marks with TrimmedAnnotation each object that trim dropped
// fields of. trim gets the transform's own, freshly decoded copy, so it
// trims in place, and the mark is set in place too: a copy of the
// annotations for each of thousands of objects would cost more than the
// fields dropped.
func TrimTransform[T client.Object](trim func(T) bool) toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(in any) (any, error) {
		out, err := strip(in)
		if obj, ok := out.(T); ok && err == nil && trim(obj) {
			annotations := obj.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[TrimmedAnnotation] = "true"
			obj.SetAnnotations(annotations)
		}
		return out, err
	}
}
