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

package restapi

import (
	"errors"
	"fmt"

	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
)

// AddToManager adds a Server to mgr, to run on every replica, leader or
// not: it only creates resources and reads the cache. The options it leaves
// unset are mgr's: Client, Cache, Reader (the API reader) and a KubeClient
// for its config. connector is the reconcilers' (what
// controller.SetupWithManager returns); nil makes every request wait for
// the reconciler. cmd/main.go and the in-process harnesses add the REST
// server with it.
func AddToManager(mgr ctrl.Manager, connector Connector, opts Options) (*Server, error) {
	if opts.Client == nil {
		opts.Client = mgr.GetClient()
	}
	if opts.Cache == nil {
		opts.Cache = mgr.GetCache()
	}
	if opts.Reader == nil {
		opts.Reader = mgr.GetAPIReader()
	}
	if opts.KubeClient == nil {
		kube, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return nil, fmt.Errorf("creating the REST server's client: %w", err)
		}
		opts.KubeClient = kube
	}
	opts.Connector = connector
	s, err := New(opts)
	if err != nil {
		if opts.Listener != nil {
			err = errors.Join(err, opts.Listener.Close())
		}
		return nil, err
	}
	if err := mgr.Add(s); err != nil {
		return nil, fmt.Errorf("adding the REST server: %w", err)
	}
	return s, nil
}
