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
	"net"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("A stopping server", func() {
	It("is not ready at once, serves on through DrainDelay closing each connection, then stops", func(ctx SpecContext) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		opts := h.server.opts
		opts.Listener, opts.DrainDelay = ln, 3*time.Second
		s, err := New(opts)
		Expect(err).NotTo(HaveOccurred())
		serveCtx, stop := context.WithCancel(ctx)
		defer stop()
		stopped := make(chan error, 1)
		go func() { stopped <- s.Start(serveCtx) }()
		Eventually(func() error { return s.ReadyCheck(nil) }).Should(Succeed())
		url := "http://" + ln.Addr().String() + routeOpenAPI

		stop()
		Eventually(func() error { return s.ReadyCheck(nil) }).Should(MatchError(ContainSubstring("draining")),
			"not ready from the stop on")
		res, err := h.http.Get(url)
		Expect(err).NotTo(HaveOccurred(), "still serving while draining")
		_ = res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusOK))
		Expect(res.Close).To(BeTrue(), "the answer closes its connection, so the client reconnects elsewhere")

		Eventually(stopped).WithTimeout(30 * time.Second).Should(Receive(BeNil()))
		_, err = h.http.Get(url)
		Expect(err).To(HaveOccurred(), "no longer accepting once drained")
	})

	It("refuses a negative DrainDelay", func() {
		opts := h.server.opts
		opts.DrainDelay = -time.Second
		_, err := New(opts)
		Expect(err).To(MatchError(ContainSubstring("DrainDelay")))
	})
})
