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

package kit

import (
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// DriftSchedule says when each Ready object's remote copy is read next. It
// lives in memory, keyed by UID, so that a check that finds nothing costs
// no write: a restart merely starts the schedule over.
type DriftSchedule struct {
	// interval is the time between two checks of one object; 0 turns drift checks off.
	interval time.Duration
	clock    clock.PassiveClock
	// jitter returns a number in [0, 1).
	jitter func() float64

	mu   sync.Mutex
	next map[types.UID]time.Time
	// swept is when entries of deleted objects were last dropped.
	swept time.Time
}

func newDriftSchedule(interval time.Duration, c clock.PassiveClock) *DriftSchedule {
	return &DriftSchedule{
		interval: interval, clock: c, next: map[types.UID]time.Time{},
		jitter: rand.Float64, //nolint:gosec // spreads the checks in time; no secret
	}
}

// Due reports whether uid's check is due, and otherwise how long until it
// is. An object seen for the first time, after a create or a start, is
// Checked at a random point in [0.5, 1] x interval from now, so that a
// restart does not read every object at once and reads none at once; later
// checks follow one interval apart, which keeps them spread.
func (d *DriftSchedule) Due(uid types.UID) (bool, time.Duration) {
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

// Checked records that uid's remote copy was just read or written: the
// next check is one interval from now, and the result returned brings uid
// back for it.
func (d *DriftSchedule) Checked(uid types.UID) ctrl.Result {
	if d.interval <= 0 {
		return ctrl.Result{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next[uid] = d.clock.Now().Add(d.interval)
	return ctrl.Result{RequeueAfter: d.interval}
}

// Requeue is the result that brings uid back for its next check.
func (d *DriftSchedule) Requeue(uid types.UID) ctrl.Result {
	_, wait := d.Due(uid)
	return ctrl.Result{RequeueAfter: wait}
}

// sweep drops, at most once per interval, the entries overdue by more than
// two intervals: a Ready Metric comes back for its check on time, so those
// belong to Metrics deleted or no longer Ready (which start over when they
// are Ready again).
func (d *DriftSchedule) sweep(now time.Time) {
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

// DriftSchedules keeps one DriftSchedule per drift interval: each service
// has its own interval.
type DriftSchedules struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	by    map[time.Duration]*DriftSchedule
}

func NewDriftSchedules(c clock.PassiveClock) *DriftSchedules {
	return &DriftSchedules{clock: c, by: map[time.Duration]*DriftSchedule{}}
}

// Every returns the schedule of checks interval apart.
func (s *DriftSchedules) Every(interval time.Duration) *DriftSchedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.by[interval]
	if !ok {
		d = newDriftSchedule(interval, s.clock)
		s.by[interval] = d
	}
	return d
}
