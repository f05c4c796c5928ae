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
	"github.com/go-logr/logr"

	"github.com/eval-operator/eval-operator/internal/remote"
)

const (
	// probeFailure is what controller-runtime logs at info for every
	// /readyz or /healthz request that fails.
	probeFailure = "healthz check failed"
	// reconcilerError is what controller-runtime logs at error for every
	// reconcile that returns an error.
	reconcilerError = "Reconciler error"
)

// quietSink lowers two kinds of expected lines, so that error lines in the
// manager's log are the ones that need a person:
//   - probeFailure goes one verbosity level down (V(1)): the readiness check
//     fails by design while the caches sync and while the REST server
//     drains, and the kubelet, make dev and the tests poll it, so at info it
//     filled a start with lines saying only `"statuses":[{},{}]`;
//     --zap-log-level=debug shows them.
//   - reconcilerError for a service call that failed and is retried with
//     backoff (no answer, 5xx, 429, outcome unknown) is logged at info with
//     its error: an unavailable service is the service's incident, the
//     object's condition says UpstreamUnavailable, and
//     controller_runtime_reconcile_total{result="error"} still counts it.
type quietSink struct{ logr.LogSink }

func (s quietSink) Init(info logr.RuntimeInfo) {
	info.CallDepth++ // this wrapper's frame
	s.LogSink.Init(info)
}

func (s quietSink) Info(level int, msg string, keysAndValues ...any) {
	if msg == probeFailure {
		if level++; !s.Enabled(level) {
			return
		}
	}
	s.LogSink.Info(level, msg, keysAndValues...)
}

func (s quietSink) Error(err error, msg string, keysAndValues ...any) {
	if msg == reconcilerError && retried(err) {
		if s.Enabled(0) {
			s.LogSink.Info(0, msg, append(keysAndValues, "error", err.Error())...)
		}
		return
	}
	s.LogSink.Error(err, msg, keysAndValues...)
}

// retried reports whether err is a service call the reconcilers retry with
// backoff, as a transient failure of the service.
func retried(err error) bool {
	switch remote.FailureOf(err) {
	case remote.NotSent, remote.Unavailable, remote.OutcomeUnknown, remote.RateLimited:
		return true
	default:
		return false
	}
}

func (s quietSink) WithValues(keysAndValues ...any) logr.LogSink {
	return quietSink{s.LogSink.WithValues(keysAndValues...)}
}

func (s quietSink) WithName(name string) logr.LogSink { return quietSink{s.LogSink.WithName(name)} }
