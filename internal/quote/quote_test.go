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

package quote_test

import (
	"strings"
	"testing"

	"github.com/eval-operator/eval-operator/internal/quote"
)

func TestPrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc", `"abc"`},
		{"a\x7fb", `"a\x7fb"`},
		{strings.Repeat("x", 64), `"` + strings.Repeat("x", 64) + `"`},
		{strings.Repeat("x", 100000), `"` + strings.Repeat("x", 64) + `"... (100000 bytes)`},
		// A cut never splits a character: é is two bytes, at 63 and 64.
		{strings.Repeat("x", 63) + "é" + strings.Repeat("y", 10), `"` + strings.Repeat("x", 63) + `"... (75 bytes)`},
	} {
		if got := quote.Prefix(tc.in); got != tc.want {
			t.Errorf("Prefix(%.20q...) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
