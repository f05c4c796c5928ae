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

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/eval-operator/eval-operator/internal/quote"
)

// MaxEventNote is the most bytes the API server takes in an event's note
// (events.k8s.io/v1); the recorder neither cuts a longer one nor retries:
// the event is lost.
const MaxEventNote = 1024

// BoundedEvents wraps r so that every event's note, formatted, is cut to
// MaxEventNote: a note may quote what a tenant wrote (a key, a URL, a
// revision), and the operator's events must reach the object whatever it
// holds. Every recorder the reconcilers use is wrapped.
func BoundedEvents(r recorder.EventRecorder) recorder.EventRecorder { return boundedEvents{r} }

type boundedEvents struct{ r recorder.EventRecorder }

func (b boundedEvents) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	b.r.Eventf(regarding, related, eventtype, reason, action, "%s", boundNote(note, args))
}

func (b boundedEvents) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string,
	eventtype, reason, action, note string, args ...any) {
	b.r.AnnotatedEventf(regarding, related, annotations, eventtype, reason, action, "%s", boundNote(note, args))
}

// boundNote is note formatted with args, cut to MaxEventNote.
func boundNote(note string, args []any) string {
	return quote.Cut(fmt.Sprintf(note, args...), MaxEventNote)
}
