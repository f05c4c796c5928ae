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

// Package quote quotes values a tenant sent in messages, bounded: error
// bodies, conditions and logs stay small and printable whatever a value holds.
package quote

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxPrefix is how many bytes of a value Prefix quotes at most.
const MaxPrefix = 64

// Prefix quotes at most the first MaxPrefix bytes of s, escaping what is not
// printable, and says how long s was when it cut it.
func Prefix(s string) string {
	if len(s) <= MaxPrefix {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(head(s, MaxPrefix)), len(s))
}

// MaxMessage is how many bytes of a message Bounded keeps at most.
const MaxMessage = 1024

// Bounded is msg cut to at most MaxMessage bytes, on a character boundary,
// with "..." where it was cut: for messages of others (the API server's)
// that may quote a value in full.
func Bounded(msg string) string {
	if len(msg) <= MaxMessage {
		return msg
	}
	return head(msg, MaxMessage) + "..."
}

// Cut is msg in at most limit bytes: msg itself when it fits, else its
// start, cut on a character boundary, and a marker that says it was cut
// and how long msg was. It is for fields the API server caps (a
// condition's message, an event's note), so the marker counts in limit.
func Cut(msg string, limit int) string {
	if len(msg) <= limit {
		return msg
	}
	marker := fmt.Sprintf("... (cut from %d bytes)", len(msg))
	if limit < len(marker) {
		return head(msg, limit)
	}
	return head(msg, limit-len(marker)) + marker
}

// head is s's first n bytes or fewer, ending on a character boundary;
// n < len(s).
func head(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
