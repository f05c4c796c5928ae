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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// ResolvedServiceIndex indexes objects by the service they resolved to
// (remote.UsersKey of status.service).
const ResolvedServiceIndex = ".status.service"

func indexResolvedService(obj client.Object) []string {
	if key := remote.UsersKey(obj.(v1alpha1.Object)); key != "" {
		return []string{key}
	}
	return nil
}

// namedServiceIndex indexes objects by the service their spec.serviceRef
// names, which they may not have resolved to (one that refuses their
// namespace): they try again when it changes.
const namedServiceIndex = ".spec.serviceRef"

func indexNamedService(obj client.Object) []string {
	o := obj.(v1alpha1.Object)
	ref := o.GetServiceRef()
	if ref == nil {
		return nil
	}
	ns := o.GetNamespace()
	if ref.Kind == v1alpha1.KindClusterEvaluationService {
		ns = ""
	}
	return []string{remote.ServiceKey(&metav1.ObjectMeta{Namespace: ns, Name: ref.Name})}
}

// ServiceKeyIndex indexes services by the Secret holding their key, "namespace/name".
const ServiceKeyIndex = ".spec.apiKeySecretRef" //nolint:gosec // an index name, not a credential

// serviceUsers maps a service to the objects of one kind that use it or
// may resolve to it, so that they re-resolve when it appears, changes or
// goes: the objects that resolved to it or name it, and, for a service
// named default, the objects that name no service in the namespaces it
// may serve.
type serviceUsers struct {
	client client.Client
	list   client.ObjectList
}

func (u serviceUsers) of(ctx context.Context, svc client.Object) []reconcile.Request {
	key := remote.ServiceKey(svc)
	reqs := append(u.listed(ctx, client.MatchingFields{ResolvedServiceIndex: key}),
		u.listed(ctx, client.MatchingFields{namedServiceIndex: key})...)
	if svc.GetName() != v1alpha1.DefaultServiceName {
		return reqs
	}
	var opts []client.ListOption
	if svc.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(svc.GetNamespace()))
	}
	l := u.list.DeepCopyObject().(client.ObjectList)
	if err := u.client.List(ctx, l, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the objects a default service may serve", "service", svc.GetName())
		return reqs
	}
	_ = meta.EachListItem(l, func(o runtime.Object) error {
		if obj := o.(v1alpha1.Object); obj.GetServiceRef() == nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
	return reqs
}

// ofServicesUsing maps a Secret to the users of the services that take
// their key from it.
func (u serviceUsers) ofServicesUsing(ctx context.Context, secret client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	key := secret.GetNamespace() + "/" + secret.GetName()
	for _, l := range []client.ObjectList{&v1alpha1.EvaluationServiceList{}, &v1alpha1.ClusterEvaluationServiceList{}} {
		if err := u.client.List(ctx, l, client.MatchingFields{ServiceKeyIndex: key}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing services that use a Secret", "secret", secret.GetName())
			continue
		}
		for _, r := range RequestsFor(l) {
			key := remote.ServiceKey(&metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name})
			reqs = append(reqs, u.listed(ctx, client.MatchingFields{ResolvedServiceIndex: key})...)
		}
	}
	return reqs
}

func (u serviceUsers) listed(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	l := u.list.DeepCopyObject().(client.ObjectList)
	if err := u.client.List(ctx, l, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the users of a service")
		return nil
	}
	return RequestsFor(l)
}
