//go:build e2e

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

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

// serviceHost is the Evaluation Service's name in the proxy spec. .invalid
// never resolves, so the manager reaches it through the proxy or not at all.
const serviceHost = "evaluation.eval-operator.invalid"

// The environment an SRE gives the manager with the chart: extraEnv for the
// egress proxy, caBundle for a private CA (mounted at a directory that
// SSL_CERT_DIR names).
var _ = Describe("The manager's way out", func() {
	It("reaches the service only through the HTTPS proxy of its environment", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		ca := newPrivateCA(serviceHost)
		front := tlsFront(upstream, ca)
		proxy := newConnectProxy(map[string]string{serviceHost + ":443": front.Listener.Addr().String()})
		ns := newNamespace(ctx, "egress-proxy")
		createKeySecret(ctx, ns, "evaluation-api-key", evalapitest.DefaultKey, false)

		startManagerWithEnv(ctx, "manager",
			[]string{"HTTPS_PROXY=" + proxy.URL, "NO_PROXY=", "SSL_CERT_DIR=" + ca.dir},
			"--api-url=https://"+serviceHost+"/api/v2")
		m := failoverMetric(ns, 0)
		Expect(k8s.Create(ctx, m)).To(Succeed())
		readyWith(ctx, m, v1alpha1.ReasonCreated)
		Expect(upstream.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
		Expect(proxy.tunnels.Load()).To(BeNumerically(">=", 1), "the create went through the proxy")
	})

	It("trusts a private CA from SSL_CERT_DIR, and without it refuses the service's certificate", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		ca := newPrivateCA("127.0.0.1")
		front := tlsFront(upstream, ca)
		apiURL := "--api-url=" + front.URL + "/api/v2"
		ns := newNamespace(ctx, "egress-ca")
		createKeySecret(ctx, ns, "evaluation-api-key", evalapitest.DefaultKey, false)

		// Without the CA: the TLS handshake fails, nothing reaches the service.
		untrusting := startManager(ctx, "untrusting", apiURL)
		refused := failoverMetric(ns, 0)
		Expect(k8s.Create(ctx, refused)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(refused), refused)).To(Succeed())
			c := meta.FindStatusCondition(refused.Status.Conditions, v1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring("certificate"))
		}).Should(Succeed())
		Expect(upstream.Calls(evalapitest.OpCreateMetric)).To(BeZero())
		Expect(untrusting.Stop(stopGrace, nil)).To(Succeed())

		// With it, as caBundle mounts it: the same Metric is created.
		startManagerWithEnv(ctx, "trusting", []string{"SSL_CERT_DIR=" + ca.dir}, apiURL)
		readyWith(ctx, refused, v1alpha1.ReasonCreated)
		Expect(upstream.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
	})
})

// privateCA is a CA of the spec's own and a serving certificate it signed.
type privateCA struct {
	// dir holds ca.crt alone, as the chart mounts caBundle's ConfigMap.
	dir  string
	leaf tls.Certificate
}

// newPrivateCA creates a CA and a certificate for host (a DNS name or an IP)
// signed by it.
func newPrivateCA(host string) *privateCA {
	GinkgoHelper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "eval-operator e2e private CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	caCert, err := x509.ParseCertificate(caDER)
	Expect(err).NotTo(HaveOccurred())

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	template := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		template.IPAddresses = []net.IP{ip}
	} else {
		template.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, caCert, &key.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())

	dir := GinkgoT().TempDir()
	Expect(os.WriteFile(filepath.Join(dir, "ca.crt"),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600)).To(Succeed())
	return &privateCA{dir: dir, leaf: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}
}

// tlsFront serves the fake service over HTTPS with the CA's certificate,
// as a service behind a corporate CA does.
func tlsFront(upstream *evalapitest.Server, ca *privateCA) *httptest.Server {
	GinkgoHelper()
	target, err := url.Parse(strings.TrimSuffix(upstream.URL(), "/api/v2"))
	Expect(err).NotTo(HaveOccurred())
	front := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(target))
	front.TLS = &tls.Config{Certificates: []tls.Certificate{ca.leaf}, MinVersion: tls.VersionTLS12}
	front.StartTLS()
	DeferCleanup(front.Close)
	return front
}

// connectProxy is an egress proxy that tunnels CONNECT requests to the
// hosts it knows (authority to address) and refuses everything else.
type connectProxy struct {
	*httptest.Server
	routes  map[string]string
	tunnels atomic.Int64
}

func newConnectProxy(routes map[string]string) *connectProxy {
	GinkgoHelper()
	p := &connectProxy{routes: routes}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	DeferCleanup(p.Close)
	return p
}

func (p *connectProxy) serve(w http.ResponseWriter, r *http.Request) {
	addr, known := p.routes[r.Host]
	if r.Method != http.MethodConnect || !known {
		http.Error(w, "this proxy only tunnels to known hosts", http.StatusForbidden)
		return
	}
	upstream, err := (&net.Dialer{}).DialContext(r.Context(), "tcp", addr)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, buffered, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	p.tunnels.Add(1)
	_, _ = conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go pipe(upstream, buffered)
	go pipe(conn, upstream)
}

// pipe copies src to dst until either side closes, then closes dst.
func pipe(dst io.WriteCloser, src io.Reader) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
}
