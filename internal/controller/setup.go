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

// Package controller reconciles Metrics, TestsetDeletions and
// TestcaseDeletions against the Evaluation Service.
package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Options configure the three reconcilers.
type Options struct {
	// Connector resolves the service each object uses (required).
	Connector *remote.Connector
	// MaxConcurrentReconciles bounds the parallel reconciles of each kind.
	MaxConcurrentReconciles int
	// Backoff is the first delay before a failed call is retried; it doubles
	// with each failure up to five minutes. Defaults to one second.
	Backoff time.Duration
	// Clock tells the time of completions, TTLs, pending creates and drift
	// checks. Defaults to the real clock.
	Clock clock.PassiveClock

	// ServiceProbeInterval is how often a service is probed when nothing
	// changes. Defaults to ten minutes.
	ServiceProbeInterval time.Duration

	// RequestTimeout is the services' per-request timeout (--api-timeout): a
	// create cut off mid-flight is settled from the service's list once this,
	// plus a margin, has passed since its pending mark. Defaults to
	// evalapi.DefaultTimeout.
	RequestTimeout time.Duration
}

// secretRefIndex indexes objects by the name of the Secret holding their key.
const secretRefIndex = ".spec.apiKeySecretRef.name" //nolint:gosec // an index name, not a credential

// Backoff of failed reconciles: from one second up to five minutes. Slower
// at the start than controller-runtime's default so an upstream outage is not
// hammered.
const (
	defaultBackoff = time.Second
	backoffMax     = 5 * time.Minute
)

// SetupWithManager registers the three reconcilers with mgr.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.Connector == nil {
		return errors.New("controller: Options.Connector is required")
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 1
	}
	if opts.Backoff <= 0 {
		opts.Backoff = defaultBackoff
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	b := base{
		client:    guardTrimmed(mgr.GetClient()),
		recorder:  mgr.GetEventRecorder("eval-operator"),
		connector: opts.Connector,
		reader:    mgr.GetAPIReader(),
		clock:     opts.Clock,
		backoff:   min(opts.Backoff, backoffMax),
	}
	kinds := []struct {
		obj  v1alpha1.Object
		list client.ObjectList
		r    reconcile.Reconciler
		// preds filter update events of the kind itself: status writes must
		// not re-trigger, or a failing object would loop.
		preds predicate.Predicate
	}{
		{&v1alpha1.Metric{}, &v1alpha1.MetricList{}, newMetricReconciler(b, opts),
			predicate.Or(metricChanged, personControlled)},
		{&v1alpha1.TestsetDeletion{}, &v1alpha1.TestsetDeletionList{}, newTestsetDeletionReconciler(b),
			predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, personControlled)},
		{&v1alpha1.TestcaseDeletion{}, &v1alpha1.TestcaseDeletionList{}, newTestcaseDeletionReconciler(b),
			predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, personControlled)},
	}
	ctx := context.Background()
	if err := setupServiceReconcilers(mgr, opts); err != nil {
		return err
	}
	if err := indexRemoteIDs(ctx, mgr); err != nil {
		return err
	}
	for _, k := range kinds {
		if err := mgr.GetFieldIndexer().IndexField(ctx, k.obj, secretRefIndex, indexSecretRef(opts.Connector)); err != nil {
			return fmt.Errorf("indexing %T by Secret: %w", k.obj, err)
		}
		if err := mgr.GetFieldIndexer().IndexField(ctx, k.obj, resolvedServiceIndex, indexResolvedService); err != nil {
			return fmt.Errorf("indexing %T by service: %w", k.obj, err)
		}
		if err := mgr.GetFieldIndexer().IndexField(ctx, k.obj, namedServiceIndex, indexNamedService); err != nil {
			return fmt.Errorf("indexing %T by the service it names: %w", k.obj, err)
		}
		users := serviceUsers{client: mgr.GetClient(), list: k.list}
		err := ctrl.NewControllerManagedBy(mgr).
			For(k.obj, builder.WithPredicates(k.preds)).
			// Metadata only: Secret data is read at reconcile time and never cached.
			Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(referencingSecret(mgr.GetClient(), k.list)),
				builder.OnlyMetadata).
			Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(users.ofServicesUsing),
				builder.OnlyMetadata).
			Watches(&v1alpha1.EvaluationService{}, handler.EnqueueRequestsFromMapFunc(users.of),
				builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			Watches(&v1alpha1.ClusterEvaluationService{}, handler.EnqueueRequestsFromMapFunc(users.of),
				builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			WithOptions(controller.Options{
				MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
				RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
					b.backoff, backoffMax),
			}).
			Complete(conflictsRequeue{Reconciler: k.r, after: b.backoff})
		if err != nil {
			return fmt.Errorf("setting up the %T controller: %w", k.obj, err)
		}
	}
	return nil
}

func newMetricReconciler(b base, opts Options) *MetricReconciler {
	return &MetricReconciler{base: b, drift: newDriftSchedules(opts.Clock), recovery: newRecovery(opts.RequestTimeout)}
}

// indexSecretRef indexes an object by the Secret its key is read from.
func indexSecretRef(c *remote.Connector) client.IndexerFunc {
	return func(obj client.Object) []string {
		if name := c.KeySecretName(obj.(v1alpha1.Object)); name != "" {
			return []string{name}
		}
		return nil
	}
}

// referencingSecret maps a Secret to the objects of list's kind in its
// namespace that take their key from it, so a created or rotated Secret
// re-triggers them.
func referencingSecret(c client.Client, list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, secret client.Object) []reconcile.Request {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, l, client.InNamespace(secret.GetNamespace()),
			client.MatchingFields{secretRefIndex: secret.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing objects that use a Secret", "secret", secret.GetName())
			return nil
		}
		return requestsFor(l)
	}
}

// requestsFor is a request for each object of l.
func requestsFor(l client.ObjectList) []reconcile.Request {
	var reqs []reconcile.Request
	_ = meta.EachListItem(l, func(o runtime.Object) error {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o.(client.Object))})
		return nil
	})
	return reqs
}

// base holds what the three reconcilers share.
type base struct {
	client    client.Client
	recorder  recorder.EventRecorder
	connector *remote.Connector
	// reader reads from the API server, uncached.
	reader client.Reader
	clock  clock.PassiveClock
	// backoff is the first retry delay of a failed call.
	backoff time.Duration
}

// getLive reads the object of req into obj and reports whether there is
// anything to reconcile: not when the object is gone, nor when it is being
// deleted without the operator's finalizer (nothing is left to do).
func (b *base) getLive(ctx context.Context, req ctrl.Request, obj v1alpha1.Object) (bool, error) {
	log := ctrl.LoggerFrom(ctx).V(1)
	if err := b.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("Skipped: not found")
			return false, nil
		}
		return false, fmt.Errorf("reading %s: %w", req.NamespacedName, err)
	}
	if !obj.GetDeletionTimestamp().IsZero() && !controllerutil.ContainsFinalizer(obj, v1alpha1.MetricFinalizer) {
		log.Info("Skipped: being deleted")
		return false, nil
	}
	return true, nil
}
