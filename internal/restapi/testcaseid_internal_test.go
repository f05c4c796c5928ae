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

import "testing"

func TestTestcaseID(t *testing.T) {
	for _, tc := range []struct{ testsetID, key, id string }{
		{"tst_abc", "q1", "tst_abc.q1"},
		{"tst_abc", "a-b_C", "tst_abc.a-b_C"},
		{"246", "q 2", "246~cSAy"},
		{"246", "a.b", "246~YS5i"},
		{"tst.dotted", "k", "tst.dotted.k"},
		{"tst.dotted", "é/~", "tst.dotted~w6kvfg"},
	} {
		if got := testcaseID(tc.testsetID, tc.key); got != tc.id {
			t.Errorf("testcaseID(%q, %q) = %q, want %q", tc.testsetID, tc.key, got, tc.id)
		}
		testsetID, key, ok := parseTestcaseID(tc.id)
		if !ok || testsetID != tc.testsetID || key != tc.key {
			t.Errorf("parseTestcaseID(%q) = %q, %q, %v; want %q, %q", tc.id, testsetID, key, ok, tc.testsetID, tc.key)
		}
	}
	for _, id := range []string{"", "tst_abc", ".k", "tst_abc.", "tst_abc~", "tst_abc~!!", "tst_abc.a b"} {
		if testsetID, key, ok := parseTestcaseID(id); ok {
			t.Errorf("parseTestcaseID(%q) = %q, %q; want no testcase id", id, testsetID, key)
		}
	}
}
