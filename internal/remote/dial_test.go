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
