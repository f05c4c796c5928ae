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

// Package trimcache says whether an object was read from the manager's
// cache without its texts (a settled Metric), ids (a finished bulk
// deletion) or executor template (an EvaluationRun), reads such an object
// whole, and guards writes against a trimmed copy (Guard). The reconcilers
// and the REST server read an object whole here before they need what the
// cache left out.
package trimcache

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// TrimmedAnnotation marks a Metric read from the cache without its texts.
// It exists only in memory: no write ever carries it.
const TrimmedAnnotation = v1alpha1.Prefix + "cache-trimmed"

// Trimmed reports whether obj is a Metric read from the cache without its texts.
func Trimmed(obj client.Object) bool {
	_, ok := obj.GetAnnotations()[TrimmedAnnotation]
	return ok
}

// Whole replaces a trimmed m with the whole Metric, read with reader (the
// API server); a Metric that is whole already costs no read. A failed read
// is returned wrapped, so a caller can tell a Metric deleted meanwhile.
func Whole(ctx context.Context, reader client.Reader, m *v1alpha1.Metric) error {
	if !Trimmed(m) {
		return nil
	}
	whole := &v1alpha1.Metric{}
	if err := Read(ctx, reader, m, whole); err != nil {
		return err
	}
	*m = *whole
	return nil
}

// Read reads into whole the object cached is a trimmed copy of, with reader
// (the API server), at cached's version or later. A failed read is returned
// wrapped, so a caller can tell an object deleted meanwhile.
func Read(ctx context.Context, reader client.Reader, cached, whole client.Object) error {
	key := client.ObjectKeyFromObject(cached)
	// At the trimmed copy's version or later: the API server answers from
	// its watch cache, which fed the manager's, instead of reading etcd.
	err := reader.Get(ctx, key, whole, &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: cached.GetResourceVersion()}})
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		// An API server whose watch cache is behind that version (another
		// replica than the one the cache watches) says so: read from etcd.
		err = reader.Get(ctx, key, whole)
	}
	if err != nil {
		return fmt.Errorf("reading the whole %s %s: %w", reflect.TypeOf(cached).Elem().Name(), key, err)
	}
	return nil
}
