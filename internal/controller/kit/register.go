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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// secretRefIndex indexes objects by the name of the Secret holding their key.
const secretRefIndex = ".spec.apiKeySecretRef.name" //nolint:gosec // an index name, not a credential

// Kind is one kind of object reconciled against the service it resolves to.
type Kind struct {
	Object v1alpha1.Object
	List   client.ObjectList
	// Reconciler reconciles one object of the kind; an optimistic-lock
	// conflict it returns is a requeue, not an error.
	Reconciler reconcile.Reconciler
	// Predicates filter update events of the kind itself: status writes must
	// not re-trigger, or a failing object would loop.
	Predicates predicate.Predicate
	// Watches are the kind's own sources besides Secrets and services.
	Watches []Watch
}

// Watch re-triggers the objects Map returns when an Object changes.
type Watch struct {
	Object  client.Object
	Map     handler.MapFunc
	Options []builder.WatchesOption
}

// Register sets up k's controller with mgr, with workers reconciles in
// parallel and b's backoff: the kind indexed by its key's Secret, by the
// service it resolved to and by the one it names, and re-triggered when
// its Secret or a service it may resolve to appears, changes or goes.
func Register(mgr ctrl.Manager, b Base, workers int, k Kind) error {
	ctx := context.Background()
	indexes := []struct {
		name string
		fn   client.IndexerFunc
	}{
		{secretRefIndex, indexSecretRef(b.Connector)},
		{ResolvedServiceIndex, indexResolvedService},
		{namedServiceIndex, indexNamedService},
	}
	for _, ix := range indexes {
		if err := mgr.GetFieldIndexer().IndexField(ctx, k.Object, ix.name, ix.fn); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", k.Object, ix.name, err)
		}
	}
	users := serviceUsers{client: mgr.GetClient(), list: k.List}
	bld := ctrl.NewControllerManagedBy(mgr)
	for _, w := range k.Watches {
		bld = bld.Watches(w.Object, handler.EnqueueRequestsFromMapFunc(w.Map), w.Options...)
	}
	err := bld.
		For(k.Object, builder.WithPredicates(k.Predicates)).
		// Metadata only: Secret data is read at reconcile time and never cached.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(referencingSecret(mgr.GetClient(), k.List)),
			builder.OnlyMetadata).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(users.ofServicesUsing),
			builder.OnlyMetadata).
		Watches(&v1alpha1.EvaluationService{}, handler.EnqueueRequestsFromMapFunc(users.of),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.ClusterEvaluationService{}, handler.EnqueueRequestsFromMapFunc(users.of),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: workers,
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
				b.Backoff, BackoffMax),
		}).
		Complete(ConflictsRequeue{Reconciler: k.Reconciler, After: b.Backoff})
	if err != nil {
		return fmt.Errorf("setting up the %T controller: %w", k.Object, err)
	}
	return nil
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
		return RequestsFor(l)
	}
}

// RequestsFor is a request for each object of l.
func RequestsFor(l client.ObjectList) []reconcile.Request {
	var reqs []reconcile.Request
	_ = meta.EachListItem(l, func(o runtime.Object) error {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o.(client.Object))})
		return nil
	})
	return reqs
}
