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

// Package controller assembles the reconcilers: the Metric family
// (controller/metric), the Testsets (controller/testset), the one-shot jobs (controller/oneshot, today the two
// deletions) and the connections (controller/connection), over the kit they
// share (controller/kit), with the manager's cache; the judge of standalone
// runs (controller/scoring) beside them.
package controller

import (
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/internal/controller/connection"
	"github.com/eval-operator/eval-operator/internal/controller/evalrun"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/controller/metric"
	"github.com/eval-operator/eval-operator/internal/controller/oneshot"
	"github.com/eval-operator/eval-operator/internal/controller/scoring"
	"github.com/eval-operator/eval-operator/internal/controller/system"
	"github.com/eval-operator/eval-operator/internal/controller/testset"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/testcases"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// Options configure the reconcilers.
type Options struct {
	// Defaults are the manager's flags for services: the service objects
	// use when nothing else names one, and the defaults of every service.
	// Services is filled in with the manager's client.
	remote.Defaults
	// MaxConcurrentReconciles bounds the parallel reconciles of each kind.
	MaxConcurrentReconciles int
	// Backoff is the first delay before a failed call is retried; it doubles
	// with each failure up to five minutes. Defaults to one second.
	Backoff time.Duration
	// Clock tells the time of completions, TTLs, pending creates and drift
	// checks. Defaults to the real clock.
	Clock clock.PassiveClock

	// ServiceProbeInterval is how often a service is probed when nothing
	// changes. Defaults to ten minutes.
	ServiceProbeInterval time.Duration

	// Artifacts fetches the Flux artifacts Testsets read, from the hosts it
	// allows.
	Artifacts testset.Artifacts
	// TestsetLimits bound what a Testset's source may hold; zero fields
	// take testcases.DefaultLimits'.
	TestsetLimits testcases.Limits
	// TestsetMemory bounds the bytes of testcases the Testsets being read
	// and synced hold at once, half of it a namespace's; at least
	// testset.MinMemory(TestsetLimits). Zero takes testset.DefaultMemory.
	TestsetMemory int64

	// RequestTimeout is the services' per-request timeout (--api-timeout): a
	// create cut off mid-flight is settled from the service's list once this,
	// plus a margin, has passed since its pending mark. Defaults to
	// remote.DefaultTimeout.
	RequestTimeout time.Duration
}

// defaultBackoff is the first delay of a failed reconcile: slower at the
// start than controller-runtime's default so an upstream outage is not
// hammered.
const defaultBackoff = time.Second

// SetupWithManager registers every reconciler with mgr and returns the
// connector they resolve services with, for the REST server to share.
// cmd/main.go and every in-process harness assemble the operator with it.
func SetupWithManager(mgr ctrl.Manager, opts Options) (*remote.Connector, error) {
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 1
	}
	if opts.Backoff <= 0 {
		opts.Backoff = defaultBackoff
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	opts.Services = mgr.GetClient()
	connector := remote.NewConnector(mgr.GetAPIReader(), opts.Defaults)
	b := kit.Base{
		// Settled Metrics and finished deletions are cached without their
		// texts and ids: the client refuses to write such a copy back.
		Client:    trimcache.Guard(mgr.GetClient()),
		Recorder:  kit.BoundedEvents(mgr.GetEventRecorder("eval-operator")),
		Connector: connector,
		Reader:    mgr.GetAPIReader(),
		Clock:     opts.Clock,
		Backoff:   min(opts.Backoff, kit.BackoffMax),
	}
	if err := connection.Setup(mgr, connector, opts.ServiceProbeInterval); err != nil {
		return nil, err
	}
	if err := metric.Setup(mgr, b, opts.MaxConcurrentReconciles, opts.RequestTimeout); err != nil {
		return nil, err
	}
	if err := testset.Setup(mgr, b, opts.MaxConcurrentReconciles, opts.RequestTimeout, opts.Artifacts, opts.TestsetLimits,
		opts.TestsetMemory); err != nil {
		return nil, err
	}
	if err := oneshot.Setup(mgr, b, opts.MaxConcurrentReconciles); err != nil {
		return nil, err
	}
	if err := system.Setup(mgr, b, opts.MaxConcurrentReconciles); err != nil {
		return nil, err
	}
	if err := evalrun.Setup(mgr, b, opts.MaxConcurrentReconciles); err != nil {
		return nil, err
	}
	if err := scoring.Setup(mgr, mgr.GetClient(), mgr.GetAPIReader(), connector, opts.MaxConcurrentReconciles); err != nil {
		return nil, err
	}
	return connector, nil
}
