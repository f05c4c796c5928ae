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

// net/http answers some requests itself, before any handler runs (conn.serve
// and readRequest in net/http's server.go): a malformed request line or
// header, a missing or malformed Host (400), headers over MaxHeaderBytes
// (431), a Transfer-Encoding other than chunked (501) and an HTTP version
// other than 1.x (505) get plain text written straight onto the connection,
// which is then closed; an Expect other than 100-continue gets an empty 417;
// over TLS, a plain HTTP request gets a plain-text 400 on the raw connection.
// http.Server has no hook for any of them, so the server's listener hands
// net/http connections that recognise these answers as they are written and
// write an ApiError in their place.
//
// Recognising them cannot mistake a handler's answer. Each of net/http's is
// one Write starting with a status line, followed either by net/http's fixed
// "Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" or
// by the status 417, which no handler answers. A handler's answer always
// carries a Date header, and its JSON body holds no raw CR or LF, so no
// Write of it starts that way.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// maxHeaderBytes bounds a request's headers (http.Server.MaxHeaderBytes).
const maxHeaderBytes = 64 << 10

// readHeaderTimeout bounds reading a request's headers, and the TLS
// handshake before them.
const readHeaderTimeout = 10 * time.Second

// answeringListener hands net/http connections that answer with ApiErrors
// where net/http would answer with plain text. With tls set, it serves TLS.
type answeringListener struct {
	net.Listener
	tls *tls.Config
}

func (l answeringListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.tls == nil {
		return &answeringConn{Conn: c}, nil
	}
	tc := tls.Server(c, l.tls)
	return &answeringTLSConn{answeringConn: answeringConn{Conn: tc}, tls: tc}, nil
}

// answeringConn writes an ApiError in place of net/http's own answers.
type answeringConn struct {
	net.Conn
}

func (c *answeringConn) Write(p []byte) (int, error) {
	status, reason, ok := netHTTPAnswer(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(protocolAnswer(status, reason)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite lets net/http half-close the connection after a 431, so the
// client reads the answer before the connection is reset.
func (c *answeringConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// plainHeaders follows the status line of net/http's plain-text answers.
var plainHeaders = []byte("Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

// netHTTPAnswer reports whether p is one of net/http's own answers, and its
// status and net/http's reason, if the status line gives one.
func netHTTPAnswer(p []byte) (status int, reason string, ok bool) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.")) {
		return 0, "", false
	}
	line, rest, found := bytes.Cut(p, []byte("\r\n"))
	if !found || len(line) < len("HTTP/1.1 200") {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(line[len("HTTP/1.1 "):len("HTTP/1.1 200")]))
	if err != nil || !bytes.HasPrefix(rest, plainHeaders) && status != http.StatusExpectationFailed {
		return 0, "", false
	}
	_, why, _ := bytes.Cut(line, []byte(http.StatusText(status)+": "))
	return status, string(why), true
}

// protocolErrors are the ApiErrors that replace net/http's answers.
var protocolErrors = map[int]struct{ code, message string }{
	http.StatusBadRequest:                  {apierror.CodeBadRequest, "The request is not valid HTTP/1.1"},
	http.StatusExpectationFailed:           {apierror.CodeExpectationFailed, "The server meets no expectation other than Expect: 100-continue"},
	http.StatusRequestHeaderFieldsTooLarge: {apierror.CodeHeadersTooLarge, fmt.Sprintf("The request's headers are over the server's limit of %d KiB", maxHeaderBytes>>10)},
	http.StatusNotImplemented:              {apierror.CodeNotImplemented, "The server supports no Transfer-Encoding other than chunked"},
	http.StatusHTTPVersionNotSupported:     {apierror.CodeHTTPVersionNotSupported, "The server speaks HTTP/1.0 and HTTP/1.1 only"},
}

// protocolAnswer is the whole HTTP answer, an ApiError, that replaces
// net/http's own answer with status. It closes the connection, as
// net/http's does, and advises no retry: the same request fails again.
func protocolAnswer(status int, reason string) []byte {
	e, ok := protocolErrors[status]
	if !ok { // a refusal a later net/http adds
		e.code, e.message = apierror.CodeBadRequest, http.StatusText(status)
	}
	var details map[string]any
	if reason != "" {
		details = map[string]any{"reason": reason}
	}
	body, _ := json.Marshal(apierror.New(status, e.code, e.message, details).Response().Body) // maps of strings encode
	header := http.Header{apierror.ShouldRetryHeader: {"false"}}
	apierror.SetAnswerHeaders(header)
	res := &http.Response{
		StatusCode: status, ProtoMajor: 1, ProtoMinor: 1, Header: header, Close: true,
		ContentLength: int64(len(body)), Body: io.NopCloser(bytes.NewReader(body)),
	}
	var b bytes.Buffer
	_ = res.Write(&b) // writes to a buffer do not fail
	return b.Bytes()
}

// answeringTLSConn is an answeringConn over TLS. net/http performs the TLS
// handshake, and answers a plain HTTP request sent to the TLS port, only on
// a *tls.Conn, which this connection no longer is; so it does both itself,
// where net/http would: net/http asks a connection that is not a *tls.Conn
// for its ConnectionState (to fill Request.TLS) before it reads a request.
type answeringTLSConn struct {
	answeringConn
	tls  *tls.Conn
	once sync.Once
}

func (c *answeringTLSConn) ConnectionState() tls.ConnectionState {
	c.once.Do(c.handshake)
	return c.tls.ConnectionState()
}

func (c *answeringTLSConn) Read(p []byte) (int, error) {
	c.once.Do(c.handshake)
	return c.tls.Read(p)
}

// handshake performs the TLS handshake; a failed one fails every later Read
// and Write. A client that sent plain HTTP is answered a 400 ApiError in
// plain HTTP.
func (c *answeringTLSConn) handshake() {
	ctx, cancel := context.WithTimeout(context.Background(), readHeaderTimeout)
	defer cancel()
	var plain tls.RecordHeaderError
	if err := c.tls.HandshakeContext(ctx); !errors.As(err, &plain) || plain.Conn == nil || !looksLikeHTTP(plain.RecordHeader) {
		return
	}
	_, _ = plain.Conn.Write(protocolAnswer(http.StatusBadRequest, "a plain HTTP request to the HTTPS port"))
	_ = plain.Conn.Close()
}

// looksLikeHTTP reports whether the first five bytes a client sent start a
// plain HTTP request (net/http's tlsRecordHeaderLooksLikeHTTP).
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "PATCH", "DELET":
		return true
	}
	return false
}
