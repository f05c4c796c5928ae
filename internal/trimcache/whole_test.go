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

package trimcache_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// reader answers each Get with the next of answers, and records the
// resourceVersion each asked for ("" for a read from etcd).
type reader struct {
	client.Reader
	answers []error
	asked   []string
}

func (r *reader) Get(_ context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	o := &client.GetOptions{}
	o.ApplyOptions(opts)
	rv := ""
	if o.Raw != nil {
		rv = o.Raw.ResourceVersion
	}
	r.asked = append(r.asked, rv)
	err := r.answers[0]
	r.answers = r.answers[1:]
	if err == nil {
		obj.SetName(key.Name)
		obj.SetResourceVersion("8")
	}
	return err
}

func trimmed() *v1alpha1.Metric {
	return &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", ResourceVersion: "7",
		Annotations: map[string]string{trimcache.TrimmedAnnotation: ""}}}
}

// tooLarge is what an API server answers for a version its watch cache
// has yet to reach (k8s.io/apiserver's NewTooLargeResourceVersionError).
func tooLarge() error {
	err := apierrors.NewTimeoutError("Too large resource version: 7, current: 6", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}
	return err
}

func TestWholeReadsAtTheCachedVersionThenFromEtcdOnlyWhenTheWatchCacheIsBehind(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []error
		asked   []string
		wantErr bool
	}{
		{"from the watch cache", []error{nil}, []string{"7"}, false},
		{"a watch cache behind: from etcd", []error{tooLarge(), nil}, []string{"7", ""}, false},
		{"deleted meanwhile: no second read", []error{apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("metrics").GroupResource(), "m")}, []string{"7"}, true},
		{"any other failure: no second read", []error{errors.New("connection refused")}, []string{"7"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &reader{answers: tc.answers}
			m := trimmed()
			err := trimcache.Whole(context.Background(), r, m)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Whole: %v, want an error: %v", err, tc.wantErr)
			}
			if !slices.Equal(r.asked, tc.asked) {
				t.Fatalf("read at versions %q, want %q", r.asked, tc.asked)
			}
			if !tc.wantErr && (trimcache.Trimmed(m) || m.ResourceVersion != "8") {
				t.Fatalf("the Metric was not replaced by the whole one: %+v", m.ObjectMeta)
			}
		})
	}
}
