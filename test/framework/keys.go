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
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// issued holds every key NewKey made in this process, so that a suite can
// search its output for each key it actually used.
var issued struct {
	sync.Mutex
	keys []string
}

// NewKey returns a fresh random ak_ key, "ak_<owner>_<hex>"; owner names
// who made it, so that a key found where it must not be tells where it came
// from. IssuedKeys lists it from then on.
func NewKey(owner string) string {
	key := "ak_" + owner + "_" + RandomHex(16)
	issued.Lock()
	defer issued.Unlock()
	issued.keys = append(issued.keys, key)
	return key
}

// IssuedKeys returns every key NewKey made in this process, oldest first.
func IssuedKeys() []string {
	issued.Lock()
	defer issued.Unlock()
	return slices.Clone(issued.keys)
}

// hexDumpRow matches a row of a hex.Dump (client-go logs binary bodies so),
// capturing its bytes.
var hexDumpRow = regexp.MustCompile(`[0-9a-f]{8}  ((?:[0-9a-f]{2}  ?){1,16})`)

// Revealed says which of keys text shows and how, or "" and "" if it shows
// none: verbatim, without its ak_ prefix, base64-encoded (a Secret in JSON),
// or in a hex dump (a Secret in protobuf). The hex dump rows are decoded
// once for all keys: a suite's logs run to megabytes and its keys to
// hundreds.
func Revealed(text string, keys []string) (key, how string) {
	var dumped []byte
	for _, row := range hexDumpRow.FindAllStringSubmatch(text, -1) {
		b, err := hex.DecodeString(strings.ReplaceAll(row[1], " ", ""))
		if err == nil {
			dumped = append(dumped, b...)
		}
	}
	for _, key := range keys {
		secret := key[strings.Index(key, "_")+1:]
		switch {
		case strings.Contains(text, secret):
			return key, "verbatim"
		case strings.Contains(text, base64.StdEncoding.EncodeToString([]byte(key))):
			return key, "base64-encoded"
		case bytes.Contains(dumped, []byte(secret)):
			return key, "in a hex dump"
		}
	}
	return "", ""
}
