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

package metric

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	driftCorrections = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "evaloperator_drift_corrections_total",
		Help: "Remote Metrics a drift check found changed outside the cluster and restored to their spec with one update.",
	})
	metricUpdates = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "evaloperator_metric_updates_total",
		Help: "Updates sent to bring a remote Metric to a changed or adopted spec (drift corrections are counted apart).",
	})
)

func init() {
	metrics.Registry.MustRegister(driftCorrections, metricUpdates)
}

// driftSchedule says when each Ready Metric's remote copy is read next. It
// lives in memory, keyed by UID, so that a check that finds nothing costs
// no write: a restart merely starts the schedule over.
type driftSchedule struct {
	// interval is the time between two checks of one Metric; 0 turns drift checks off.
	interval time.Duration
	clock    clock.PassiveClock
	// jitter returns a number in [0, 1).
	jitter func() float64

	mu   sync.Mutex
	next map[types.UID]time.Time
	// swept is when entries of deleted Metrics were last dropped.
	swept time.Time
}

func newDriftSchedule(interval time.Duration, c clock.PassiveClock) *driftSchedule {
	return &driftSchedule{
		interval: interval, clock: c, next: map[types.UID]time.Time{},
		jitter: rand.Float64, //nolint:gosec // spreads the checks in time; no secret
	}
}

// due reports whether uid's check is due, and otherwise how long until it
// is. A Metric seen for the first time, after a create or a start, is
// checked at a random point in [0.5, 1] x interval from now, so that a
// restart does not read every Metric at once and reads none at once; later
// checks follow one interval apart, which keeps them spread.
func (d *driftSchedule) due(uid types.UID) (bool, time.Duration) {
	if d.interval <= 0 {
		return false, 0
	}
	now := d.clock.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep(now)
	next, ok := d.next[uid]
	if !ok {
		next = now.Add(time.Duration((0.5 + 0.5*d.jitter()) * float64(d.interval)))
		d.next[uid] = next
	}
	if now.Before(next) {
		return false, next.Sub(now)
	}
	return true, 0
}

// checked records that uid's remote Metric was just read or written: the
// next check is one interval from now.
func (d *driftSchedule) checked(uid types.UID) {
	if d.interval <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next[uid] = d.clock.Now().Add(d.interval)
}

// requeue is the result that brings uid back for its next check.
func (d *driftSchedule) requeue(uid types.UID) ctrl.Result {
	_, wait := d.due(uid)
	return ctrl.Result{RequeueAfter: wait}
}

// sweep drops, at most once per interval, the entries overdue by more than
// two intervals: a Ready Metric comes back for its check on time, so those
// belong to Metrics deleted or no longer Ready (which start over when they
// are Ready again).
func (d *driftSchedule) sweep(now time.Time) {
	if now.Sub(d.swept) < d.interval {
		return
	}
	d.swept = now
	for uid, next := range d.next {
		if now.Sub(next) > 2*d.interval {
			delete(d.next, uid)
		}
	}
}

// driftSchedules keeps one driftSchedule per drift interval: each service
// has its own interval.
type driftSchedules struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	by    map[time.Duration]*driftSchedule
}

func newDriftSchedules(c clock.PassiveClock) *driftSchedules {
	return &driftSchedules{clock: c, by: map[time.Duration]*driftSchedule{}}
}

// every returns the schedule of checks interval apart.
func (s *driftSchedules) every(interval time.Duration) *driftSchedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.by[interval]
	if !ok {
		d = newDriftSchedule(interval, s.clock)
		s.by[interval] = d
	}
	return d
}
