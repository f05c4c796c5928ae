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

package oneshot

import (
	"testing"
	"time"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
)

func TestNotSucceededBacksOff(t *testing.T) {
	b := &reconciler[*v1alpha1.TestsetDeletion]{Base: kit.Base{Backoff: time.Second}}
	var prev time.Duration
	for attempts := int32(1); attempts < 40; attempts++ {
		st := v1alpha1.DeletionStatus{Attempts: attempts}
		_, res, _ := b.notSucceeded(&st)
		if res.RequeueAfter < prev || res.RequeueAfter > kit.BackoffMax || res.RequeueAfter <= 0 {
			t.Fatalf("attempt %d: RequeueAfter %s after %s", attempts, res.RequeueAfter, prev)
		}
		if st.Success == nil || *st.Success {
			t.Fatal("success must be recorded as false")
		}
		prev = res.RequeueAfter
	}
	if prev != kit.BackoffMax {
		t.Errorf("backoff tops out at %s, want %s", prev, kit.BackoffMax)
	}
}
