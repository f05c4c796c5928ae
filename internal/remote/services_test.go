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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// stubService answers every call at once, or, with hold set, says it
// entered on entered and answers once hold is closed.
type stubService struct {
	evalapi.Service
	hold, entered chan struct{}
	url           string
}

func (s stubService) GetMetric(context.Context, evalapi.APIKey, string) (evalapi.Metric, error) {
	if s.hold != nil {
		s.entered <- struct{}{}
		<-s.hold
	}
	return evalapi.Metric{ID: "met_1"}, nil
}

func (s stubService) BaseURL() string { return s.url }

func newScheme() *runtime.Scheme {
	sch := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(sch)).To(Succeed())
	Expect(v1alpha1.AddToScheme(sch)).To(Succeed())
	return sch
}

func metricIn(ns, uid string) *v1alpha1.Metric {
	return &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m", UID: types.UID(uid)}}
}

func keySecret(ns, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data: map[string][]byte{v1alpha1.DefaultAPIKeySecretKey: []byte("ak_" + name + "_0123456789abcdef")}}
}

func urlService(ns, name, url string) *v1alpha1.EvaluationService {
	return &v1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + name), Generation: 1},
		Spec: v1alpha1.EvaluationServiceSpec{ServiceConnection: v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL(url)}}}
}

func clusterService(name, url string, namespaces ...string) *v1alpha1.ClusterEvaluationService {
	return &v1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Generation: 1},
		Spec: v1alpha1.ClusterEvaluationServiceSpec{Namespaces: namespaces,
			ServiceConnection: v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL(url)}}}
}

var _ = Describe("Resolving an object's service", func() {
	ctx := context.Background()
	flags := stubService{url: "https://Flags.Example.com:443/api/v2/"}

	connect := func(obj v1alpha1.Object, objs ...client.Object) (*remote.Connection, error) {
		c := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(objs...).Build()
		return remote.NewConnector(c, remote.Defaults{Service: flags, Services: c, DefaultAPIKeySecret: "flags-key"}).
			Connect(ctx, obj)
	}

	It("takes serviceRef, then the namespace's default, then the cluster's default, then the flags", func() {
		own := urlService("a", "own", "https://own.example.com/api/v2")
		nsDefault := urlService("a", "default", "https://ns.example.com/api/v2")
		clusterDefault := clusterService("default", "https://cluster.example.com/api/v2")

		m := metricIn("a", "1")
		m.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindEvaluationService, Name: "own"}
		conn, err := connect(m, own, nsDefault, clusterDefault)
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Service).To(Equal("EvaluationService/own"))
		Expect(conn.Endpoint).To(Equal("https://own.example.com/api/v2"))

		m.Spec.ServiceRef = nil
		conn, err = connect(m, own, nsDefault, clusterDefault)
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Service).To(Equal("EvaluationService/default"))

		conn, err = connect(m, own, clusterDefault)
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Service).To(Equal("ClusterEvaluationService/default"))

		conn, err = connect(m, own)
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Service).To(Equal(v1alpha1.ResolvedServiceFlags))
		Expect(conn.Endpoint).To(Equal("https://flags.example.com/api/v2"), "normalised: case, default port, trailing slash")
	})

	It("names the flags Standalone without --api-url, and counts neither name as a service object's user", func() {
		c := fake.NewClientBuilder().WithScheme(newScheme()).Build()
		conn, err := remote.NewConnector(c, remote.Defaults{Services: c}).Connect(ctx, metricIn("a", "1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Service).To(Equal("Standalone"))
		Expect(conn.Endpoint).To(Equal(remote.Standalone))

		// ManagerFlags is also what earlier builds wrote without --api-url.
		for _, recorded := range []string{"Standalone", "ManagerFlags"} {
			m := metricIn("a", "2")
			m.Status.Service = recorded
			Expect(remote.UsersKey(m)).To(BeEmpty(), recorded)
		}
	})

	It("never crosses namespaces with a namespaced reference", func() {
		m := metricIn("b", "1")
		m.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindEvaluationService, Name: "own"}
		conn, err := connect(m, urlService("a", "own", "https://own.example.com/api/v2"))
		Expect(err).To(BeAssignableToTypeOf(&remote.ServiceError{}))
		Expect(err).To(HaveField("Reason", v1alpha1.ReasonServiceNotFound))
		Expect(err.Error()).To(ContainSubstring("EvaluationService/own not found in namespace b"))
		Expect(conn.Service).To(Equal("EvaluationService/own"), "status names what the object asked for")
	})

	It("refuses a cluster service to a namespace it does not allow, and skips such a default", func() {
		ces := clusterService("shared", "https://shared.example.com/api/v2", "a")
		m := metricIn("b", "1")
		m.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: "shared"}
		_, err := connect(m, ces)
		Expect(err).To(MatchError(ContainSubstring("does not allow namespace b")))
		Expect(err).To(HaveField("Reason", v1alpha1.ReasonServiceNotAllowed))

		conn, err := connect(metricIn("b", "2"), clusterService("default", "https://shared.example.com/api/v2", "a"))
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Service).To(Equal(v1alpha1.ResolvedServiceFlags))
		conn, err = connect(metricIn("a", "3"), clusterService("default", "https://shared.example.com/api/v2", "a"))
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Service).To(Equal("ClusterEvaluationService/default"))
	})

	It("matches a namespaceSelector against the namespace's labels", func() {
		ces := clusterService("default", "https://shared.example.com/api/v2")
		ces.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "prod"}}
		prod := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"tier": "prod"}}}
		dev := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "d"}}
		conn, err := connect(metricIn("p", "1"), ces, prod, dev)
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Service).To(Equal("ClusterEvaluationService/default"))
		conn, err = connect(metricIn("d", "2"), ces, prod, dev)
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Service).To(Equal(v1alpha1.ResolvedServiceFlags))
	})

	It("reads the object's own key first, then its service's, then the flags' default Secret", func() {
		ces := clusterService("default", "https://shared.example.com/api/v2")
		ces.Spec.APIKeySecretRef = &v1alpha1.NamespacedSecretKeySelector{Namespace: "keys",
			SecretKeySelector: v1alpha1.SecretKeySelector{Name: "shared-key"}}
		objs := []client.Object{ces, keySecret("keys", "shared-key"), keySecret("a", "own-key"), keySecret("a", "flags-key")}
		svc := stubService{}
		c := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(objs...).Build()
		keys := func(m *v1alpha1.Metric) string {
			conn, err := remote.NewConnector(c, remote.Defaults{Service: svc, Services: c, DefaultAPIKeySecret: "flags-key"}).
				Connect(ctx, m)
			Expect(err).NotTo(HaveOccurred())
			_, err = conn.Client().Observe(ctx, "met_1", &m.Spec)
			return fmtErr(err)
		}
		m := metricIn("a", "1")
		m.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "missing-own"}
		Expect(keys(m)).To(ContainSubstring(`"missing-own" not found`), "the object's own key wins")
		ces.Spec.APIKeySecretRef.Name = "missing-shared"
		Expect(c.Update(ctx, ces)).To(Succeed())
		m.Spec.APIKeySecretRef = nil
		Expect(keys(m)).To(ContainSubstring(`"missing-shared" not found`), "then the service's")
	})
})

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

var _ = Describe("A service's gate", func() {
	ctx := context.Background()

	// gated returns a Connector whose flags service is svc under limits,
	// with the key every object of namespace ns uses.
	gated := func(svc evalapi.Service, limits remote.Limits) *remote.Connector {
		c := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(keySecret("ns", "key")).Build()
		return remote.NewConnector(c, remote.Defaults{Service: svc, Limits: limits, DefaultAPIKeySecret: "key"})
	}
	observe := func(c *remote.Connector, uid string) error {
		m := metricIn("ns", uid)
		conn, err := c.Connect(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		_, err = conn.Client().Observe(ctx, "met_1", &m.Spec)
		return err
	}

	It("never makes a worker wait for the rate: an object over it keeps its turn and is told when to come back", func() {
		c := gated(stubService{}, remote.Limits{QPS: 4, Burst: 1})
		Expect(observe(c, "a")).To(Succeed())
		start := time.Now()
		err := observe(c, "b")
		Expect(time.Since(start)).To(BeNumerically("<", 100*time.Millisecond), "the call returned at once")
		after, throttled := remote.ThrottledFor(err)
		Expect(throttled).To(BeTrue())
		Expect(after).To(BeNumerically("~", 250*time.Millisecond, 50*time.Millisecond))

		// c takes the next turn after b's: b keeps its place.
		after2, _ := remote.ThrottledFor(observe(c, "c"))
		Expect(after2).To(BeNumerically(">", after))
		_, throttled = remote.ThrottledFor(observe(c, "b"))
		Expect(throttled).To(BeTrue(), "b comes back too early: still waiting")
		time.Sleep(after)
		Expect(observe(c, "b")).To(Succeed(), "b's turn has come")
	})

	It("tells an object to come back when every place in flight is taken, without waiting", func() {
		hold, entered := make(chan struct{}), make(chan struct{}, 4)
		c := gated(stubService{hold: hold, entered: entered}, remote.Limits{MaxInFlight: 1})
		done := make(chan error)
		go func() { done <- observe(c, "a") }()
		<-entered
		_, throttled := remote.ThrottledFor(observe(c, "b"))
		Expect(throttled).To(BeTrue())
		close(hold)
		Expect(<-done).To(Succeed())
		Expect(observe(c, "b")).To(Succeed(), "the place is free again")
	})

	It("leaves half of the workers to other services when a service sets no cap", func() {
		hold, entered := make(chan struct{}), make(chan struct{}, 4)
		kc := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(keySecret("ns", "key")).Build()
		c := remote.NewConnector(kc, remote.Defaults{Service: stubService{hold: hold, entered: entered},
			DefaultAPIKeySecret: "key", Workers: 4})
		done := make(chan error, 2)
		for _, uid := range []string{"a", "b"} {
			go func() { done <- observe(c, uid) }()
		}
		<-entered
		<-entered
		_, throttled := remote.ThrottledFor(observe(c, "c"))
		Expect(throttled).To(BeTrue(), "two of four workers in flight: the third is turned away")
		close(hold)
		Expect(<-done).To(Succeed())
		Expect(<-done).To(Succeed())
	})
})
