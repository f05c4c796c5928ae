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
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/remote"
)

var _ = Describe("A tenant's service transport", func() {
	DescribeTable("refuses addresses inside the cluster's network",
		func(addr string, private bool) {
			Expect(remote.Private(netip.MustParseAddr(addr))).To(Equal(private))
		},
		Entry("loopback", "127.0.0.1", true),
		Entry("IPv6 loopback", "::1", true),
		Entry("the cloud metadata endpoint (link-local)", "169.254.169.254", true),
		Entry("unspecified", "0.0.0.0", true),
		Entry("10/8", "10.1.2.3", true),
		Entry("172.16/12", "172.20.0.1", true),
		Entry("192.168/16", "192.168.1.1", true),
		Entry("IPv6 unique local", "fd00::1", true),
		Entry("IPv4-mapped loopback", "::ffff:127.0.0.1", true),
		Entry("carrier-grade NAT", "100.64.0.1", true),
		Entry("a public address", "203.0.113.7", false),
		Entry("a public IPv6 address", "2001:db8::1", false),
		Entry("this network beyond 0.0.0.0", "0.1.2.3", true),
		Entry("IETF protocol assignments", "192.0.0.170", true),
		Entry("benchmarking", "198.19.255.1", true),
		Entry("reserved", "240.0.0.1", true),
		Entry("IPv6 site-local", "fec0::1", true),
		Entry("NAT64 of loopback", "64:ff9b::7f00:1", true),
		Entry("NAT64 of 10/8", "64:ff9b::a00:1", true),
		Entry("NAT64 of a public address", "64:ff9b::cb00:7107", false),
		Entry("local-use NAT64", "64:ff9b:1::a00:1", true),
		Entry("6to4 of 192.168/16", "2002:c0a8:101::1", true),
		Entry("6to4 of a public address", "2002:cb00:7107::1", false),
		Entry("Teredo with a private client", "2001:0:cb00:7107::f5fe:fefe", true), // client 10.1.1.1 inverted
		Entry("Teredo with a private server", "2001:0:a00:1::3400:f8f8", true),
		Entry("Teredo with public server and client", "2001:0:cb00:7107::3400:f8f8", false),
		Entry("IPv4-compatible loopback", "::127.0.0.1", true),
	)

	DescribeTable("refuses numeric hosts Go would resolve as names, without a lookup",
		func(host string) {
			t, err := remote.NewTransport(remote.TransportOptions{RefusePrivate: true})
			Expect(err).NotTo(HaveOccurred())
			req, err := http.NewRequest(http.MethodGet, "http://"+host+"/api/v2/projects", nil)
			Expect(err).NotTo(HaveOccurred())
			_, err = (&http.Client{Transport: t}).Do(req)
			Expect(errors.Is(err, remote.ErrPrivateAddress)).To(BeTrue(), "%v", err)
			Expect(err.Error()).NotTo(ContainSubstring("lookup"))
		},
		Entry("hexadecimal", "0x7f000001"),
		Entry("decimal", "2130706433"),
		Entry("short dotted", "127.1"),
		Entry("octal", "0177.0.0.1"),
		Entry("a private literal", "10.0.0.1"),
	)

	It("sends through the environment's proxy, which it dials unchecked, and still checks what it dials itself", func(ctx SpecContext) {
		var proxied []string
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			proxied = append(proxied, r.URL.String())
		}))
		DeferCleanup(proxy.Close)
		GinkgoT().Setenv("HTTP_PROXY", proxy.URL)
		GinkgoT().Setenv("NO_PROXY", "internal.example")
		t, err := remote.NewTransport(remote.TransportOptions{RefusePrivate: true})
		Expect(err).NotTo(HaveOccurred())
		c := &http.Client{Transport: t}

		res, err := c.Get("http://eval.example.com/api/v2/projects")
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Body.Close()).To(Succeed())
		Expect(proxied).To(Equal([]string{"http://eval.example.com/api/v2/projects"}), "the proxy on loopback was reached")

		_, err = c.Get("http://10.0.0.1/api/v2/projects")
		Expect(errors.Is(err, remote.ErrPrivateAddress)).To(BeTrue(), "%v", err)
		Expect(proxied).To(HaveLen(1), "a private literal is not handed to the proxy")

		_, port, err := net.SplitHostPort(proxy.Listener.Addr().String())
		Expect(err).NotTo(HaveOccurred())
		_, err = c.Get("http://localhost:" + port + "/api/v2/projects")
		Expect(errors.Is(err, remote.ErrPrivateAddress)).To(BeTrue(), "direct, not proxied, and checked: %v", err)
	})

	DescribeTable("limits namespaced services to the hosts the administrator allows",
		func(url string, hosts []string, allowed bool) {
			Expect(remote.HostAllowed(url, hosts)).To(Equal(allowed))
		},
		Entry("any host without a list", "https://anything.example/api/v2", nil, true),
		Entry("an exact host", "https://API.example.com/api/v2", []string{"api.example.com"}, true),
		Entry("another host", "https://evil.example/api/v2", []string{"api.example.com"}, false),
		Entry("a name under a wildcard", "https://eu.eval.example.com:8443/api/v2", []string{"*.eval.example.com"}, true),
		Entry("the wildcard's own suffix is not under it", "https://eval.example.com/api/v2", []string{"*.eval.example.com"}, false),
		Entry("a suffix that only looks alike", "https://xeval.example.com/api/v2", []string{"*.eval.example.com"}, false),
	)

	It("checks the address it dials: a service on loopback is not reached", func(ctx SpecContext) {
		reached := false
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
		DeferCleanup(srv.Close)
		t, err := remote.NewTransport(remote.TransportOptions{RefusePrivate: true})
		Expect(err).NotTo(HaveOccurred())
		// A name, so the check cannot be on the URL: it must be on the dialled address.
		_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
		Expect(err).NotTo(HaveOccurred())
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://localhost:"+port, nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = (&http.Client{Transport: t}).Do(req)
		Expect(errors.Is(err, remote.ErrPrivateAddress)).To(BeTrue(), "%v", err)
		Expect(reached).To(BeFalse())

		open, err := remote.NewTransport(remote.TransportOptions{})
		Expect(err).NotTo(HaveOccurred())
		res, err := (&http.Client{Transport: open}).Do(req.Clone(context.Background()))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Body.Close()).To(Succeed())
		Expect(reached).To(BeTrue(), "without the guard the same request arrives")
	})

	It("refuses a caBundle without a certificate", func() {
		_, err := remote.NewTransport(remote.TransportOptions{CABundle: "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----"})
		Expect(err).To(HaveOccurred())
	})
})
