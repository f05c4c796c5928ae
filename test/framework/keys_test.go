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

package framework

import (
	"encoding/base64"
	"encoding/hex"
	"testing"
)

func TestRevealedFindsEachFormOfAnyKey(t *testing.T) {
	quiet, loud := NewKey("quiet"), NewKey("loud")
	keys := []string{quiet, loud}
	secret := loud[len("ak_"):] // what a log would show without the prefix
	for _, tc := range []struct{ name, text, how string }{
		{"absent", "nothing to see", ""},
		{"verbatim", "token " + secret + " in a log", "verbatim"},
		{"base64", `{"data":{"key":"` + base64.StdEncoding.EncodeToString([]byte(loud)) + `"}}`, "base64-encoded"},
		{"hex dump", "body:\n" + hex.Dump([]byte("\x0a\x03key\x12\x20"+loud)), "in a hex dump"},
	} {
		key, how := Revealed(tc.text, keys)
		if how != tc.how || (how != "" && key != loud) {
			t.Errorf("%s: Revealed = %q, %q; want %q of the second key", tc.name, key, how, tc.how)
		}
	}
}
