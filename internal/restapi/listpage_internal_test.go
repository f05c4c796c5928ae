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

package restapi

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
)

func TestListPage(t *testing.T) {
	at := func(second int64, uid string) evaluationv1alpha1.Metric {
		return evaluationv1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid),
			CreationTimestamp: metav1.NewTime(time.Unix(second, 0))}}
	}
	// As the cache gives them: in no order. Newest first, then by uid:
	// e, c, d, a, b.
	items := []evaluationv1alpha1.Metric{at(1, "a"), at(3, "c"), at(1, "b"), at(2, "d"), at(4, "e")}
	cached := slices.Clone(items)
	names := func(page []*evaluationv1alpha1.Metric) []string {
		out := make([]string, 0, len(page))
		for _, m := range page {
			out = append(out, m.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		after *position
		limit int
		want  []string
		more  bool
	}{
		{"the first page", nil, 2, []string{"e", "c"}, true},
		{"after a page's last", &position{Created: 3, UID: "c"}, 2, []string{"d", "a"}, true},
		{"the last page", &position{Created: 1, UID: "a"}, 2, []string{"b"}, false},
		{"after an object deleted since", &position{Created: 2, UID: "x"}, 10, []string{"a", "b"}, false},
		{"after the last", &position{Created: 1, UID: "b"}, 2, nil, false},
		{"all in one", nil, 5, []string{"e", "c", "d", "a", "b"}, false},
	} {
		page, more := listPage(items, tc.after, tc.limit)
		if got := names(page); !slices.Equal(got, tc.want) || more != tc.more {
			t.Errorf("%s: page %v, more %v; want %v, %v", tc.name, got, more, tc.want, tc.more)
		}
		for _, m := range page {
			if !isElement(items, m) {
				t.Errorf("%s: %s is a copy, not the cache's own object", tc.name, m.Name)
			}
		}
	}
	for i := range items {
		if items[i].Name != cached[i].Name {
			t.Fatalf("the cache's list was reordered: %s at %d, was %s", items[i].Name, i, cached[i].Name)
		}
	}
}

// isElement reports whether m points into items.
func isElement(items []evaluationv1alpha1.Metric, m *evaluationv1alpha1.Metric) bool {
	for i := range items {
		if &items[i] == m {
			return true
		}
	}
	return false
}
