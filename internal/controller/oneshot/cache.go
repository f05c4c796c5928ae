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

package oneshot

import (
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// A TestcaseDeletion holds up to 10,000 ids (1.3 MB), which only its run
// reads. Once it has finished, its reconciles only count down its TTL, so
// the cache keeps it without its ids: the manager's memory does not grow
// with the finished deletions a tenant keeps for their TTL. The copy is
// marked with trimcache.TrimmedAnnotation, and the client refuses to write it back.

// CacheTransform is the cache transform of TestcaseDeletions
// (cache.ByObject): it strips managedFields and trims a finished deletion.
func CacheTransform() toolscache.TransformFunc {
	return trimcache.TrimTransform(func(d *v1alpha1.TestcaseDeletion) bool {
		if !d.Status.Finished() {
			return false
		}
		d.Spec.TestcaseIDs = nil
		return true
	})
}
