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

package controller

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// phase is where an object stands after a reconcile.
type phase int

const (
	// phaseProgressing: not there yet; the operator retries by itself.
	phaseProgressing phase = iota
	// phaseReady: the goal is reached.
	phaseReady
	// phaseStalled: the operator cannot go on until a person acts.
	phaseStalled
	// phasePaused: a person paused the object before it reached its goal;
	// the operator does nothing. Neither in progress nor stalled.
	phasePaused
)

func (p phase) String() string {
	switch p {
	case phaseProgressing:
		return "Progressing"
	case phaseReady:
		return "Ready"
	case phaseStalled:
		return "Stalled"
	case phasePaused:
		return "Paused"
	default:
		return fmt.Sprintf("phase(%d)", int(p))
	}
}

// outcome is the result of one reconcile, from which the conditions follow.
type outcome struct {
	phase   phase
	reason  string
	message string
}

func ready(reason, message string) outcome { return outcome{phaseReady, reason, message} }
func progressing(reason, message string) outcome {
	return outcome{phaseProgressing, reason, message}
}
func stalled(reason, message string) outcome { return outcome{phaseStalled, reason, message} }

// setConditions writes Ready, Reconciling and Stalled for o. Ready is always
// present and carries o's reason; Reconciling and Stalled follow kstatus'
// abnormal-true convention and are present only while True.
func setConditions(conds *[]metav1.Condition, generation int64, o outcome) {
	status := metav1.ConditionFalse
	if o.phase == phaseReady {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: status, Reason: o.reason, Message: o.message,
		ObservedGeneration: generation,
	})
	setAbnormal(conds, v1alpha1.ConditionReconciling, o.phase == phaseProgressing, generation, o)
	setAbnormal(conds, v1alpha1.ConditionStalled, o.phase == phaseStalled, generation, o)
}

func setAbnormal(conds *[]metav1.Condition, condType string, active bool, generation int64, o outcome) {
	if !active {
		meta.RemoveStatusCondition(conds, condType)
		return
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: condType, Status: metav1.ConditionTrue, Reason: o.reason, Message: o.message,
		ObservedGeneration: generation,
	})
}

// changesState reports whether o differs from the Ready condition in conds,
// that is whether it is worth an event.
func changesState(conds []metav1.Condition, o outcome) bool {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	return c == nil || c.Reason != o.reason || (c.Status == metav1.ConditionTrue) != (o.phase == phaseReady)
}

// eventType is Normal for progress and success, Warning for trouble.
func eventType(o outcome) string {
	switch {
	case o.phase == phaseReady,
		o.phase == phasePaused,
		o.reason == v1alpha1.ReasonCreating,
		o.reason == v1alpha1.ReasonDeleting:
		return corev1.EventTypeNormal
	default:
		return corev1.EventTypeWarning
	}
}

// readyOutcome returns the outcome a True Ready condition records, if any.
func readyOutcome(conds []metav1.Condition) (outcome, bool) {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionTrue {
		return outcome{}, false
	}
	return ready(c.Reason, c.Message), true
}

// stalledOn returns the Stalled condition if the object is already stalled
// for reason at generation, or nil.
func stalledOn(conds []metav1.Condition, reason string, generation int64) *metav1.Condition {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionStalled)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason || c.ObservedGeneration != generation {
		return nil
	}
	return c
}
