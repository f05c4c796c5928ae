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
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Options configure the three reconcilers.
type Options struct {
	// Service is the Evaluation Service: evalapi.Client or evalapi.Standalone.
	Service evalapi.Service
	// Standalone is true when Service is evalapi.Standalone; objects then
	// need no API key.
	Standalone bool
	// DefaultAPIKeySecret names the Secret, in each object's namespace, used
	// when an object has no apiKeySecretRef.
	DefaultAPIKeySecret string
	// BulkDeleteBatchSize is the number of testcase ids per bulk-delete call.
	BulkDeleteBatchSize int
	// MaxConcurrentReconciles bounds the parallel reconciles of each kind.
	MaxConcurrentReconciles int
}

// secretRefIndex indexes objects by the name of the Secret holding their key.
const secretRefIndex = ".spec.apiKeySecretRef.name" //nolint:gosec // an index name, not a credential

// Backoff of failed reconciles: from one second up to five minutes. Slower
// at the start than controller-runtime's default so an upstream outage is not
// hammered.
const (
	backoffBase = time.Second
	backoffMax  = 5 * time.Minute
)

// SetupWithManager registers the three reconcilers with mgr.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.Service == nil {
		return errors.New("controller: Options.Service is required")
	}
	if opts.BulkDeleteBatchSize <= 0 {
		opts.BulkDeleteBatchSize = 100
	}
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 1
	}
	b := base{
		client:   mgr.GetClient(),
		recorder: mgr.GetEventRecorder("eval-operator"),
		creds: &credentials{
			reader:        mgr.GetAPIReader(),
			defaultSecret: opts.DefaultAPIKeySecret,
			required:      !opts.Standalone,
		},
		service: opts.Service,
	}
	kinds := []struct {
		obj  v1alpha1.Object
		list client.ObjectList
		r    reconcile.Reconciler
		// preds filter update events of the kind itself: status writes must
		// not re-trigger, or a failing object would loop.
		preds predicate.Predicate
	}{
		{&v1alpha1.Metric{}, &v1alpha1.MetricList{}, &MetricReconciler{base: b}, metricChanged},
		{&v1alpha1.TestsetDeletion{}, &v1alpha1.TestsetDeletionList{}, &TestsetDeletionReconciler{base: b},
			predicate.GenerationChangedPredicate{}},
		{&v1alpha1.TestcaseDeletion{}, &v1alpha1.TestcaseDeletionList{},
			&TestcaseDeletionReconciler{base: b, batchSize: opts.BulkDeleteBatchSize},
			predicate.GenerationChangedPredicate{}},
	}
	ctx := context.Background()
	for _, k := range kinds {
		if err := mgr.GetFieldIndexer().IndexField(ctx, k.obj, secretRefIndex, b.creds.indexSecretRef); err != nil {
			return fmt.Errorf("indexing %T by Secret: %w", k.obj, err)
		}
		err := ctrl.NewControllerManagedBy(mgr).
			For(k.obj, builder.WithPredicates(k.preds)).
			// Metadata only: Secret data is read at reconcile time and never cached.
			Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(referencingSecret(mgr.GetClient(), k.list)),
				builder.OnlyMetadata).
			WithOptions(controller.Options{
				MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
				RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
					backoffBase, backoffMax),
			}).
			Complete(k.r)
		if err != nil {
			return fmt.Errorf("setting up the %T controller: %w", k.obj, err)
		}
	}
	return nil
}

func (c *credentials) indexSecretRef(obj client.Object) []string {
	if ref := c.refOf(obj.(v1alpha1.Object)); ref != nil {
		return []string{ref.Name}
	}
	return nil
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
		var reqs []reconcile.Request
		_ = meta.EachListItem(l, func(o runtime.Object) error {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o.(client.Object))})
			return nil
		})
		return reqs
	}
}

// base holds what the three reconcilers share.
type base struct {
	client   client.Client
	recorder recorder.EventRecorder
	creds    *credentials
	service  evalapi.Service
}

// reconcileObject is the shape shared by the three Reconciles: read the
// object, let sync take one step (it gets the status as it was, which it may
// move along if it patches on the way), record the outcome, and write the
// status once at the end.
func reconcileObject[T v1alpha1.Object, S any, PS interface {
	*S
	DeepCopy() *S
}](ctx context.Context, b *base, req ctrl.Request, obj T, status func(T) PS,
	sync func(context.Context, T, PS) (outcome, ctrl.Result, error)) (ctrl.Result, error) {
	if err := b.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	before := PS(status(obj).DeepCopy())

	o, res, err := sync(ctx, obj, before)
	ev := b.record(obj, o)

	base, ok := obj.DeepCopyObject().(T)
	if !ok {
		return ctrl.Result{}, fmt.Errorf("copying %T", obj)
	}
	*status(base) = *before
	if perr := b.commit(ctx, obj, base, !equality.Semantic.DeepEqual(before, status(obj)), ev); perr != nil {
		return ctrl.Result{}, perr
	}
	return res, err
}

// record writes o into obj's conditions and observedGeneration. It returns
// the event to emit once the status is saved, or nil when o changes nothing.
func (b *base) record(obj v1alpha1.Object, o outcome) *outcome {
	var ev *outcome
	if changesState(*obj.GetConditions(), o) {
		ev = &o
	}
	setConditions(obj.GetConditions(), obj.GetGeneration(), o)
	obj.SetObservedGeneration(obj.GetGeneration())
	return ev
}

// commit patches obj's status from base (a copy of obj holding the status
// before this reconcile) when it changed, then emits ev. A reconcile that
// changes nothing writes nothing. The patch is optimistic: a reconcile that
// worked from a stale copy fails with a conflict and runs again, rather
// than overwrite a newer status.
func (b *base) commit(ctx context.Context, obj, base client.Object, changed bool, ev *outcome) error {
	if changed {
		err := b.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("patching status: %w", err)
		}
	}
	if ev != nil {
		b.recorder.Eventf(obj, nil, eventType(*ev), ev.reason, "Reconcile", "%s", ev.message)
	}
	return nil
}
