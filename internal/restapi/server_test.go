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
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

var _ = Describe("Options", func() {
	It("requires the clients and an address", func() {
		_, err := New(Options{Addr: ":0"})
		Expect(err).To(MatchError(ContainSubstring("Client, Cache and KubeClient are required")))
		_, err = New(Options{Client: h.mgr.GetClient(), Cache: h.mgr.GetCache(), KubeClient: kubernetes.NewForConfigOrDie(h.cfg)})
		Expect(err).To(MatchError(ContainSubstring("Addr or Listener")))
	})

	It("requires a certificate and its key together", func() {
		_, err := New(validOptions(func(o *Options) { o.TLSCertFile = "tls.crt" }))
		Expect(err).To(MatchError(ContainSubstring("must be set together")))
	})

	It("refuses a deletion TTL the CRDs would refuse", func() {
		_, err := New(validOptions(func(o *Options) { o.DeletionTTL = 366 * 24 * time.Hour }))
		Expect(err).To(HaveOccurred())
	})

	It("refuses negative admission bounds", func() {
		_, err := New(validOptions(func(o *Options) { o.MaxInflight = -1 }))
		Expect(err).To(MatchError(ContainSubstring("must not be negative")))
	})

	It("fills in the defaults", func() {
		s, err := New(validOptions(nil))
		Expect(err).NotTo(HaveOccurred())
		Expect(s.opts.SyncTimeout).To(Equal(10 * time.Second))
		Expect(s.opts.MaxBodyBytes).To(BeEquivalentTo(DefaultMaxBodyBytes))
		Expect(s.opts.MaxInflight).To(Equal(DefaultMaxInflight))
		Expect(s.opts.TenantQPS).To(BeEquivalentTo(DefaultTenantQPS))
		Expect(s.opts.TenantBurst).To(Equal(DefaultTenantBurst))
		Expect(s.opts.DeletionTTL).To(Equal(24 * time.Hour))
		Expect(s.NeedLeaderElection()).To(BeFalse())
	})
})

func validOptions(adjust func(*Options)) Options {
	o := Options{
		Addr: "127.0.0.1:0", Client: h.mgr.GetClient(), Cache: h.mgr.GetCache(),
		KubeClient: kubernetes.NewForConfigOrDie(h.cfg),
	}
	if adjust != nil {
		adjust(&o)
	}
	return o
}

var _ = Describe("Failures inside the server", func() {
	It("answers a panic with 500 INTERNAL_ERROR and no stack trace, and counts it", func() {
		s := &Server{log: logr.Discard(), opts: Options{Now: time.Now}}
		handler := s.instrument("panicking", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			panic("boom")
		}))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
		Expect(rec.Code).To(Equal(http.StatusInternalServerError))
		Expect(rec.Body.String()).To(MatchJSON(`{"code":"INTERNAL_ERROR","message":"An internal error occurred","details":{}}`))
		Expect(testutil.ToFloat64(requestsTotal.WithLabelValues("panicking", "500"))).To(Equal(1.0))
	})
})

var _ = Describe("Refused creates", func() {
	s := &Server{log: logr.Discard()}
	// answer is how the server answers a request whose create failed with err.
	answer := func(err error) apierror.Response {
		ep := createMetric()
		return s.failure(ep.kind, createError(ep, err))
	}

	It("answers 503 with Retry-After when the API server is busy", func() {
		res := answer(apierrors.NewTooManyRequests("slow down", 3))
		Expect(res.Status).To(Equal(http.StatusServiceUnavailable))
		Expect(res.Body).To(HaveField("Code", apierror.CodeServiceUnavailable))
		Expect(res.Header.Get("Retry-After")).To(Equal("3"))
	})

	It("logs a client that hung up at V(1) without a stack trace, and counts it 499, not 500", func() {
		var logged []string
		s := &Server{log: funcr.New(func(prefix, args string) { logged = append(logged, prefix+args) },
			funcr.Options{Verbosity: 1})}
		ep := createMetric()
		hungUp := &url.Error{Op: "Post", URL: "https://apiserver/metrics", Err: context.Canceled}
		res := s.failure(ep.kind, createError(ep, hungUp))
		Expect(res.Status).To(Equal(apierror.StatusClientClosedRequest))
		Expect(logged).To(HaveExactElements(ContainSubstring(`"level"=1`)))
		Expect(logged).NotTo(ContainElement(Or(ContainSubstring("error"), ContainSubstring("stacktrace"))))
	})

	It("answers 500 INTERNAL_ERROR to anything unexpected, without its text", func() {
		res := answer(apierrors.NewForbidden(schema.GroupResource{Resource: "metrics"}, "m",
			errors.New("RBAC says no")))
		Expect(res.Status).To(Equal(http.StatusInternalServerError))
		Expect(res.Body).To(HaveField("Message", Not(ContainSubstring("RBAC"))))
	})
})

var _ = Describe("Request metrics", func() {
	It("counts requests by route and code and times them, in controller-runtime's registry", func() {
		t := newTenant()
		before := testutil.ToFloat64(requestsTotal.WithLabelValues(routeMetrics, "201"))
		Expect(postMetric(t, variantBody("human", "int")).status).To(Equal(http.StatusCreated))
		expectUnauthorized(postMetric(tenant{}, variantBody("human", "int")))
		Expect(testutil.ToFloat64(requestsTotal.WithLabelValues(routeMetrics, "201"))).To(Equal(before + 1))
		Expect(testutil.ToFloat64(requestsTotal.WithLabelValues(routeMetrics, "401"))).To(BeNumerically(">=", 1))

		families, err := metrics.Registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		names := map[string]bool{}
		for _, f := range families {
			names[f.GetName()] = true
		}
		Expect(names).To(HaveKey("evaloperator_rest_requests_total"))
		Expect(names).To(HaveKey("evaloperator_rest_request_duration_seconds"))
	})
})

var _ = Describe("Serving", func() {
	It("speaks TLS with the given certificate, and shuts down when its context ends", func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, addr, pool, stopped := serveTLS(ctx)
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		base := "https://" + addr

		t := newTenant()
		Eventually(func() bool { _, ok, _ := s.keys.Lookup(t.key); return ok }).Should(BeTrue())
		req, err := http.NewRequest(http.MethodPost, base+projectPath, strings.NewReader(variantBody("human", "int")))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+t.key)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		Expect(err).NotTo(HaveOccurred())
		_ = res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusCreated))

		cancel()
		Eventually(stopped, 5*time.Second).Should(Receive(BeNil()))
		_, err = net.DialTimeout("tcp", addr, time.Second)
		Expect(err).To(HaveOccurred(), "the listener is closed")
	})
})

// serveTLS starts a server speaking TLS with a self-signed certificate
// until ctx ends, and waits until it answers. It returns the server, its
// address, the certificate's pool and where Start's result arrives.
func serveTLS(ctx context.Context) (*Server, string, *x509.CertPool, <-chan error) {
	GinkgoHelper()
	certFile, keyFile, pool := selfSigned(GinkgoT().TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	s, err := New(validOptions(func(o *Options) {
		o.Addr, o.Listener, o.TLSCertFile, o.TLSKeyFile = "", ln, certFile, keyFile
	}))
	Expect(err).NotTo(HaveOccurred())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Start(ctx) }()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	Eventually(func() (int, error) {
		res, err := client.Get("https://" + ln.Addr().String() + routeOpenAPI)
		if err != nil {
			return 0, err
		}
		_ = res.Body.Close()
		return res.StatusCode, nil
	}).Should(Equal(http.StatusOK))
	return s, ln.Addr().String(), pool, stopped
}

// selfSigned writes a self-signed certificate for 127.0.0.1 into dir.
func selfSigned(dir string) (certFile, keyFile string, pool *x509.CertPool) {
	GinkgoHelper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "restapi-test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	Expect(os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)).To(Succeed())
	Expect(os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)).To(Succeed())
	cert, err := x509.ParseCertificate(der)
	Expect(err).NotTo(HaveOccurred())
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
