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
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// An event's note is cut to what the API server takes, formatted first, on
// both of the recorder's methods; a short note passes as it is.
func TestBoundedEvents(t *testing.T) {
	got := make(chan string, 3)
	r := BoundedEvents(&events.FakeRecorder{Events: got})
	obj := &v1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t"}}
	key := strings.Repeat("K", 400_000)
	r.Eventf(obj, nil, "Warning", "DuplicateKey", "Reconcile", "%s", "same key "+key)
	r.AnnotatedEventf(obj, nil, map[string]string{"a": "b"}, "Warning", "DuplicateKey", "Reconcile", "key %s", key)
	r.Eventf(obj, nil, "Normal", "Created", "Create", "created run %s", "run_1")
	for _, want := range []struct{ head, note string }{
		{"Warning DuplicateKey ", "same key KKK"},
		{"Warning DuplicateKey ", "key KKK"},
		{"Normal Created ", "created run run_1"},
	} {
		note, ok := strings.CutPrefix(<-got, want.head)
		switch {
		case !ok || !strings.HasPrefix(note, want.note):
			t.Errorf("event %.60q..., want %q%q...", note, want.head, want.note)
		case len(note) > MaxEventNote:
			t.Errorf("event note of %d bytes", len(note))
		case len(note) > len(want.note) && !strings.HasSuffix(note, fmt.Sprintf("... (cut from %d bytes)", len(want.note)-3+len(key))):
			t.Errorf("event note ends %q, without the marker", note[len(note)-40:])
		}
	}
}
