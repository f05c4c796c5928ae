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

func TestCut(t *testing.T) {
	long := strings.Repeat("K", 400_000)
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{strings.Repeat("x", 10), 10, strings.Repeat("x", 10)},
		// The marker counts in the limit: 30 bytes are 7 of the message and 23 of the marker.
		{strings.Repeat("x", 40), 30, "xxxxxxx... (cut from 40 bytes)"},
		// A cut never splits a character: é is two bytes, at 6 and 7.
		{"xxxxxxé" + strings.Repeat("y", 40), 30, "xxxxxx... (cut from 48 bytes)"},
		// A limit smaller than the marker keeps what fits, without one.
		{"abcdef", 3, "abc"},
	} {
		got := quote.Cut(tc.in, tc.limit)
		if got != tc.want {
			t.Errorf("Cut(%.20q..., %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
		if len(got) > tc.limit {
			t.Errorf("Cut(%.20q..., %d) is %d bytes", tc.in, tc.limit, len(got))
		}
	}
	if got := quote.Cut(long, 32768); len(got) != 32768 || !strings.HasSuffix(got, "... (cut from 400000 bytes)") {
		t.Errorf("Cut of 400000 bytes to 32768 = %d bytes ending %q", len(got), got[len(got)-40:])
	}
}
