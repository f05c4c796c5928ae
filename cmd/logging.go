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

import "github.com/go-logr/logr"

// probeFailure is what controller-runtime logs at info for every /readyz or
// /healthz request that fails.
const probeFailure = "healthz check failed"

// quietProbes logs probeFailure one verbosity level down (V(1)): the
// readiness check fails by design while the caches sync and while the REST
// server drains, and the kubelet, make dev and the tests poll it, so at info
// it filled a start with lines saying only `"statuses":[{},{}]`.
// --zap-log-level=debug shows them.
type quietProbes struct{ logr.LogSink }

func (s quietProbes) Init(info logr.RuntimeInfo) {
	info.CallDepth++ // this wrapper's frame
	s.LogSink.Init(info)
}

func (s quietProbes) Info(level int, msg string, keysAndValues ...any) {
	if msg == probeFailure {
		if level++; !s.Enabled(level) {
			return
		}
	}
	s.LogSink.Info(level, msg, keysAndValues...)
}

func (s quietProbes) WithValues(keysAndValues ...any) logr.LogSink {
	return quietProbes{s.LogSink.WithValues(keysAndValues...)}
}

func (s quietProbes) WithName(name string) logr.LogSink { return quietProbes{s.LogSink.WithName(name)} }
