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
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// BasePath is where the API is served, as the service's SDKs expect it.
const BasePath = "/api/v2"

// Route patterns; each is also the route label of the request metrics.
const (
	routeMetrics    = BasePath + "/projects/{projectId}/metrics"
	routeBulkDelete = BasePath + "/testcases/bulk-delete"
	routeTestset    = BasePath + "/testsets/{testsetId}"
	routeOpenAPI    = BasePath + "/openapi.json"
	routeUnmatched  = "unmatched"
)

// routes builds the server's handler: the API's operations, its OpenAPI
// document, and ApiError answers for everything else.
func (s *Server) routes(openAPI []byte) http.Handler {
	mux := http.NewServeMux()
	for _, ep := range s.endpoints {
		s.route(mux, ep.route, map[string]http.Handler{ep.method: s.serve(ep)})
	}
	s.route(mux, routeOpenAPI, map[string]http.Handler{
		http.MethodGet:  serveJSON(openAPI),
		http.MethodHead: serveJSON(openAPI),
	})
	mux.Handle("/", s.instrument(routeUnmatched, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		write(w, notFound().response())
	})))
	return mux
}

// route registers pattern with one handler per method, answering any
// other method with 405 and an Allow header.
func (s *Server) route(mux *http.ServeMux, pattern string, byMethod map[string]http.Handler) {
	allowed := make([]string, 0, len(byMethod))
	for m := range byMethod {
		allowed = append(allowed, m)
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	mux.Handle(pattern, s.instrument(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := byMethod[r.Method]
		if !ok {
			e := newAPIError(http.StatusMethodNotAllowed, evalapi.CodeMethodNotAllowed,
				fmt.Sprintf("Method %s is not allowed here; allowed: %s", r.Method, allow), nil)
			e.header = http.Header{"Allow": {allow}}
			write(w, e.response())
			return
		}
		h.ServeHTTP(w, r)
	})))
}

// statusRecorder remembers the status code written.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// instrument counts and times requests of route, logs them without headers
// (which carry the key), and turns a panic into a 500 without a stack trace.
func (s *Server) instrument(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler { //nolint:errorlint // net/http re-panics with this exact value
					panic(p)
				}
				s.log.Error(fmt.Errorf("panic: %v", p), "Request handler panicked", "route", route, "stack", string(debug.Stack()))
				if rec.status == 0 {
					write(rec, internalError().response())
				}
			}
			code := strconv.Itoa(rec.status)
			requestsTotal.WithLabelValues(route, code).Inc()
			requestDuration.WithLabelValues(route).Observe(time.Since(start).Seconds())
			s.log.V(1).Info("Request", "method", r.Method, "route", route, "code", rec.status, "duration", time.Since(start))
		}()
		next.ServeHTTP(rec, r)
	})
}
