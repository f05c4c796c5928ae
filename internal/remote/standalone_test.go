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

package remote_test

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// standaloneClient is the Client of a Metric on the standalone service
// whose key is in Secret "key" of namespace "ns", holding key.
func standaloneClient(key string) remote.Client {
	GinkgoHelper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "key"},
		Data: map[string][]byte{v1alpha1.DefaultAPIKeySecretKey: []byte(key)}}
	reader := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(secret).Build()
	m := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m"},
		Spec: v1alpha1.MetricSpec{APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: "key"}}}
	conn, err := remote.NewConnector(reader, remote.Defaults{}).Connect(context.Background(), m)
	Expect(err).NotTo(HaveOccurred())
	Expect(conn.Endpoint).To(Equal(remote.Standalone), "without a service, the cluster is the system of record")
	return conn.Client()
}

var _ = Describe("The standalone client", func() {
	ctx := context.Background()
	const key = "ak_x0123456789abcdef"

	It("answers a create in response form under a new unique id, and never asks for the guard", func() {
		c := standaloneClient(key)
		seen := map[string]bool{}
		guard := func(context.Context) error { Fail("a standalone create needs no guard"); return nil }
		for range 2000 {
			spec := convert.SpecFor("p", evalapitest.MinimalRequest("ai", "int"))
			m, err := c.Create(ctx, &spec, guard)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.ID).To(MatchRegexp(`^met_[0-9a-f]{20}$`))
			Expect(seen).NotTo(HaveKey(m.ID))
			seen[m.ID] = true
			Expect(recorded(m)).To(Equal(defaulted(m.ID, &spec)))
		}
	})

	It("completes deletions at once, holding no testcases or testsets", func() {
		c := standaloneClient(key)
		done, err := c.DeleteTestcases(ctx, []v1alpha1.ResourceID{"tc1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(Equal(remote.NothingHeld))
		done, err = c.DeleteTestset(ctx, "ts1")
		Expect(err).NotTo(HaveOccurred())
		Expect(done).To(Equal(remote.NothingHeld))
		ok, err := c.Delete(ctx, "met_1")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
	})

	It("refuses a key that is not an ak_ key for what an object asks of it, without telling the key", func() {
		const bad = "sk_secret-value"
		c := standaloneClient(bad)
		spec := convert.SpecFor("p", evalapitest.MinimalRequest("human", "int"))
		_, err := c.Create(ctx, &spec, nil)
		var keyErr *remote.KeyError
		Expect(errors.As(err, &keyErr)).To(BeTrue(), "%v", err)
		Expect(keyErr.Reason).To(Equal(v1alpha1.ReasonInvalidCredentials))
		Expect(err.Error()).NotTo(ContainSubstring(bad))
		_, err = c.DeleteTestcases(ctx, []v1alpha1.ResourceID{"tc1"})
		Expect(err).To(BeAssignableToTypeOf(keyErr))
		_, err = c.DeleteTestset(ctx, "ts1")
		Expect(err).To(BeAssignableToTypeOf(keyErr))
	})

	It("holds the spec as the remote Metric: always up to date, and a list of nothing else", func() {
		c := standaloneClient(key)
		spec := convert.SpecFor("p", evalapitest.MinimalRequest("ai", "float"))
		seen, err := c.Observe(ctx, "met_1", &spec)
		Expect(err).NotTo(HaveOccurred())
		Expect(seen.UpToDate).To(BeTrue())
		Expect(recorded(seen.Metric)).To(Equal(defaulted("met_1", &spec)))
		page, err := c.List(ctx, "p", "", 5)
		Expect(err).NotTo(HaveOccurred())
		Expect(page).To(Equal(remote.Page{}))
	})

	It("answers an update with the desired variant in response form under the id", func() {
		c := standaloneClient(key)
		spec := convert.SpecFor("p", evalapitest.MinimalRequest("ai", "float"))
		m, err := c.Update(ctx, "met_1", &spec)
		Expect(err).NotTo(HaveOccurred())
		Expect(recorded(m)).To(Equal(defaulted("met_1", &spec)))
	})
})

// recorded is the status m records.
func recorded(m remote.Metric) v1alpha1.MetricStatus {
	var st v1alpha1.MetricStatus
	m.Record(&st)
	return st
}

// defaulted is the status of the Metric spec asks for under id, with the
// service's defaults filled in.
func defaulted(id string, spec *v1alpha1.MetricSpec) v1alpha1.MetricStatus {
	var st v1alpha1.MetricStatus
	convert.SetStatus(&st, evalapi.ResponseFor(id, convert.RequestFor(spec)))
	return st
}
