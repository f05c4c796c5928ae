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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// A namespace's service applied together with its objects may reach the
// API server before the manager's cache: a create must not go meanwhile to
// the service that was the default before.
var _ = Describe("A first create while the cache lags behind the namespace's service", func() {
	ctx := context.Background()
	const ns = "team"
	var (
		shared    *evalapitest.Server
		liveReads int
	)
	BeforeEach(func() {
		shared = evalapitest.New()
		DeferCleanup(shared.Close)
		liveReads = 0
	})

	// connect resolves a Metric of ns, with a key Secret, from a cache
	// holding cached and an API server holding cached and live.
	connect := func(d remote.Defaults, cached []client.Object, live ...client.Object) *remote.Connection {
		GinkgoHelper()
		secret := keySecret(ns, "key")
		secret.Data[v1alpha1.DefaultAPIKeySecretKey] = []byte(evalapitest.DefaultKey)
		cache := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(cached...).Build()
		apiServer := fake.NewClientBuilder().WithScheme(newScheme()).
			WithObjects(append(append(live, secret), cached...)...).
			WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey,
				obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(v1alpha1.ServiceObject); ok {
					liveReads++
				}
				return c.Get(ctx, key, obj, opts...)
			}}).Build()
		d.Services = cache
		m := metricIn(ns, "1")
		m.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "key"}
		conn, err := remote.NewConnector(apiServer, d).Connect(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		return conn
	}
	clusterDefault := func() client.Object { return clusterService("default", shared.URL()) }
	standaloneDefault := func() client.Object {
		s := urlService(ns, "default", "")
		s.Spec.URL, s.Spec.Standalone = "", &v1alpha1.StandaloneService{}
		return s
	}
	spec := convert.SpecFor("proj-1", evalapitest.MinimalRequest("ai", "int"))
	noGuard := func(context.Context) error { Fail("the guard records a create that must not be sent"); return nil }
	creates := map[string]func(*remote.Connection) error{
		"Metric": func(c *remote.Connection) error {
			_, err := c.Metric(&v1alpha1.Metric{}).Create(ctx, &spec, noGuard)
			return err
		},
		"Metric by name": func(c *remote.Connection) error {
			return c.Metric(&v1alpha1.Metric{}).BeforeCreate(ctx, noGuard)
		},
		"Testset": func(c *remote.Connection) error {
			_, err := c.Testset(&v1alpha1.Testset{}).CreateTestset(ctx,
				&v1alpha1.TestsetSpec{ProjectID: "proj-1", Name: "set"}, noGuard)
			return err
		},
		"EvaluationRun": func(c *remote.Connection) error {
			_, err := c.Run(&v1alpha1.EvaluationRun{}).Create(ctx,
				remote.RunRequest{ProjectID: "proj-1", MetricIDs: []string{"met_1"}}, noGuard)
			return err
		},
	}

	It("creates nothing in the cluster's default while the namespace's standalone default is not cached yet", func() {
		for what, create := range creates {
			conn := connect(remote.Defaults{}, []client.Object{clusterDefault()}, standaloneDefault())
			Expect(conn.Service).To(Equal("ClusterEvaluationService/default"), "the cache's answer")
			err := create(conn)
			Expect(err).To(HaveOccurred(), what)
			after, lagging := remote.CacheLagFor(err)
			Expect(lagging).To(BeTrue(), what)
			Expect(after).To(BeNumerically(">", 0))
			Expect(err.Error()).To(ContainSubstring("EvaluationService/default"))
		}
		Expect(shared.Calls(evalapitest.OpCreateMetric)+shared.Calls(evalapitest.OpCreateTestset)+
			shared.Calls(evalapitest.OpCreateRun)).To(BeZero(), "nothing reached the cluster's default")
	})

	It("creates nothing standalone while the namespace's remote default is not cached yet", func() {
		conn := connect(remote.Defaults{}, nil, urlService(ns, "default", "https://team.example.com/api/v2"))
		Expect(conn.Endpoint).To(Equal(remote.Standalone), "the cache's answer: no service, so standalone")
		_, err := conn.Client().Create(ctx, &spec, noGuard)
		_, lagging := remote.CacheLagFor(err)
		Expect(lagging).To(BeTrue())
	})

	It("creates once the cache holds what the API server does, for one read per create", func() {
		conn := connect(remote.Defaults{}, []client.Object{clusterDefault()})
		c := conn.Client()
		guarded := 0
		guard := func(context.Context) error { guarded++; return nil }
		Expect(c.BeforeCreate(ctx, guard)).To(Succeed())
		_, err := c.Create(ctx, &spec, guard)
		Expect(err).NotTo(HaveOccurred())
		Expect(guarded).To(Equal(2))
		Expect(shared.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
		Expect(liveReads).To(Equal(1), "one read of the namespace's default, for BeforeCreate and Create together")

		By("a service object the cache holds as the API server does: created, on the namespace's own")
		conn = connect(remote.Defaults{}, []client.Object{clusterDefault(), standaloneDefault()})
		Expect(conn.Endpoint).To(Equal(remote.Standalone))
		_, err = conn.Client().Create(ctx, &spec, guard)
		Expect(err).NotTo(HaveOccurred())

		By("reads and updates read nothing more")
		liveReads = 0
		conn = connect(remote.Defaults{}, []client.Object{clusterDefault()})
		_, err = conn.Client().Update(ctx, "met_1", &spec)
		Expect(err).To(HaveOccurred(), "the fake holds no met_1")
		Expect(liveReads).To(BeZero())
	})
})
