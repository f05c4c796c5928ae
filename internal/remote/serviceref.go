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

package remote

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// ServiceFor resolves the service ref names for namespace as the manager
// resolves an object's spec.serviceRef: it must exist and allow namespace,
// and its client has the url, caBundle, timeout and address rules the
// manager's has (the Connector's Defaults). It is for callers outside
// the manager (kubectl eval), which then call the service themselves. A
// service that is missing, refuses namespace or cannot be built is a
// *ServiceError.
func (c *Connector) ServiceFor(ctx context.Context, namespace string, ref v1alpha1.ServiceReference) (*ServiceClient, error) {
	s, err := c.byRef(ctx, ref, namespace, "")
	if err != nil {
		return nil, err
	}
	sc := &ServiceClient{Name: s.name, Endpoint: s.endpoint, Service: s.svc, secrets: c.live}
	if s.keyRef != nil {
		src := secretKey(s.keyNamespace, *s.keyRef, true)
		sc.key = &src
	}
	return sc, nil
}

// ServiceClient is a service object resolved by ServiceFor.
type ServiceClient struct {
	// Name is the service as status.service names it.
	Name string
	// Endpoint is its normalised base URL, or Standalone.
	Endpoint string
	// Service calls it; nil for a standalone service, which has no remote
	// copy of anything.
	Service evalapi.Service

	// key is the service's own key, nil when it names none.
	key     *keySource
	secrets client.Reader
}

// KeySecret is the Secret and data key of the service's own key; ok is
// false when the service names none.
func (s *ServiceClient) KeySecret() (secret types.NamespacedName, field string, ok bool) {
	if s.key == nil {
		return types.NamespacedName{}, "", false
	}
	return *s.key.ref, s.key.field, true
}

// Key reads the service's own key as the manager reads it (uncached, the
// same rules, a *KeyError that never names the value); a service that
// names no key is a *KeyError too.
func (s *ServiceClient) Key(ctx context.Context) (evalapi.APIKey, error) {
	if s.key == nil {
		return "", &KeyError{Reason: v1alpha1.ReasonSecretNotFound, Message: s.Name + " names no apiKeySecretRef"}
	}
	return s.key.read(ctx, s.secrets)
}
