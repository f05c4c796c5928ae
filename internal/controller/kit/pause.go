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
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// pausedMessage tells a person how to resume.
const pausedMessage = "paused by annotation " + v1alpha1.PausedAnnotation +
	`="true": no calls to the service and no writes until it is removed`

// beforePause is the suffix of the condition types that keep, while an
// object is paused, the conditions the pause replaced.
const beforePause = "BeforePause"

// pausable are the condition types a pause replaces, and its end restores.
var pausable = []string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled}

// HoldIfPaused is the pause step of every kind. A paused object gets an
// outcome with reason Paused, and the caller stops there: the first
// reconcile records it, later ones find nothing to change, so nothing is
// called or written. The conditions the pause replaces are kept under
// "<type>BeforePause" and put back once the annotation is gone, so the
// object resumes where it stood: a Ready Metric stays Ready with its reason
// and no call, a Rejected one stays stalled.
func HoldIfPaused(obj v1alpha1.Object) (Outcome, bool) {
	conds := obj.GetConditions()
	if obj.GetAnnotations()[v1alpha1.PausedAnnotation] != "true" {
		resume(conds)
		return Outcome{}, false
	}
	if !isPaused(*conds) {
		renameConditions(conds, func(t string) (string, bool) {
			return t + beforePause, slices.Contains(pausable, t)
		})
	}
	return pausedOutcome(*conds, obj.GetGeneration()), true
}

// pausedOutcome keeps Ready True while paused when the goal of the current
// spec was reached before the pause (the remote Metric exists, the deletion
// completed), and False otherwise. kstatus has no paused state and reads any
// Ready False as in progress, so a paused object that reached its goal must
// stay True for Flux and kubectl wait to call it Current; Argo CD shows every
// paused object Suspended.
func pausedOutcome(conds []metav1.Condition, generation int64) Outcome {
	o := Outcome{PhasePaused, v1alpha1.ReasonPaused, pausedMessage}
	before := meta.FindStatusCondition(conds, v1alpha1.ConditionReady+beforePause)
	if before != nil && before.Status == metav1.ConditionTrue && before.ObservedGeneration == generation {
		o.Phase = PhaseReady
	}
	return o
}

// resume puts back the conditions a pause replaced, if the object was paused.
func resume(conds *[]metav1.Condition) {
	if !isPaused(*conds) {
		return
	}
	meta.RemoveStatusCondition(conds, v1alpha1.ConditionReady)
	renameConditions(conds, func(t string) (string, bool) {
		orig, ok := strings.CutSuffix(t, beforePause)
		return orig, ok && slices.Contains(pausable, orig)
	})
}

func isPaused(conds []metav1.Condition) bool {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	return c != nil && c.Reason == v1alpha1.ReasonPaused
}

// renameConditions gives each condition the type rename returns for it, when it says so.
func renameConditions(conds *[]metav1.Condition, rename func(string) (string, bool)) {
	for i := range *conds {
		if t, ok := rename((*conds)[i].Type); ok {
			(*conds)[i].Type = t
		}
	}
}

// retryMaxLength bounds status.observedRetry (its CRD MaxLength, in characters).
const retryMaxLength = 253

// StillRejected holds an object the service rejected at its current
// generation, so the refused request is not sent again, unless a person set
// the retry annotation to a value not acted on yet. That value is then
// recorded in status.observedRetry, with Ready reason retrying, before the
// request is sent again, once: the writes that request makes answer with
// the stored status, which must already hold it.
func StillRejected(ctx context.Context, p *StatusPatcher, obj v1alpha1.Object, retrying string) (Outcome, bool, error) {
	c := StalledOn(*obj.GetConditions(), v1alpha1.ReasonRejected, obj.GetGeneration())
	if c == nil {
		return Outcome{}, false, nil
	}
	v, ok := obj.GetAnnotations()[v1alpha1.RetryAnnotation]
	// Longer values are compared, and recorded, by their first characters.
	if r := []rune(v); len(r) > retryMaxLength {
		v = string(r[:retryMaxLength])
	}
	if !ok || v == obj.GetObservedRetry() {
		return Stalled(c.Reason, c.Message), true, nil
	}
	obj.SetObservedRetry(v)
	o := Progressing(retrying, "retrying the rejected request, as annotation "+v1alpha1.RetryAnnotation+" asks")
	if err := p.Checkpoint(ctx, o); err != nil {
		return o, true, err
	}
	return Outcome{}, false, nil
}

// PersonControlled lets through the edits of the paused and retry
// annotations, which change no generation but call for a reconcile.
var PersonControlled = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, cur := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
		return annotationChanged(old, cur, v1alpha1.PausedAnnotation) ||
			annotationChanged(old, cur, v1alpha1.RetryAnnotation)
	},
}

// IDEdited passes a person's edit of an id annotation (an adoption, or
// the id of a create whose answer was lost), not the reconciler's own
// write of it, which drops the create-pending annotation in the same patch.
func IDEdited(annotation string) predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, cur := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
			_, wasPending := old[v1alpha1.CreatePendingAnnotation]
			_, pending := cur[v1alpha1.CreatePendingAnnotation]
			return annotationChanged(old, cur, annotation) && (pending || !wasPending)
		},
	}
}

func annotationChanged(old, cur map[string]string, key string) bool {
	o, hadOld := old[key]
	c, hasCur := cur[key]
	return hadOld != hasCur || o != c
}
