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

package tenancy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
)

// Tenants are the namespaces the server serves: those whose labels match
// Options.NamespaceSelector (--rest-namespace-selector), so that a cluster
// admin opts namespaces in. The keys of a namespace it does not serve are
// unknown to the server: their requests are answered 401, as for any unknown
// key, which tells a caller nothing about other namespaces.
//
// No RBAC marker: reading namespaces (get, list, watch, cluster-wide) is
// granted by the installers only when a selector is set.
type Tenants struct {
	// informer lists and watches the selected namespaces; nil when every
	// namespace is served, so no namespace is read.
	informer toolscache.SharedIndexInformer
}

func NewTenants(cs kubernetes.Interface, selector labels.Selector) (*Tenants, error) {
	if selector == nil || selector.Empty() {
		return &Tenants{}, nil
	}
	informer := coreinformers.NewFilteredNamespaceInformer(cs, 0, toolscache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = selector.String() })
	if err := informer.SetTransform(keepOnlyName); err != nil {
		return nil, fmt.Errorf("setting the namespace transform: %w", err)
	}
	return &Tenants{informer: informer}, nil
}

// keepOnlyName drops all of a namespace but its name: the watch's label
// selector does the matching, and a namespace whose labels stop matching is
// reported as deleted.
func keepOnlyName(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil // a tombstone
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, ResourceVersion: ns.ResourceVersion}}, nil
}

// informers are what run must start and wait for.
func (t *Tenants) informers() []toolscache.SharedIndexInformer {
	if t.informer == nil {
		return nil
	}
	return []toolscache.SharedIndexInformer{t.informer}
}

// serves reports whether the server serves the keys of namespace.
func (t *Tenants) serves(namespace string) bool {
	if t.informer == nil {
		return true
	}
	_, ok, err := t.informer.GetStore().GetByKey(namespace)
	return ok && err == nil
}
