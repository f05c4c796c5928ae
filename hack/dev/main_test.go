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

package main

import (
	"net"
	"strings"
	"testing"
)

func TestCheckFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	_ = free.Close()

	if err := checkFree([]address{{"metrics-bind-address", freeAddr, "the metrics", "DEV_METRICS_ADDR"}}); err != nil {
		t.Errorf("a free address: %v", err)
	}
	err = checkFree([]address{{"metrics-bind-address", freeAddr, "the metrics", "DEV_METRICS_ADDR"},
		{"serve-api", l.Addr().String(), "the REST server", "DEV_API_ADDR"}})
	if err == nil || !strings.Contains(err.Error(), "the REST server cannot listen on "+l.Addr().String()) ||
		!strings.Contains(err.Error(), "--serve-api=") || !strings.Contains(err.Error(), "make dev DEV_API_ADDR=") {
		t.Errorf("a taken address: %v, want it named with its flag", err)
	}
}
