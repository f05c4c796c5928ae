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

package evalrun

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestJobName(t *testing.T) {
	long := strings.Repeat("a", 60) + "-release-42"
	for _, tc := range []struct{ run, want string }{
		{"release-42", "release-42"},
		{strings.Repeat("b", 63), strings.Repeat("b", 63)},
	} {
		if got := jobName(tc.run); got != tc.want {
			t.Errorf("jobName(%q) = %q, want %q", tc.run, got, tc.want)
		}
	}
	got := jobName(long)
	if errs := validation.IsValidLabelValue(got); len(errs) > 0 || !strings.HasPrefix(got, long[:52]) {
		t.Errorf("jobName(%q) = %q: %v", long, got, errs)
	}
	if other := jobName(long + "x"); other == got {
		t.Errorf("two long names share the Job name %q", got)
	}
}
