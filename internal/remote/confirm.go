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
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// cacheLagRetry is when an object held back by CacheLag tries again at the
// latest; the service reaching the cache re-triggers it sooner.
const cacheLagRetry = time.Second

// CacheLag is the error of a first create held back because the manager's
// cache does not yet hold the service the namespace chose as the API
// server does (it was just created, changed or deleted): the object would
// be created in a service its namespace did not choose. Nothing was sent
// and nothing recorded; the object tries again After from now.
type CacheLag struct {
	After time.Duration
	// Service names the service object, for the log.
	Service string
}

func (e *CacheLag) Error() string {
	return fmt.Sprintf("waiting for the manager's cache to show %s as the API server does", e.Service)
}

// CacheLagFor returns how long a create that failed with err waits for the
// cache, and whether err is a *CacheLag at all.
func CacheLagFor(err error) (time.Duration, bool) {
	var l *CacheLag
	if !errors.As(err, &l) {
		return 0, false
	}
	return l.After, true
}

// confirmation checks, once per Client and before its first create, that
// the service object the namespace chose for the object is in the cache as
// it is in the API server (see Connector.serviceCheck).
type confirmation struct {
	// check is nil when there is nothing to check.
	check func(context.Context) error
	done  bool
}

// before runs the check unless it passed already.
func (c *confirmation) before(ctx context.Context) error {
	if c.check == nil || c.done {
		return nil
	}
	if err := c.check(ctx); err != nil {
		return err
	}
	c.done = true
	return nil
}

// serviceCheck is what a Client of obj checks before its first create: the
// service object obj's namespace chose (spec.serviceRef's, else the
// EvaluationService named default in its namespace), read from the API
// server, must be the one the cache holds: the same, or absent from both.
// One uncached read, once per create: the cache may lag a service applied
// together with its objects, and a create then goes to the service that
// was the default before (a ClusterEvaluationService's, the flags'). What
// the cluster's administrator chose (a ClusterEvaluationService named
// default) is taken from the cache. Nil when the operator resolves no
// service kinds, or has no uncached reader.
func (c *Connector) serviceCheck(obj v1alpha1.Object) func(context.Context) error {
	if c.services.reader == nil || c.live == nil {
		return nil
	}
	kind, name := v1alpha1.KindEvaluationService, v1alpha1.DefaultServiceName
	if ref := obj.GetServiceRef(); ref != nil {
		kind, name = ref.Kind, ref.Name
	}
	return func(ctx context.Context) error {
		cached, err := present(c.services.get(ctx, c.services.reader, kind, obj.GetNamespace(), name))
		if err != nil {
			return err
		}
		live, err := present(c.services.get(ctx, c.live, kind, obj.GetNamespace(), name))
		if err != nil {
			return fmt.Errorf("confirming the service from the API server: %w", err)
		}
		if cached != live {
			return &CacheLag{After: cacheLagRetry, Service: v1alpha1.ServiceReference{Kind: kind, Name: name}.String()}
		}
		return nil
	}
}

// present is what of a service object decides what it resolves: its
// identity, spec generation and whether it is being deleted; "" when it
// does not exist.
func present(so v1alpha1.ServiceObject, err error) (string, error) {
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	}
	return fmt.Sprintf("%s/%d/%t", so.GetUID(), so.GetGeneration(), so.GetDeletionTimestamp().IsZero()), nil
}
