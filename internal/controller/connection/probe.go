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

// Package connection reconciles the connections, EvaluationServices and
// ClusterEvaluationServices: each probed with its own key through the
// limits its objects' calls use, its Ready condition saying whether it can
// be used, and its users counted so that it is not deleted from under the
// objects whose remote ids belong to it.
package connection

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=evaluationservices;clusterevaluationservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=evaluationservices/status;clusterevaluationservices/status,verbs=get;update;patch
// A ClusterEvaluationService's namespaceSelector is matched against the namespace's labels.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// defaultProbeInterval is how often a service is probed when nothing changes.
const defaultProbeInterval = 10 * time.Minute

// serviceReconciler probes one service kind: on every change of a service
// or of its key's Secret, and every probeInterval.
type serviceReconciler[T v1alpha1.ServiceObject] struct {
	client    client.Client
	newObject func() T
	// connector probes through the service's own client and limits.
	connector *remote.Connector
	interval  time.Duration
}

// Reconcile probes one service and records the outcome in its status.
func (r *serviceReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	svc := r.newObject()
	if err := r.client.Get(ctx, req.NamespacedName, svc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := svc.DeepCopyObject().(client.Object)
	o, res, err := r.probe(ctx, svc)
	if after, throttled := remote.ThrottledFor(err); throttled {
		// The service's own limits hold the probe back: nothing was sent.
		return ctrl.Result{RequeueAfter: after}, nil
	}
	st := svc.GetServiceStatus()
	st.Endpoint = endpointOf(svc.GetConnection())
	st.ObservedGeneration = svc.GetGeneration()
	kit.SetConditions(&st.Conditions, svc.GetGeneration(), o)
	if perr := r.client.Status().Patch(ctx, svc, client.MergeFrom(before)); client.IgnoreNotFound(perr) != nil {
		return ctrl.Result{}, errors.Join(err, fmt.Errorf("writing the status: %w", perr))
	}
	return res, err
}

// probe sends GET /projects?limit=1 with the service's key.
func (r *serviceReconciler[T]) probe(ctx context.Context, svc T) (kit.Outcome, ctrl.Result, error) {
	conn := svc.GetConnection()
	if conn.Standalone != nil {
		return kit.Ready(v1alpha1.ReasonStandalone, "the cluster is the system of record for the objects that use this service"),
			ctrl.Result{}, nil
	}
	if _, ref := svc.GetKeySecret(); ref == nil {
		return kit.Ready(v1alpha1.ReasonNotProbed, "no apiKeySecretRef, so not probed: the objects that use it send their own keys"),
			ctrl.Result{}, nil
	}
	err := r.connector.Probe(ctx, svc)
	if ok, o, err := kit.KeyFailure(err); ok {
		return o, ctrl.Result{}, err
	}
	if se, ok := errors.AsType[*remote.ServiceError](err); ok {
		return kit.Stalled(se.Reason, se.Message), ctrl.Result{}, nil
	}
	if _, throttled := remote.ThrottledFor(err); throttled {
		return kit.Outcome{}, ctrl.Result{}, err // Reconcile writes nothing
	}
	return probeOutcome(err, r.interval)
}

// probeOutcome maps the probe's answer: Connected, or why not. Only the
// ApiError's code and a bounded, sanitised message of the service reach the
// status; a probe without an answer is retried with backoff.
func probeOutcome(err error, interval time.Duration) (kit.Outcome, ctrl.Result, error) {
	every := ctrl.Result{RequeueAfter: interval}
	switch remote.FailureOf(err) {
	case 0:
		if err != nil {
			return kit.Progressing(v1alpha1.ReasonUnreachable, "probing the service failed"), ctrl.Result{}, err
		}
		return kit.Ready(v1alpha1.ReasonConnected, "GET /projects answered with the service's key"), every, nil
	case remote.Unauthorized:
		return kit.Stalled(v1alpha1.ReasonUnauthorized,
			"the service refused the key (401): update the Secret apiKeySecretRef names"), every, nil
	case remote.AddressNotAllowed:
		return kit.Stalled(v1alpha1.ReasonRejected, "the url may not be reached: "+remote.Summary(err)+
			"; change it, or run the manager with --allow-private-service-addresses"), every, nil
	case remote.Rejected, remote.NotFound:
		return kit.Stalled(v1alpha1.ReasonRejected, "the service refused GET /projects: "+remote.Summary(err)+
			"; check url"), every, nil
	}
	summary := remote.Summary(err)
	return kit.Progressing(v1alpha1.ReasonUnreachable, "no usable answer to GET /projects: "+summary+"; retrying"),
		ctrl.Result{}, errors.New("probing the service: " + summary)
}

// endpointOf is the URL's host, or "standalone".
func endpointOf(conn *v1alpha1.ServiceConnection) string {
	if conn.Standalone != nil {
		return "standalone"
	}
	u, err := url.Parse(string(conn.URL))
	if err != nil {
		return ""
	}
	return u.Host
}

// Setup registers the reconcilers of the two service kinds with mgr: each
// service probed through connector every interval (ten minutes when 0) and
// on every change, and its users counted.
func Setup(mgr ctrl.Manager, connector *remote.Connector, interval time.Duration) error {
	if interval <= 0 {
		interval = defaultProbeInterval
	}
	namespaced := &serviceReconciler[*v1alpha1.EvaluationService]{client: mgr.GetClient(), connector: connector,
		newObject: func() *v1alpha1.EvaluationService { return &v1alpha1.EvaluationService{} }, interval: interval}
	cluster := &serviceReconciler[*v1alpha1.ClusterEvaluationService]{client: mgr.GetClient(), connector: connector,
		newObject: func() *v1alpha1.ClusterEvaluationService { return &v1alpha1.ClusterEvaluationService{} }, interval: interval}
	if err := setupServiceReconciler(mgr, namespaced, &v1alpha1.EvaluationServiceList{}); err != nil {
		return err
	}
	if err := setupServiceReconciler(mgr, cluster, &v1alpha1.ClusterEvaluationServiceList{}); err != nil {
		return err
	}
	rec := kit.BoundedEvents(mgr.GetEventRecorder("eval-operator"))
	err := setupInUseReconciler(mgr, &inUseReconciler[*v1alpha1.EvaluationService]{client: mgr.GetClient(), recorder: rec,
		newObject: namespaced.newObject, connector: connector}, v1alpha1.KindEvaluationService)
	if err != nil {
		return err
	}
	return setupInUseReconciler(mgr, &inUseReconciler[*v1alpha1.ClusterEvaluationService]{client: mgr.GetClient(), recorder: rec,
		newObject: cluster.newObject, connector: connector}, v1alpha1.KindClusterEvaluationService)
}

func setupServiceReconciler[T v1alpha1.ServiceObject](mgr ctrl.Manager, r *serviceReconciler[T], list client.ObjectList) error {
	obj := r.newObject()
	err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, kit.ServiceKeyIndex, func(o client.Object) []string {
		if ns, ref := o.(T).GetKeySecret(); ref != nil {
			return []string{ns + "/" + ref.Name}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("indexing %T by Secret: %w", obj, err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(obj, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// Metadata only: Secret data is read at probe time and never cached.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, s client.Object) []reconcile.Request {
			l := list.DeepCopyObject().(client.ObjectList)
			if err := mgr.GetClient().List(ctx, l, client.MatchingFields{kit.ServiceKeyIndex: s.GetNamespace() + "/" + s.GetName()}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "listing services that use a Secret", "secret", s.GetName())
				return nil
			}
			return kit.RequestsFor(l)
		}), builder.OnlyMetadata).
		Complete(kit.ConflictsRequeue{Reconciler: r, After: time.Second})
	if err != nil {
		return fmt.Errorf("setting up the %T controller: %w", obj, err)
	}
	return nil
}
