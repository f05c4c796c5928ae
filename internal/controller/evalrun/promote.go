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

package evalrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/quote"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/verdict"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=systems;systemversions,verbs=get;list;watch
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=systems,verbs=patch

// errStaleCache retries a reconcile whose cached run does not show yet
// what the stored one records.
var errStaleCache = errors.New("the cache is behind the stored EvaluationRun")

// promote makes the SystemVersion of a judged run with spec.promote its
// System's production version, once, and says so in the run's Promoted
// condition: through the System's client (the service's PATCH
// /systems/{id}), then in the System's production-version-id annotation,
// which a standalone System reports as its production version and which
// wakes the System's reconciler to report it. A run that did not pass
// records that it promoted nothing. after > 0 retries when the service's
// limits allow; an error retries with backoff.
func (r *Reconciler) promote(ctx context.Context, e *v1alpha1.EvaluationRun) (after time.Duration, err error) {
	if !ptr.Deref(e.Spec.Promote, false) || promotionDecided(e.Status.Conditions) {
		return 0, nil
	}
	if e.Status.Verdict != verdict.Passed {
		setPromoted(e, metav1.ConditionFalse, v1alpha1.ReasonNotPassed, fmt.Sprintf(
			"the run is %s: the System's production version is left as it was", e.Status.Verdict))
		return 0, nil
	}
	// A promotion recorded by an earlier reconcile may not be in the cache
	// yet: the stored run says whether to send it.
	live := &v1alpha1.EvaluationRun{}
	if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(e), live); err != nil {
		return 0, fmt.Errorf("reading the run before promoting: %w", err)
	}
	if promotionDecided(live.Status.Conditions) {
		return 0, errStaleCache
	}
	sys, v, why, err := r.systemOf(ctx, e)
	switch {
	case err != nil:
		setPromoted(e, metav1.ConditionUnknown, v1alpha1.ReasonPromoting, "reading the run's System: "+err.Error())
		return 0, err
	case why != "":
		setPromoted(e, metav1.ConditionFalse, v1alpha1.ReasonPromotionFailed, why)
		return 0, nil
	}
	versionID := e.Status.SystemVersionID
	conn, err := r.Connector.Connect(ctx, sys)
	if err == nil {
		_, err = conn.System(sys).Promote(ctx, sys.RecordedID(), versionID)
	}
	if err != nil {
		return r.promotionFailed(e, err)
	}
	if err := kit.PatchAnnotations(ctx, r.Client, sys, map[string]any{
		v1alpha1.ProductionVersionAnnotation: versionID}); err != nil {
		setPromoted(e, metav1.ConditionUnknown, v1alpha1.ReasonPromoting, "recording the production version on System "+
			sys.Name+": "+err.Error())
		return 0, err
	}
	msg := fmt.Sprintf("made SystemVersion %s (%s) the production version of System %s", v.Name, versionID, sys.Name)
	r.Recorder.Eventf(e, sys, corev1.EventTypeNormal, v1alpha1.ReasonPromoted, "Promote", "%s", msg)
	setPromoted(e, metav1.ConditionTrue, v1alpha1.ReasonPromoted, msg)
	return 0, nil
}

// promotionFailed records a failed promotion: one the service's limits
// held back comes back when they allow, one that may pass is retried with
// backoff, and one the service refused is not retried.
func (r *Reconciler) promotionFailed(e *v1alpha1.EvaluationRun, err error) (time.Duration, error) {
	if after, ok := remote.ThrottledFor(err); ok {
		setPromoted(e, metav1.ConditionUnknown, v1alpha1.ReasonPromoting, "waiting for the service's limits")
		return after, nil
	}
	o, res, rerr := kit.UpstreamFailure(err)
	if _, isConn := errors.AsType[*remote.ServiceError](err); isConn {
		o, res, rerr = kit.ConnectFailure(err)
	}
	if rerr != nil || res.RequeueAfter > 0 {
		setPromoted(e, metav1.ConditionUnknown, v1alpha1.ReasonPromoting, o.Message)
		return res.RequeueAfter, rerr
	}
	setPromoted(e, metav1.ConditionFalse, v1alpha1.ReasonPromotionFailed, o.Message)
	return 0, nil
}

// systemOf is the SystemVersion the run names (spec.systemVersionRef) and
// its System, both as the cluster holds them, or why the run cannot use
// them, a sentence: the version must still be the one the run judged.
func (r *Reconciler) systemOf(ctx context.Context, e *v1alpha1.EvaluationRun) (
	sys *v1alpha1.System, v *v1alpha1.SystemVersion, why string, err error) {
	ref := e.Spec.SystemVersionRef
	if ref == nil {
		return nil, nil, "the run names no SystemVersion in spec.systemVersionRef", nil
	}
	v = &v1alpha1.SystemVersion{}
	if why, err := r.get(ctx, e.Namespace, "SystemVersion", ref.Name, v); why != "" || err != nil {
		return nil, nil, why, err
	}
	if e.Status.SystemVersionID == "" {
		return nil, nil, "the run records no system version it judged (status.systemVersionId)", nil
	}
	if id := v.RecordedID(); id != e.Status.SystemVersionID {
		return nil, nil, fmt.Sprintf("SystemVersion %s is no longer version %s, which the run judged",
			ref.Name, e.Status.SystemVersionID), nil
	}
	sys = &v1alpha1.System{}
	if why, err := r.get(ctx, e.Namespace, "System", v.Spec.SystemRef.Name, sys); why != "" || err != nil {
		return nil, nil, why, err
	}
	if id := sys.RecordedID(); id == "" || id != v.Status.SystemID {
		return nil, nil, fmt.Sprintf("System %s is no longer System %s of SystemVersion %s",
			sys.Name, v.Status.SystemID, ref.Name), nil
	}
	return sys, v, "", nil
}

// get reads the object kind name of namespace ns into obj; why says it
// does not exist.
func (r *Reconciler) get(ctx context.Context, ns, kind, name string, obj client.Object) (why string, err error) {
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); {
	case apierrors.IsNotFound(err):
		return kind + " " + name + " does not exist", nil
	case err != nil:
		return "", fmt.Errorf("reading %s %s: %w", kind, name, err)
	}
	return "", nil
}

// promotionDecided reports whether the Promoted condition says the
// promotion is done or will not be: True, or False.
func promotionDecided(conds []metav1.Condition) bool {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionPromoted)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// setPromoted sets e's Promoted condition.
func setPromoted(e *v1alpha1.EvaluationRun, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&e.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionPromoted, Status: status,
		Reason: reason, Message: quote.Bounded(msg), ObservedGeneration: e.Generation})
}
