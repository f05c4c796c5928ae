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
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// A finished TestcaseDeletion is cached without its ids, marked, and the
// client refuses to write the trimmed copy back; one still running keeps them.
func TestDeletionCacheTransform(t *testing.T) {
	running := &v1alpha1.TestcaseDeletion{Spec: v1alpha1.TestcaseDeletionSpec{TestcaseIDs: []v1alpha1.ResourceID{"a", "b"}}}
	finished := running.DeepCopy()
	finished.Status.Success, finished.Status.CompletionTime = ptr.To(true), ptr.To(metav1.Now())
	transform := CacheTransform()

	out, err := transform(running)
	if err != nil || len(out.(*v1alpha1.TestcaseDeletion).Spec.TestcaseIDs) != 2 || trimcache.Trimmed(running) {
		t.Fatalf("a running deletion lost its ids: %v %v", out, err)
	}
	out, err = transform(finished)
	d := out.(*v1alpha1.TestcaseDeletion)
	if err != nil || d.Spec.TestcaseIDs != nil || !trimcache.Trimmed(d) {
		t.Fatalf("a finished deletion kept its ids or its mark: %+v %v", d, err)
	}
	if err := trimcache.Guard(nil).Update(context.Background(), d); !errors.Is(err, trimcache.ErrTrimmedWrite) {
		t.Errorf("updating a trimmed deletion = %v, want refused", err)
	}
	if err := trimcache.Guard(nil).Patch(context.Background(), d, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"testcaseIds":[]}}`))); !errors.Is(err, trimcache.ErrTrimmedWrite) {
		t.Errorf("patching a trimmed deletion's testcaseIds = %v, want refused", err)
	}
}
