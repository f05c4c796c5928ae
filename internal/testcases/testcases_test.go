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

package testcases_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/eval-operator/eval-operator/internal/testcases"
)

func TestFromLinesReadsAValidSet(t *testing.T) {
	src := "{\"id\":\"b\",\"q\":\"2+2\",\"a\":4}\n\n{\"q\": \"1+1\", \"id\": \"a\", \"a\": 2}\n{\"id\":7,\"q\":\"x\"}\n"
	set, err := testcases.FromLines(strings.NewReader(src), "id")
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(set.Cases))
	for _, c := range set.Cases {
		keys = append(keys, c.Key)
	}
	if got := strings.Join(keys, ","); got != "7,a,b" {
		t.Errorf("keys %s, want 7,a,b (key order)", got)
	}
	if got := string(set.Cases[1].Data); got != `{"a":2,"id":"a","q":"1+1"}` || set.Cases[1].Line != 3 {
		t.Errorf("case a: %s at line %d, want canonical data at line 3", got, set.Cases[1].Line)
	}
	// The same testcases reordered and respaced have the same digest; a changed one does not.
	again, _ := testcases.FromLines(strings.NewReader(
		"{\"id\":7,\"q\":\"x\"}\n{\"id\":\"a\",\"q\":\"1+1\",\"a\":2}\n{\"a\":4,\"id\":\"b\",\"q\":\"2+2\"}"), "id")
	if again.Digest != set.Digest {
		t.Errorf("reordered lines changed the digest")
	}
	changed, _ := testcases.FromLines(strings.NewReader(
		"{\"id\":7,\"q\":\"x\"}\n{\"id\":\"a\",\"q\":\"1+1\",\"a\":3}\n{\"a\":4,\"id\":\"b\",\"q\":\"2+2\"}"), "id")
	if changed.Digest == set.Digest {
		t.Errorf("a changed testcase kept the digest")
	}
}

func TestBadDataNamesTheLineAndField(t *testing.T) {
	for _, tc := range []struct {
		name, src, reason, message string
	}{
		{"not JSON", "{\"id\":\"a\"}\n{\"id\":", testcases.ReasonInvalid, "line 2 is not a JSON object"},
		{"an array", "[1,2]", testcases.ReasonInvalid, "line 1 is not a JSON object"},
		{"null", "null", testcases.ReasonInvalid, "line 1 is not a JSON object: it is null"},
		{"no key", "{\"id\":\"a\"}\n\n{\"q\":1}", testcases.ReasonInvalid, `line 3: field "id" (the keyField) is missing`},
		{"empty key", "{\"id\":\" \"}", testcases.ReasonInvalid, `line 1: field "id" (the keyField) is empty`},
		{"object key", "{\"id\":{}}", testcases.ReasonInvalid, `must be a string or a number`},
		{"duplicate", "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"a\"}", testcases.ReasonDuplicate,
			`line 1 and 3 have the same id "a"`},
		{"too long", "{\"id\":\"a\"}\n{\"id\":\"" + strings.Repeat("x", testcases.MaxLineBytes) + "\"}",
			testcases.ReasonOverLimit, "line 2 is over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := testcases.FromLines(strings.NewReader(tc.src), "id")
			var bad *testcases.Error
			if !errors.As(err, &bad) || bad.Reason != tc.reason || !strings.Contains(bad.Message, tc.message) {
				t.Fatalf("got %v, want %s containing %q", err, tc.reason, tc.message)
			}
		})
	}
}

func TestFromItemsNamesTheItem(t *testing.T) {
	_, err := testcases.FromItems([][]byte{[]byte(`{"id":"a"}`), []byte(`{"id":"a"}`)}, "id")
	if err == nil || !strings.Contains(err.Error(), "inline item 1 and 2 have the same id") {
		t.Fatalf("got %v", err)
	}
}

func TestLimitsBoundTheSource(t *testing.T) {
	lines := "{\"id\":\"a\",\"v\":\"xxxxxxxxxx\"}\n{\"id\":\"b\",\"v\":\"xxxxxxxxxx\"}\n{\"id\":\"c\",\"v\":\"xxxxxxxxxx\"}\n"
	for _, tc := range []struct {
		name    string
		limits  testcases.Limits
		message string
	}{
		{"testcases", testcases.Limits{Testcases: 2}, "more than 2 testcases, the limit (--testset-max-testcases)"},
		{"bytes", testcases.Limits{Bytes: 40}, "over 40 bytes, the limit (--testset-max-bytes)"},
		{"bytes read", testcases.Limits{Bytes: 70}, "the source is over 70 bytes"},
		{"a testcase", testcases.Limits{TestcaseBytes: 16}, "line 1 is over 16 bytes, the limit of one testcase"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.limits.FromLines(strings.NewReader(lines), "id")
			var bad *testcases.Error
			if !errors.As(err, &bad) || bad.Reason != testcases.ReasonOverLimit || !strings.Contains(bad.Message, tc.message) {
				t.Fatalf("got %v, want %s containing %q", err, testcases.ReasonOverLimit, tc.message)
			}
		})
	}
	if set, err := (testcases.Limits{Testcases: 3, Bytes: int64(len(lines))}).FromLines(strings.NewReader(lines), "id"); err != nil ||
		len(set.Cases) != 3 {
		t.Fatalf("a source at its limits: %d testcases, %v", len(set.Cases), err)
	}
}
