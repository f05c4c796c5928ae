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
	"cmp"
	"context"
	"fmt"
	"net/http"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/rollout"
)

// BasePath is where the API is served, as the service's SDKs expect it.
const BasePath = "/api/v2"

// Route patterns; each is also the route label of the request metrics.
const (
	routeProjects   = BasePath + "/projects"
	routeMetrics    = BasePath + "/projects/{projectId}/metrics"
	routeMetric     = BasePath + "/metrics/{metricId}"
	routeBulkDelete = BasePath + "/testcases/bulk-delete"
	routeTestset    = BasePath + "/testsets/{testsetId}"
	routeTestsets   = BasePath + "/projects/{projectId}/testsets"
	routeTestcases  = BasePath + "/testsets/{testsetId}/testcases"
	routeTestcase   = BasePath + "/testcases/{testcaseId}"
	routeOpenAPI    = BasePath + "/openapi.json"
	routeUnmatched  = "unmatched"
)

// operation is one method of one route, and its handler.
type operation struct {
	route, method string
	handler       http.Handler
}

// operations are every route and method the server serves: the API's
// operations and its OpenAPI document.
func (s *Server) operations(openAPI []byte) []operation {
	// Where the namespace may hold the object a deletion names, the cluster
	// serves the request first; the endpoint serves the rest.
	first := map[string]func(fallback http.Handler) http.Handler{
		routeTestset: s.deleteTestsetObject, routeBulkDelete: s.bulkDeleteInCluster,
	}
	ops := make([]operation, 0, len(s.endpoints)+15)
	for _, ep := range s.endpoints {
		h := s.serve(ep)
		if wrap := first[ep.route]; wrap != nil {
			h = wrap(h)
		}
		ops = append(ops, operation{ep.route, ep.method, h})
	}
	answer := func(h func(w http.ResponseWriter, r *http.Request) apierror.Response) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { apierror.Write(w, r, h(w, r)) })
	}
	return append(ops,
		operation{routeProjects, http.MethodGet, answer(s.listProjects)},
		operation{routeMetrics, http.MethodGet, answer(s.listMetrics)},
		operation{routeMetric, http.MethodGet, answer(s.getMetric)},
		operation{routeMetric, http.MethodPatch, answer(s.updateMetric)},
		operation{routeMetric, http.MethodDelete, answer(s.deleteMetric)},
		operation{routeTestsets, http.MethodGet, answer(s.listTestsets)},
		operation{routeTestset, http.MethodGet, answer(s.getTestset)},
		operation{routeTestset, http.MethodPatch, answer(s.updateTestset)},
		operation{routeTestcases, http.MethodGet, answer(s.listTestcases)},
		operation{routeTestcases, http.MethodPost, answer(s.createTestcases)},
		operation{routeTestcase, http.MethodGet, answer(s.getTestcase)},
		operation{routeTestcase, http.MethodPut, answer(s.updateTestcase)},
		operation{routeRuns, http.MethodPost, answer(s.createRun)},
		operation{routeRun, http.MethodGet, answer(s.getRun)},
		operation{routeSystems, http.MethodGet, answer(s.listSystems)},
		operation{routeSystems, http.MethodPost, answer(s.upsertSystem)},
		operation{routeSystem, http.MethodGet, answer(s.getSystem)},
		operation{routeSystem, http.MethodPatch, answer(s.updateSystem)},
		operation{routeSystem, http.MethodDelete, answer(s.deleteSystem)},
		operation{routeSystemVersions, http.MethodPost, answer(s.upsertSystemVersion)},
		operation{routeSystemVersion, http.MethodGet, answer(s.getSystemVersion)},
		operation{routeRecords, http.MethodPost, answer(s.createRecord)},
		operation{routeScore, http.MethodPut, answer(s.upsertScore)},
		operation{rollout.RouteFlagger, http.MethodPost, answer(s.gate(s.flaggerHook(false)))},
		operation{rollout.RouteFlaggerRollback, http.MethodPost, answer(s.gate(s.flaggerHook(true)))},
		operation{rollout.RouteAnalysis, http.MethodPost, answer(s.gate(s.flagger.Analysis))},
		operation{routeOpenAPI, http.MethodGet, serveJSON(openAPI)},
		operation{routeOpenAPI, http.MethodHead, serveJSON(openAPI)},
	)
}

// gateFunc answers one call of a rollout gate, body, sent with a key of
// secret's namespace; an error is the server's to answer.
type gateFunc func(ctx context.Context, secret types.NamespacedName, body []byte) (apierror.Response, error)

// flaggerHook is Flagger's promotion gate, or its rollback hook.
func (s *Server) flaggerHook(rollback bool) gateFunc {
	return func(ctx context.Context, secret types.NamespacedName, body []byte) (apierror.Response, error) {
		return s.flagger.Gate(ctx, secret, body, rollback)
	}
}

// gate serves one of the rollout gates (Flagger's webhooks, the web
// provider's analysis; see rollout.Flagger) to a request authenticated like
// any other.
func (s *Server) gate(serve gateFunc) func(http.ResponseWriter, *http.Request) apierror.Response {
	return func(w http.ResponseWriter, r *http.Request) apierror.Response {
		secret, err := s.authenticate(r)
		if err != nil {
			return s.failure(runKind, err)
		}
		body, err := s.readBody(w, r)
		if err != nil {
			return s.failure(runKind, err)
		}
		res, err := serve(r.Context(), secret, body)
		if err != nil {
			return s.failure(runKind, err)
		}
		return res
	}
}

// routes builds the server's handler: its operations, and ApiError answers
// for everything else.
func (s *Server) routes(openAPI []byte) http.Handler {
	mux := http.NewServeMux()
	byRoute := map[string]map[string]http.Handler{}
	for _, op := range s.operations(openAPI) {
		if byRoute[op.route] == nil {
			byRoute[op.route] = map[string]http.Handler{}
		}
		byRoute[op.route][op.method] = op.handler
	}
	for route, byMethod := range byRoute {
		s.route(mux, route, byMethod)
	}
	unmatched := s.instrument(routeUnmatched, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apierror.Write(w, r, apierror.NotFound().Response())
	}))
	mux.Handle("/", unmatched)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ServeMux would redirect an unclean path ("//x", "/a/../b") with an
		// HTML body; this API answers every request with an ApiError.
		if p := r.URL.Path; p == "" || p[0] != '/' || path.Clean(p) != p {
			unmatched.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// muxPatterns are the mux patterns of the routes the mux cannot hold as
// they are written.
var muxPatterns = map[string]string{routeSystemVersions: routeSystemChild}

// route registers pattern with one handler per method, answering any
// other method with 405 and an Allow header.
func (s *Server) route(mux *http.ServeMux, pattern string, byMethod map[string]http.Handler) {
	allowed := make([]string, 0, len(byMethod))
	for m := range byMethod {
		allowed = append(allowed, m)
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	mux.Handle(cmp.Or(muxPatterns[pattern], pattern), s.instrument(pattern, s.admission.Admit(s.keys, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := byMethod[r.Method]
		if !ok {
			e := apierror.New(http.StatusMethodNotAllowed, evalapi.CodeMethodNotAllowed,
				fmt.Sprintf("Method %s is not allowed here; allowed: %s", r.Method, allow), nil)
			e.Header = http.Header{"Allow": {allow}}
			apierror.Write(w, r, e.Response())
			return
		}
		h.ServeHTTP(w, r)
	}))))
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
		start := s.opts.Now()
		rec := &statusRecorder{ResponseWriter: w}
		r = apierror.WithAttempt(r)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler { //nolint:errorlint // net/http re-panics with this exact value
					panic(p)
				}
				s.log.Error(fmt.Errorf("panic: %v", p), "Request handler panicked", "route", route, "stack", string(debug.Stack()))
				if rec.status == 0 {
					apierror.Write(rec, r, apierror.Internal().Response())
				}
			}
			code := strconv.Itoa(rec.status)
			requestsTotal.WithLabelValues(route, code).Inc()
			took := s.opts.Now().Sub(start)
			requestDuration.WithLabelValues(route).Observe(took.Seconds())
			s.log.V(1).Info("Request", "method", r.Method, "route", route, "code", rec.status, "duration", took)
		}()
		next.ServeHTTP(rec, r)
	})
}
