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

package connection

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/kinds"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=evaluationservices;clusterevaluationservices,verbs=update;patch

// inUseReconciler keeps a service's status.users and its finalizer: a
// service that objects still use cannot vanish under them (their remote
// ids belong to it). The probe is another reconciler's; this one only
// counts, from the cache.
type inUseReconciler[T v1alpha1.ServiceObject] struct {
	client    client.Client
	recorder  recorder.EventRecorder
	newObject func() T
	connector *remote.Connector
}

func (r *inUseReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	svc := r.newObject()
	if err := r.client.Get(ctx, req.NamespacedName, svc); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.connector.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	users, holders, err := countUsers(ctx, r.client, svc)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := svc.DeepCopyObject().(T)
	if holders > 0 {
		controllerutil.AddFinalizer(svc, v1alpha1.ServiceFinalizer)
	} else {
		controllerutil.RemoveFinalizer(svc, v1alpha1.ServiceFinalizer)
	}
	if len(before.GetFinalizers()) != len(svc.GetFinalizers()) {
		if err := r.client.Patch(ctx, svc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("updating the finalizers: %w", err))
		}
		before = svc.DeepCopyObject().(T)
	}
	if !svc.GetDeletionTimestamp().IsZero() && holders > 0 {
		r.recorder.Eventf(svc, nil, corev1.EventTypeWarning, v1alpha1.EventInUse, "Delete",
			"%d Metrics or Testsets hold remote ids (or pending creates) of this service; it is deleted once none does "+
				"(delete them, or set their deletionPolicy to Orphan and delete them)", holders)
	}
	if svc.GetServiceStatus().Users == users {
		return ctrl.Result{}, nil
	}
	svc.GetServiceStatus().Users = users
	if err := r.client.Status().Patch(ctx, svc, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("writing status.users: %w", err))
	}
	return ctrl.Result{}, nil
}

// countUsers counts the objects that resolved to svc, and among them the
// Metrics and Testsets that hold it. Only an object svc serves
// resolves to it (status.service), so a namespace it refuses cannot pin it.
func countUsers(ctx context.Context, c client.Client, svc v1alpha1.ServiceObject) (users, holders int32, err error) {
	key, endpoint := remote.ServiceKey(svc), remote.Endpoint(svc)
	for _, k := range kinds.Users() {
		l := k.NewList()
		if err := c.List(ctx, l, client.MatchingFields{kit.ResolvedServiceIndex: key}); err != nil {
			return 0, 0, fmt.Errorf("counting the users of %s: %w", key, err)
		}
		_ = meta.EachListItem(l, func(o runtime.Object) error {
			users++
			if h, ok := o.(v1alpha1.RemoteHolder); ok && holds(h, endpoint) {
				holders++
			}
			return nil
		})
	}
	return users, holders, nil
}

// holds reports whether h holds the service at endpoint: its recorded
// remote copy or pending create belongs to it. One whose id belongs to
// another service (Stalled ServiceChanged) holds nothing here; one recorded
// before the service record existed is taken to hold the service it
// resolved to.
func holds(h v1alpha1.RemoteHolder, endpoint string) bool {
	at := h.GetAnnotations()[v1alpha1.ServiceAnnotation]
	return h.HoldsRemote() && (at == "" || at == endpoint)
}

// usesService enqueues, for the service kind named kind, the services an
// object resolved to before and after an event.
func usesService(kind v1alpha1.ServiceKind) handler.EventHandler {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, o := range objs {
			key := remote.UsersKey(o.(v1alpha1.Object))
			rest, ok := strings.CutPrefix(key, string(kind)+"/")
			if !ok {
				continue
			}
			name := types.NamespacedName{Name: rest}
			if ns, n, namespaced := strings.Cut(rest, "/"); namespaced {
				name = types.NamespacedName{Namespace: ns, Name: n}
			}
			q.Add(reconcile.Request{NamespacedName: name})
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if usage(e.ObjectOld) != usage(e.ObjectNew) {
				enqueue(q, e.ObjectOld, e.ObjectNew)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
	}
}

// use is what the users count sees of an object: the service it resolved
// to, and whether it holds one (a Metric or Testset with a remote id or
// pending create) and at which endpoint.
type use struct {
	key   string
	holds bool
	at    string
}

func usage(obj client.Object) use {
	u := use{key: remote.UsersKey(obj.(v1alpha1.Object))}
	if h, ok := obj.(v1alpha1.RemoteHolder); ok {
		u.holds, u.at = h.HoldsRemote(), h.GetAnnotations()[v1alpha1.ServiceAnnotation]
	}
	return u
}

func setupInUseReconciler[T v1alpha1.ServiceObject](mgr ctrl.Manager, r *inUseReconciler[T], kind v1alpha1.ServiceKind) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(string(kind)) + "-users").
		For(r.newObject())
	for _, k := range kinds.Users() {
		b = b.Watches(k.New(), usesService(kind))
	}
	if err := b.Complete(kit.ConflictsRequeue{Reconciler: r, After: time.Second}); err != nil {
		return fmt.Errorf("setting up the %s users controller: %w", kind, err)
	}
	return nil
}
