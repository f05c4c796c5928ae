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

package testset

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// setOf is a set of n testcases, keys from first, data tagged with tag.
func setOf(t *testing.T, first, n int, tag string) testcases.Set {
	t.Helper()
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "{\"id\":\"k%d\",\"v\":%q}\n", i, tag)
	}
	s, err := testcases.FromLines(strings.NewReader(b.String()), "id")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLastSetsSayWhatChangedWithinTheirBound(t *testing.T) {
	l := newLastSets()
	small := types.NamespacedName{Namespace: "a", Name: "small"}
	if change, changed := l.swap(small, "u1", setOf(t, 0, 3, "x")); change != "" || changed {
		t.Errorf("the first set: %q %v, want nothing known", change, changed)
	}
	edited := setOf(t, 1, 3, "x") // k0 removed, k3 added
	if change, changed := l.swap(small, "u1", edited); change != "1 added, 1 removed" || !changed {
		t.Errorf("an edit: %q %v", change, changed)
	}
	if change, changed := l.swap(small, "u1", edited); change != "1 added, 1 removed" || changed {
		t.Errorf("the same set again keeps the change without a new one: %q %v", change, changed)
	}
	if change, _ := l.swap(small, "u2", setOf(t, 0, 1, "x")); change != "" {
		t.Errorf("a new object at the name: %q, want nothing known", change)
	}

	// Tenants' large sets are not remembered past the bound: the one that
	// does not fit has its next change told by its count only.
	first := types.NamespacedName{Namespace: "b", Name: "first"}
	l.swap(first, "u3", setOf(t, 0, maxRemembered/2, "x"))
	huge := types.NamespacedName{Namespace: "b", Name: "huge"}
	l.swap(huge, "u4", setOf(t, 0, maxRemembered/2, "x"))
	if change, _ := l.swap(huge, "u4", setOf(t, 0, maxRemembered/2, "y")); change != "" {
		t.Errorf("a set over the bound: %q, want nothing known", change)
	}
	if want := 1 + maxRemembered/2; l.total != want {
		t.Errorf("remembered %d testcases, want %d", l.total, want)
	}
	l.forget(first)
	// A deleted Testset is forgotten as its delete event passes.
	deleted := &v1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Namespace: small.Namespace, Name: small.Name}}
	if !l.forgetDeleted().Delete(event.DeleteEvent{Object: deleted}) {
		t.Error("the delete event was held back")
	}
	l.forget(huge)
	if l.total != 0 || len(l.by) != 0 {
		t.Errorf("after forgetting both: %d testcases in %d entries", l.total, len(l.by))
	}
}
