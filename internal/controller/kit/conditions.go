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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/quote"
)

// MaxConditionMessage is the most bytes the API server takes in a
// condition's message (metav1.Condition); a status holding a longer one is
// refused whole.
const MaxConditionMessage = 32768

// Phase is where an object stands after a reconcile.
type Phase int

const (
	// PhaseProgressing: not there yet; the operator retries by itself.
	PhaseProgressing Phase = iota
	// PhaseReady: the goal is reached.
	PhaseReady
	// PhaseStalled: the operator cannot go on until a person acts.
	PhaseStalled
	// PhasePaused: a person paused the object before it reached its goal;
	// the operator does nothing. Neither in progress nor stalled.
	PhasePaused
)

func (p Phase) String() string {
	switch p {
	case PhaseProgressing:
		return "Progressing"
	case PhaseReady:
		return "Ready"
	case PhaseStalled:
		return "Stalled"
	case PhasePaused:
		return "Paused"
	default:
		return fmt.Sprintf("phase(%d)", int(p))
	}
}

// Outcome is the result of one reconcile, from which the conditions follow.
type Outcome struct {
	Phase   Phase
	Reason  string
	Message string
}

func Ready(reason, message string) Outcome { return Outcome{PhaseReady, reason, message} }
func Progressing(reason, message string) Outcome {
	return Outcome{PhaseProgressing, reason, message}
}
func Stalled(reason, message string) Outcome { return Outcome{PhaseStalled, reason, message} }

// SetConditions writes Ready, Reconciling and Stalled for o. Ready is always
// present and carries o's reason; Reconciling and Stalled follow kstatus'
// abnormal-true convention and are present only while True. Every
// condition's message, these and any other set before, is then cut to
// MaxConditionMessage: a message may quote what a tenant wrote (a key, a
// URL, a revision), and one too long would leave the object with no status.
func SetConditions(conds *[]metav1.Condition, generation int64, o Outcome) {
	status := metav1.ConditionFalse
	if o.Phase == PhaseReady {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: status, Reason: o.Reason, Message: o.Message,
		ObservedGeneration: generation,
	})
	setAbnormal(conds, v1alpha1.ConditionReconciling, o.Phase == PhaseProgressing, generation, o)
	setAbnormal(conds, v1alpha1.ConditionStalled, o.Phase == PhaseStalled, generation, o)
	boundMessages(*conds)
}

func setAbnormal(conds *[]metav1.Condition, condType string, active bool, generation int64, o Outcome) {
	if !active {
		meta.RemoveStatusCondition(conds, condType)
		return
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: condType, Status: metav1.ConditionTrue, Reason: o.Reason, Message: o.Message,
		ObservedGeneration: generation,
	})
}

// boundMessages cuts every message of conds to MaxConditionMessage.
func boundMessages(conds []metav1.Condition) {
	for i := range conds {
		conds[i].Message = quote.Cut(conds[i].Message, MaxConditionMessage)
	}
}

// changesState reports whether o differs from the Ready condition in conds,
// that is whether it is worth an event.
func changesState(conds []metav1.Condition, o Outcome) bool {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	return c == nil || c.Reason != o.Reason || (c.Status == metav1.ConditionTrue) != (o.Phase == PhaseReady)
}

// EventType is Normal for progress and success, Warning for trouble: a
// run that is running, an object waiting its turn or deleting its remote
// copy is in its normal course.
func EventType(o Outcome) string {
	switch {
	case o.Phase == PhaseReady,
		o.Phase == PhasePaused,
		o.Reason == v1alpha1.ReasonCreating,
		o.Reason == v1alpha1.ReasonDeleting,
		o.Reason == v1alpha1.ReasonDeletingRemote,
		o.Reason == v1alpha1.ReasonPending,
		o.Reason == v1alpha1.ReasonRunning:
		return corev1.EventTypeNormal
	default:
		return corev1.EventTypeWarning
	}
}

// ReadyOutcome returns the outcome a True Ready condition records, if any.
func ReadyOutcome(conds []metav1.Condition) (Outcome, bool) {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionTrue {
		return Outcome{}, false
	}
	return Ready(c.Reason, c.Message), true
}

// StalledOn returns the Stalled condition if the object is already stalled
// for reason at generation, or nil.
func StalledOn(conds []metav1.Condition, reason string, generation int64) *metav1.Condition {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionStalled)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason || c.ObservedGeneration != generation {
		return nil
	}
	return c
}
