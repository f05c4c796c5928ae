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
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

func TestQuietSinkLogsFailedProbesOneLevelDown(t *testing.T) {
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
		log := logr.New(quietSink{sink}).WithName("controller-runtime").WithName("healthz")
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

func TestQuietSinkLogsRetriedServiceFailuresAtInfo(t *testing.T) {
	var lines []string
	sink := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{}).GetSink()
	log := logr.New(quietSink{sink}).WithName("controller-runtime")
	unavailable := fmt.Errorf("creating the remote Metric: %w",
		&evalapi.Error{Kind: evalapi.KindUnavailable, Op: "CreateMetric", StatusCode: 503})
	log.Error(unavailable, reconcilerError, "Metric", "team-a/helpfulness")
	log.Error(errors.New("listing Secrets: forbidden"), reconcilerError, "Metric", "team-a/helpfulness")
	log.Error(unavailable, "something else failed")
	want := []string{
		`"level"=0 "msg"="Reconciler error" "Metric"="team-a/helpfulness" "error"="creating the remote Metric: `,
		`"msg"="Reconciler error" "error"="listing Secrets: forbidden" "Metric"="team-a/helpfulness"`,
		`"msg"="something else failed" "error"="creating the remote Metric: `,
	}
	if len(lines) != len(want) {
		t.Fatalf("logged %q, want %d lines", lines, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
}
