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
	"net/http"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// liveService is a service connection read from the cluster: where to
// send requests, and the Secret its key is in.
type liveService struct {
	url        string
	httpClient *http.Client
	// keyNamespace and keyRef name the service's key; keyRef is nil when it names none.
	keyNamespace string
	keyRef       *v1alpha1.SecretKeySelector
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

// readService reads ref from the cluster, in namespace for the namespaced kind.
func readService(ctx context.Context, c client.Client, namespace string, ref v1alpha1.ServiceReference) (liveService, error) {
	var so v1alpha1.ServiceObject = &v1alpha1.ClusterEvaluationService{}
	key := client.ObjectKey{Name: ref.Name}
	if ref.Kind == v1alpha1.KindEvaluationService {
		so, key.Namespace = &v1alpha1.EvaluationService{}, namespace
	}
	if err := c.Get(ctx, key, so); err != nil {
		return liveService{}, fmt.Errorf("reading %s: %w", ref, err)
	}
	conn := so.GetConnection()
	if conn.Standalone != nil {
		return liveService{}, fmt.Errorf("%s is standalone: the cluster is its system of record, there is nothing to import", ref)
	}
	t, err := remote.NewTransport(remote.TransportOptions{CABundle: conn.CABundle})
	if err != nil {
		return liveService{}, fmt.Errorf("%s: caBundle: %w", ref, err)
	}
	ls := liveService{url: string(conn.URL), httpClient: &http.Client{Transport: t}}
	ls.keyNamespace, ls.keyRef = so.GetKeySecret()
	return ls, nil
}
