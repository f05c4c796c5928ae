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
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestDriftSchedule(t *testing.T) {
	const interval = 10 * time.Minute
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	d := newDriftSchedule(interval, clock)
	d.jitter = func() float64 { return 0 }

	// First sight: the check waits half an interval at least, and nothing is due at once.
	if due, wait := d.Due("a"); due || wait != interval/2 {
		t.Fatalf("first sight: due=%v wait=%s, want false and %s", due, wait, interval/2)
	}
	d.jitter = func() float64 { return 0.999999 }
	if _, wait := d.Due("b"); wait <= interval*99/100 || wait > interval {
		t.Fatalf("first sight with the largest jitter: wait=%s, want just under %s", wait, interval)
	}
	clock.SetTime(clock.Now().Add(interval / 2))
	if due, _ := d.Due("a"); !due {
		t.Fatal("a's check must be due after half an interval")
	}
	// After a check, the next one is a whole interval away, and the check's
	// result comes back for it.
	if res := d.Checked("a"); res.RequeueAfter != interval {
		t.Fatalf("a check requeues after %s, want %s", res.RequeueAfter, interval)
	}
	if due, wait := d.Due("a"); due || wait != interval {
		t.Fatalf("after a check: due=%v wait=%s, want false and %s", due, wait, interval)
	}

	// Entries overdue by more than two intervals belong to deleted objects: forgotten.
	clock.SetTime(clock.Now().Add(4 * interval))
	d.Due("c")
	if _, ok := d.next["b"]; ok {
		t.Error("b's stale entry was kept")
	}

	off := newDriftSchedule(0, clock)
	if due, wait := off.Due("a"); due || wait != 0 {
		t.Errorf("interval 0: due=%v wait=%s, want no check at all", due, wait)
	}
	if res := off.Checked("a"); res.RequeueAfter != 0 {
		t.Errorf("interval 0: a check requeues after %s, want never", res.RequeueAfter)
	}
}
