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
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// Requests net/http refuses before any handler runs, as raw bytes.
var malformed = []TableEntry{
	Entry("a malformed request line", "GARBAGE\r\n\r\n", http.StatusBadRequest, apierror.CodeBadRequest),
	Entry("a header line without a colon", "GET "+routeOpenAPI+" HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n",
		http.StatusBadRequest, apierror.CodeBadRequest),
	Entry("no Host header", "GET "+routeOpenAPI+" HTTP/1.1\r\n\r\n", http.StatusBadRequest, apierror.CodeBadRequest),
	Entry("a malformed Host header", "GET "+routeOpenAPI+" HTTP/1.1\r\nHost: a b\r\n\r\n",
		http.StatusBadRequest, apierror.CodeBadRequest),
	Entry("a header value with a control character", "GET "+routeOpenAPI+" HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n",
		http.StatusBadRequest, apierror.CodeBadRequest),
	Entry("two Content-Lengths that differ", "POST "+projectPath+" HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		http.StatusBadRequest, apierror.CodeBadRequest),
	Entry("headers over the limit", "GET "+routeOpenAPI+" HTTP/1.1\r\nHost: x\r\nX-A: "+strings.Repeat("a", 80<<10)+"\r\n\r\n",
		http.StatusRequestHeaderFieldsTooLarge, apierror.CodeHeadersTooLarge),
	Entry("an HTTP version other than 1.x", "GET "+routeOpenAPI+" HTTP/3.0\r\nHost: x\r\n\r\n",
		http.StatusHTTPVersionNotSupported, apierror.CodeHTTPVersionNotSupported),
	Entry("a transfer coding other than chunked", "POST "+projectPath+" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
		http.StatusNotImplemented, apierror.CodeNotImplemented),
	Entry("an expectation other than 100-continue", "GET "+routeOpenAPI+" HTTP/1.1\r\nHost: x\r\nExpect: tea\r\n\r\n",
		http.StatusExpectationFailed, apierror.CodeExpectationFailed),
	Entry("OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusNotFound, evalapi.CodeNotFound),
	Entry("GET *", "GET * HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusNotFound, evalapi.CodeNotFound),
	Entry("an unclean path outside the base path", "GET //projects/p/metrics HTTP/1.1\r\nHost: x\r\n\r\n",
		http.StatusNotFound, evalapi.CodeNotFound),
	Entry("an unclean path", "GET "+BasePath+"//projects/p/metrics HTTP/1.1\r\nHost: x\r\n\r\n",
		http.StatusNotFound, evalapi.CodeNotFound),
}

var _ = Describe("Answers net/http gives itself", func() {
	DescribeTable("are ApiErrors", func(raw string, status int, code string) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = conn.Close() }()
		expectRawAPIError(conn, raw, status, code)
	}, malformed)

	It("are ApiErrors over TLS too, and so is a plain HTTP request to the TLS port", func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, addr, pool, _ := serveTLS(ctx)
		for _, raw := range []string{"GARBAGE\r\n\r\n", "GET " + routeOpenAPI + " HTTP/1.1\r\n\r\n"} {
			conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
			Expect(err).NotTo(HaveOccurred())
			expectRawAPIError(conn, raw, http.StatusBadRequest, apierror.CodeBadRequest)
			_ = conn.Close()
		}
		conn, err := net.Dial("tcp", addr)
		Expect(err).NotTo(HaveOccurred())
		defer func() { _ = conn.Close() }()
		expectRawAPIError(conn, "GET "+routeOpenAPI+" HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusBadRequest, apierror.CodeBadRequest)
	})
})

// expectRawAPIError writes raw on conn and expects the answer to be an
// ApiError with status and code that closes the connection.
func expectRawAPIError(conn net.Conn, raw string, status int, code string) {
	GinkgoHelper()
	Expect(conn.SetDeadline(time.Now().Add(10 * time.Second))).To(Succeed())
	// The server may answer and close before it has read everything (431).
	go func() { _, _ = io.WriteString(conn, raw) }()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.StatusCode).To(Equal(status), "body: %s", body)
	Expect(res.Header.Get("Content-Type")).To(Equal("application/json"), "body: %s", body)
	Expect(spec.Components.Schemas["ApiError"].Value.VisitJSON(decodeAny(body))).To(Succeed(), "body: %s", body)
	Expect(apiErrorOf(reply{body: body})["code"]).To(Equal(code))
}
