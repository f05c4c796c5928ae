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
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

func TestQuietProbesLogsFailedProbesOneLevelDown(t *testing.T) {
	for _, tc := range []struct {
		verbosity int
		want      []string
	}{
		{0, []string{`"level"=0 "msg"="Starting workers"`}},
		{1, []string{`"level"=0 "msg"="Starting workers"`, `"level"=1 "msg"="healthz check failed"`}},
	} {
		var lines []string
		sink := funcr.New(func(_, args string) { lines = append(lines, args) },
			funcr.Options{Verbosity: tc.verbosity}).GetSink()
		log := logr.New(quietProbes{sink}).WithName("controller-runtime").WithName("healthz")
		log.Info("Starting workers")
		log.Info(probeFailure, "statuses", []struct{}{{}, {}})
		if len(lines) != len(tc.want) {
			t.Fatalf("verbosity %d: logged %q, want %d lines", tc.verbosity, lines, len(tc.want))
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("verbosity %d: line %d = %q, want it to start with %q", tc.verbosity, i, lines[i], w)
			}
		}
	}
}
