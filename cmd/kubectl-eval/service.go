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

package main

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// userAgent is what the plugin's requests to a service say they come from.
const userAgent = "kubectl-eval"

// liveService is the service import calls: its URL and client, and, for
// --service, the service object it was resolved from.
type liveService struct {
	url string
	svc evalapi.Service
	// of is the --service the manager's connector resolved; nil for a URL.
	of *remote.ServiceClient
}

// parseServiceRef reads --service: [Kind/]NAME, the kind EvaluationService
// (in the namespace) by default.
func parseServiceRef(s string) (v1alpha1.ServiceReference, error) {
	kind, name, found := strings.Cut(s, "/")
	if !found {
		kind, name = string(v1alpha1.KindEvaluationService), s
	}
	switch k := v1alpha1.ServiceKind(kind); k {
	case v1alpha1.KindEvaluationService, v1alpha1.KindClusterEvaluationService:
		if name == "" {
			return v1alpha1.ServiceReference{}, fmt.Errorf("--service %q: no name", s)
		}
		return v1alpha1.ServiceReference{Kind: k, Name: name}, nil
	}
	return v1alpha1.ServiceReference{}, fmt.Errorf("--service %q: the kind must be EvaluationService or ClusterEvaluationService", s)
}

// readService resolves ref for namespace through the manager's connector:
// the same lookup, namespace rule, caBundle and timeout as the objects of
// namespace get. The plugin runs on the caller's network, not the
// manager's, and does not know the manager's flags, so the manager's rules
// on a namespaced service's address (--allow-private-service-addresses,
// --namespaced-service-hosts) do not apply; the URL a key goes to is
// printed before it is sent.
func readService(ctx context.Context, c client.Client, namespace string, ref v1alpha1.ServiceReference) (liveService, error) {
	connector := remote.NewConnector(c, remote.Defaults{Services: c, AllowPrivateServiceAddresses: true, UserAgent: userAgent})
	sc, err := connector.ServiceFor(ctx, namespace, ref)
	if err != nil {
		return liveService{}, fmt.Errorf("--service %s: %w", ref, err)
	}
	if sc.Service == nil {
		return liveService{}, fmt.Errorf("%s is standalone: the cluster is its system of record, there is nothing to import", ref)
	}
	return liveService{url: sc.Endpoint, svc: sc.Service, of: sc}, nil
}
