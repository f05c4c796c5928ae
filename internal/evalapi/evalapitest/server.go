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

// Package evalapitest is a fake Evaluation Service for tests, end-to-end runs
// and benchmarks. It serves the operations of the API under /api/v2 (create,
// get, update, delete and list Metrics; create, get, update, list and delete
// Testsets; create, list, get, update and bulk-delete Testcases; upsert,
// get, update, delete and list Systems; upsert and get their versions;
// create and read Runs, Records and Scores), validates requests as the real service does, keeps the Metrics of
// each project, records what it committed and which key sent each request,
// and plays programmable faults. It is written from the API description
// alone (see metric.go), not from the operator's code. It is safe for
// concurrent use.
package evalapitest

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// DefaultKey is the key a new Server accepts, unless WithKeys says otherwise.
const DefaultKey = "ak_evalapitest_default"

// Operations, for Calls and InjectFaults. They equal the operation label of
// the operator's upstream metrics.
const (
	OpCreateMetric        = "create_metric"
	OpBulkDeleteTestcases = "bulk_delete_testcases"
	OpDeleteTestset       = "delete_testset"
	OpGetMetric           = "get_metric"
	OpUpdateMetric        = "update_metric"
	OpDeleteMetric        = "delete_metric"
	OpListMetrics         = "list_metrics"
	OpListProjects        = "list_projects"
	OpCreateTestset       = "create_testset"
	OpGetTestset          = "get_testset"
	OpUpdateTestset       = "update_testset"
	OpListTestsets        = "list_testsets"
	OpCreateTestcases     = "create_testcases"
	OpListTestcases       = "list_testcases"
	OpGetTestcase         = "get_testcase"
	OpUpdateTestcase      = "update_testcase"
	OpCreateRun           = "create_run"
	OpGetRun              = "get_run"
	OpListRecords         = "list_records"
	OpCreateRecord        = "create_record"
	OpUpsertScore         = "upsert_score"
	OpUpsertSystem        = "upsert_system"
	OpGetSystem           = "get_system"
	OpUpdateSystem        = "update_system"
	OpDeleteSystem        = "delete_system"
	OpListSystems         = "list_systems"
	OpUpsertSystemVersion = "upsert_system_version"
	OpGetSystemVersion    = "get_system_version"
)

// lifecycleOps are the operations an older service does not serve (see
// WithoutMetricLifecycle).
var lifecycleOps = []string{OpGetMetric, OpUpdateMetric, OpDeleteMetric, OpListMetrics}

// List page sizes of the API.
const (
	defaultListLimit = 20
	maxListLimit     = 100
)

// maxBodyBytes is the largest request body the Server reads; larger ones get 413.
const maxBodyBytes = 1 << 20

// CreatedMetric is a committed create.
type CreatedMetric struct {
	// ProjectID is the unescaped projectId of the request path.
	ProjectID string
	// Body is the request body, byte for byte.
	Body []byte
	// Metric is the answer: the request in response form under its new id.
	Metric evalapi.Metric
	// Key is the key that sent the request.
	Key string
}

// Request is a request that reached the Server, whatever its outcome.
type Request struct {
	// Op is its operation.
	Op string
	// Key is the bearer key it carried, "" when none.
	Key string
	// ProjectID and MetricID are the unescaped ids of its path, when it has them.
	ProjectID, MetricID string
}

// RemoteMetric is a Metric the Server holds.
type RemoteMetric struct {
	// ProjectID is the unescaped projectId it was created in.
	ProjectID string
	// Metric is its current response form.
	Metric evalapi.Metric
}

// storedMetric is a RemoteMetric and its place in the creation order, which
// orders lists and anchors cursors.
type storedMetric struct {
	RemoteMetric
	seq int
}

// Server is the fake service. Create it with New and Close it when done.
type Server struct {
	http      *httptest.Server
	closing   chan struct{}
	closeOnce sync.Once
	latency   atomic.Int64 // time.Duration added to every request
	// withoutLifecycle, idPrefix and listener are set before the Server starts and never change.
	withoutLifecycle bool
	idPrefix         string
	listener         net.Listener

	mu sync.Mutex
	// tenants maps each accepted key to its tenant: 0 for the keys of
	// SetKeys, n for those of the nth AddTenant.
	tenants map[string]int
	// projects maps each project to the tenant whose key first used it.
	projects  map[string]int
	nTenants  int
	calls     map[string]int
	requests  []Request
	metrics   []CreatedMetric
	stored    map[string]*storedMetric // by id
	testcases []string
	testsets  []string
	sets      testsetStore
	runs      runStore
	systems   systemStore
	faults    faults
}

// Option configures a Server.
type Option func(*Server)

// WithKeys sets the keys of the first tenant instead of DefaultKey.
func WithKeys(keys ...string) Option { return func(s *Server) { s.SetKeys(keys...) } }

// WithLatency adds d to every request.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.SetLatency(d) } }

// WithoutMetricLifecycle makes the Server an older service that serves only
// create, bulk-delete of testcases and delete of a testset: GET, PATCH and
// DELETE /metrics/{id} answer 404 NOT_FOUND, and GET /projects/{id}/metrics
// answers 405 METHOD_NOT_ALLOWED. Calls still counts those requests under
// their operation; they play no faults.
func WithoutMetricLifecycle() Option { return func(s *Server) { s.withoutLifecycle = true } }

// WithIDPrefix makes the ids of created Metrics prefix followed by a sequence
// number, instead of "met_" and the number, so that the Metrics of Servers
// sharing one cluster never share an id.
func WithIDPrefix(prefix string) Option { return func(s *Server) { s.idPrefix = prefix } }

// ListenOn serves on l instead of a loopback port: an address pods reach,
// for a cluster whose pods call the Server.
func ListenOn(l net.Listener) Option { return func(s *Server) { s.listener = l } }

// New starts a Server on a loopback port, or on ListenOn's listener.
func New(opts ...Option) *Server {
	s := &Server{closing: make(chan struct{}), calls: map[string]int{}, stored: map[string]*storedMetric{}, idPrefix: "met_",
		tenants: map[string]int{}, projects: map[string]int{}, runs: runStore{scorer: PassingScorer}}
	s.SetKeys(DefaultKey)
	for _, opt := range opts {
		opt(s)
	}
	s.http = httptest.NewUnstartedServer(s.routes())
	if s.listener != nil {
		_ = s.http.Listener.Close()
		s.http.Listener = s.listener
	}
	s.http.Start()
	return s
}

// URL is the base URL of the API, ending in /api/v2.
func (s *Server) URL() string { return s.http.URL + "/api/v2" }

// Close stops the Server, cutting short any Slow or latency wait.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	s.http.Close()
}

// SetKeys replaces the keys of the first tenant (a rotation keeps its
// projects and Metrics); requests with a key no tenant holds get 401.
//
// A tenant is an account of the service: its keys reach the projects it
// used first and their Metrics, and no others. A project another tenant
// used first, or a Metric in one, answers 404 NOT_FOUND, as if it did not
// exist. Requests records which key sent what.
func (s *Server) SetKeys(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.tenants, func(_ string, t int) bool { return t == 0 })
	for _, k := range keys {
		s.tenants[k] = 0
	}
}

// AddTenant adds a tenant holding keys, apart from every other (see SetKeys).
func (s *Server) AddTenant(keys ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nTenants++
	for _, k := range keys {
		s.tenants[k] = s.nTenants
	}
}

// SetLatency adds d to every request from now on.
func (s *Server) SetLatency(d time.Duration) { s.latency.Store(int64(d)) }

// InjectFaults queues faults for op: each request of op takes the next one.
func (s *Server) InjectFaults(op string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.inject(op, faults)
}

// FailRandomly plays one of kinds, picked at random, on that fraction of the
// requests of every operation that have no queued fault. The same seed plays
// the same sequence. A fraction of 0 stops it.
func (s *Server) FailRandomly(fraction float64, seed int64, kinds ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failRandomly(fraction, seed, kinds)
}

// Calls counts the requests of op that reached the Server, whatever their outcome.
func (s *Server) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// Requests returns the requests that reached the Server, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Metric returns the Metric the Server holds under id, as GET would.
func (s *Server) Metric(id string) (evalapi.Metric, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sm, ok := s.stored[id]
	if !ok {
		return evalapi.Metric{}, false
	}
	return cloneMetric(sm.Metric), true
}

// Metrics returns every Metric the Server holds, oldest first.
func (s *Server) Metrics() []RemoteMetric {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.newestFirst(func(*storedMetric) bool { return true })
	out := make([]RemoteMetric, len(all))
	for i, sm := range all {
		out[i] = RemoteMetric{ProjectID: sm.ProjectID, Metric: cloneMetric(sm.Metric)}
	}
	slices.Reverse(out)
	return out
}

// EditMetric changes the Metric under id as a person in the service's web UI
// would, without a request: edit gets a copy to change (its id is kept
// whatever edit does), and the result is stored as it is, unvalidated. edit
// must not call the Server. It reports whether the Metric exists.
func (s *Server) EditMetric(id string, edit func(*evalapi.Metric)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sm, ok := s.stored[id]
	if !ok {
		return false
	}
	m := cloneMetric(sm.Metric)
	edit(&m)
	m.ID = id
	sm.Metric = m
	return true
}

// RemoveMetric deletes the Metric under id without a request, as a person in
// the web UI would. It reports whether the Metric existed.
func (s *Server) RemoveMetric(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.stored[id]
	delete(s.stored, id)
	return ok
}

// Creates counts the committed creates.
func (s *Server) Creates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.metrics)
}

// CreatedMetrics returns the committed creates, oldest first, including those
// of Metrics deleted since.
func (s *Server) CreatedMetrics() []CreatedMetric {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.metrics)
}

// DeletedTestcases returns the ids of every committed bulk deletion, in the
// order received; an id deleted twice appears twice.
func (s *Server) DeletedTestcases() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.testcases)
}

// DeletedTestsets returns the unescaped ids of every committed testset
// deletion, in the order received.
func (s *Server) DeletedTestsets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.testsets)
}

// reply is an answer: a status and a JSON body.
type reply struct {
	status int
	body   any
}

// A handler validates an authenticated request without side effects. It
// returns the commit that applies the request and returns its answer, or nil
// and the rejection. A commit that depends on the stored Metrics looks them
// up itself, under the lock, and may still answer 404 or 400; it reaches
// only the projects and Metrics of tenant.
type handler func(r *http.Request, body []byte, tenant int) (commit func() reply, rejection reply)

// endpoint is one operation on a path.
type endpoint struct {
	method string
	op     string
	h      handler
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.handle(mux, "/api/v2/projects/{projectId}/metrics",
		endpoint{http.MethodPost, OpCreateMetric, s.createMetric},
		endpoint{http.MethodGet, OpListMetrics, s.listMetrics})
	s.handle(mux, "/api/v2/projects", endpoint{http.MethodGet, OpListProjects, s.listProjects})
	s.handle(mux, "/api/v2/metrics/{metricId}",
		endpoint{http.MethodGet, OpGetMetric, s.getMetric},
		endpoint{http.MethodPatch, OpUpdateMetric, s.updateMetric},
		endpoint{http.MethodDelete, OpDeleteMetric, s.deleteMetric})
	s.handle(mux, "/api/v2/testcases/bulk-delete", endpoint{http.MethodPost, OpBulkDeleteTestcases, s.bulkDeleteTestcases})
	s.handle(mux, "/api/v2/projects/{projectId}/testsets",
		endpoint{http.MethodPost, OpCreateTestset, s.createTestset},
		endpoint{http.MethodGet, OpListTestsets, s.listTestsets})
	s.handle(mux, "/api/v2/testsets/{testsetId}",
		endpoint{http.MethodGet, OpGetTestset, s.getTestset},
		endpoint{http.MethodPatch, OpUpdateTestset, s.updateTestset},
		endpoint{http.MethodDelete, OpDeleteTestset, s.deleteTestset})
	s.handle(mux, "/api/v2/testsets/{testsetId}/testcases",
		endpoint{http.MethodPost, OpCreateTestcases, s.createTestcases},
		endpoint{http.MethodGet, OpListTestcases, s.listTestcases})
	s.handle(mux, "/api/v2/testcases/{testcaseId}",
		endpoint{http.MethodGet, OpGetTestcase, s.getTestcase},
		endpoint{http.MethodPut, OpUpdateTestcase, s.updateTestcase})
	s.handle(mux, "/api/v2/projects/{projectId}/runs", endpoint{http.MethodPost, OpCreateRun, s.createRun})
	s.handle(mux, "/api/v2/runs/{runId}", endpoint{http.MethodGet, OpGetRun, s.getRun})
	s.handle(mux, "/api/v2/runs/{runId}/records",
		endpoint{http.MethodPost, OpCreateRecord, s.createRecord},
		endpoint{http.MethodGet, OpListRecords, s.listRecords})
	s.handle(mux, "/api/v2/records/{recordId}/scores/{metricConfigId}", endpoint{http.MethodPut, OpUpsertScore, s.upsertScore})
	s.handle(mux, "/api/v2/projects/{projectId}/systems",
		endpoint{http.MethodPost, OpUpsertSystem, s.upsertSystem},
		endpoint{http.MethodGet, OpListSystems, s.listSystems})
	s.handle(mux, "/api/v2/systems/{systemId}",
		endpoint{http.MethodGet, OpGetSystem, s.getSystem},
		endpoint{http.MethodPatch, OpUpdateSystem, s.updateSystem},
		endpoint{http.MethodDelete, OpDeleteSystem, s.deleteSystem})
	// /systems/versions/{id} and /systems/{id}/versions overlap (both match
	// /systems/versions/versions), which ServeMux refuses: one pattern
	// routes both, as the service's router does, the literal segment first.
	versions, version := http.NewServeMux(), http.NewServeMux()
	s.handle(versions, "/api/v2/systems/{systemId}/versions", endpoint{http.MethodPost, OpUpsertSystemVersion, s.upsertSystemVersion})
	s.handle(version, "/api/v2/systems/versions/{systemVersionId}", endpoint{http.MethodGet, OpGetSystemVersion, s.getSystemVersion})
	mux.HandleFunc("/api/v2/systems/{first}/{second}", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.PathValue("first") == "versions":
			version.ServeHTTP(w, r)
		case r.PathValue("second") == "versions":
			versions.ServeHTTP(w, r)
		default:
			writeReply(w, noSuchOperation())
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { writeReply(w, noSuchOperation()) })
	return mux
}

// handle routes the endpoints of pattern. A method the Server does not serve
// there answers 405, or 404 when it serves none at all, as a service that
// does not know the path would.
func (s *Server) handle(mux *http.ServeMux, pattern string, endpoints ...endpoint) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, e := range endpoints {
			if !s.serves(e.op) {
				if r.Method == e.method {
					s.count(e.op, r) // and answered below, as an older service would
				}
				continue
			}
			if r.Method == e.method {
				s.serve(w, r, e.op, e.h)
				return
			}
			allow = append(allow, e.method)
		}
		if len(allow) == 0 {
			writeReply(w, noSuchOperation())
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeReply(w, errorReply(http.StatusMethodNotAllowed, codeMethodNotAllowed, "Method not allowed", nil))
	})
}

func (s *Server) serves(op string) bool {
	return !s.withoutLifecycle || !slices.Contains(lifecycleOps, op)
}

func noSuchOperation() reply {
	return errorReply(http.StatusNotFound, codeNotFound, "No such operation", nil)
}

// serve answers one request of op, playing its fault if it has one.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, op string, h handler) {
	fault := s.begin(op, r)
	// Reading the whole body first lets the request context end when the
	// client goes away, and makes Reset a request that certainly arrived.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writeReply(w, errorReply(http.StatusRequestEntityTooLarge, codePayloadTooLarge, "The request body is larger than 1 MiB", nil))
		return
	}
	if err != nil {
		return // the client went away mid-request: nobody to answer
	}
	s.pause(r, time.Duration(s.latency.Load())+fault.delay)
	switch fault.kind {
	case faultStatus:
		if fault.retryAfter != "" {
			w.Header().Set("Retry-After", fault.retryAfter)
		}
		writeReply(w, statusReply(fault.status))
		return
	case faultGateway:
		writeGatewayPage(w, fault.status)
		return
	case faultReset:
		dropConnection()
	}
	rep := s.respond(r, body, op, fault, h)
	if fault.then != nil {
		fault.then()
	}
	if fault.kind == faultCommitThenReset {
		dropConnection()
	}
	writeReply(w, rep)
}

// begin records a request of op and takes its fault.
func (s *Server) begin(op string, r *http.Request) Fault {
	s.count(op, r)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults.next(op)
}

// count records a request of op.
func (s *Server) count(op string, r *http.Request) {
	key, _ := bearerKey(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	s.requests = append(s.requests, Request{Op: op, Key: key, ProjectID: r.PathValue("projectId"), MetricID: r.PathValue("metricId")})
}

// pause waits d, or less if the client goes away or the Server closes.
func (s *Server) pause(r *http.Request, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	case <-s.closing:
	}
}

// dropConnection closes the connection without an answer; it does not return.
func dropConnection() {
	panic(http.ErrAbortHandler)
}

// respond authenticates, validates and, unless fault says otherwise, commits.
func (s *Server) respond(r *http.Request, body []byte, op string, fault Fault, h handler) reply {
	tenant, ok := s.tenantOf(r)
	if !ok {
		return statusReply(http.StatusUnauthorized)
	}
	commit, rejection := h(r, body, tenant)
	switch {
	case commit == nil:
		return rejection
	case fault.kind == faultSuccessFalse && isDeletion(op):
		return reply{http.StatusOK, success{false}}
	default:
		return commit()
	}
}

func isDeletion(op string) bool {
	return op == OpBulkDeleteTestcases || op == OpDeleteTestset || op == OpDeleteMetric || op == OpDeleteSystem
}

// bearerKey is the key of r's Authorization header.
func bearerKey(r *http.Request) (string, bool) {
	return strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// tenantOf is the tenant whose key r carries.
func (s *Server) tenantOf(r *http.Request) (int, bool) {
	key, ok := bearerKey(r)
	if !ok {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tenants[key]
	return t, ok
}

// reaches reports whether tenant may use projectID, giving it the project
// when no tenant has used it yet. Callers hold the lock.
func (s *Server) reaches(tenant int, projectID string) bool {
	owner, ok := s.projects[projectID]
	if !ok {
		s.projects[projectID] = tenant
		return true
	}
	return owner == tenant
}

// metricOf is the Metric under id if tenant reaches it. Callers hold the lock.
func (s *Server) metricOf(tenant int, id string) (*storedMetric, bool) {
	sm, ok := s.stored[id]
	if !ok || s.projects[sm.ProjectID] != tenant {
		return nil, false
	}
	return sm, true
}

func (s *Server) createMetric(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	var b metricBody
	if rejection, ok := decodeMetricBody(r, body, &b); !ok {
		return nil, rejection
	}
	if errs := b.validate(); len(errs) > 0 {
		return nil, invalid(errs...)
	}
	projectID := r.PathValue("projectId")
	key, _ := bearerKey(r)
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.reaches(tenant, projectID) {
			return projectNotFound(projectID)
		}
		seq := len(s.metrics) + 1
		m := b.resource(fmt.Sprintf("%s%08d", s.idPrefix, seq))
		s.metrics = append(s.metrics, CreatedMetric{ProjectID: projectID, Body: body, Metric: m, Key: key})
		s.stored[m.ID] = &storedMetric{RemoteMetric: RemoteMetric{ProjectID: projectID, Metric: cloneMetric(m)}, seq: seq}
		return reply{http.StatusCreated, m}
	}, reply{}
}

func (s *Server) getMetric(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	id := r.PathValue("metricId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		sm, ok := s.metricOf(tenant, id)
		if !ok {
			return metricNotFound(id)
		}
		return reply{http.StatusOK, cloneMetric(sm.Metric)}
	}, reply{}
}

// updateMetric applies a PATCH as metricBody.patched says; the result must
// pass the rules of a create.
func (s *Server) updateMetric(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	var b metricBody
	if rejection, ok := decodeMetricBody(r, body, &b); !ok {
		return nil, rejection
	}
	if errs := b.nulls(); len(errs) > 0 {
		return nil, invalid(errs...)
	}
	id := r.PathValue("metricId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		sm, ok := s.metricOf(tenant, id)
		if !ok {
			return metricNotFound(id)
		}
		next := b.patched(sm.Metric)
		if errs := next.validate(); len(errs) > 0 {
			return invalid(errs...)
		}
		sm.Metric = next.resource(id)
		return reply{http.StatusOK, cloneMetric(sm.Metric)}
	}, reply{}
}

func (s *Server) deleteMetric(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	id := r.PathValue("metricId")
	// Checked here too, so that SuccessFalse cannot answer for a Metric that does not exist.
	s.mu.Lock()
	_, ok := s.metricOf(tenant, id)
	s.mu.Unlock()
	if !ok {
		return nil, metricNotFound(id)
	}
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.metricOf(tenant, id); !ok {
			return metricNotFound(id)
		}
		delete(s.stored, id)
		return reply{http.StatusOK, success{true}}
	}, reply{}
}

// listMetrics answers a page of a project's Metrics, newest first. The cursor
// names the last Metric of the previous page, so Metrics created since do
// not shift the pages that follow.
func (s *Server) listMetrics(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	limit, last, errs := listQuery(r.URL.Query())
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	projectID := r.PathValue("projectId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.reaches(tenant, projectID) {
			return projectNotFound(projectID)
		}
		all := s.newestFirst(func(sm *storedMetric) bool { return sm.ProjectID == projectID })
		return reply{http.StatusOK, pageOf(all, func(sm *storedMetric) int { return sm.seq },
			func(sm *storedMetric) evalapi.Metric { return cloneMetric(sm.Metric) }, last, limit, true)}
	}, reply{}
}

// listProjects is GET /projects: the projects the tenant's keys have used,
// by id, paged like Metrics (the cursor is the position after the page).
func (s *Server) listProjects(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	limit, from, errs := listQuery(r.URL.Query())
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		var ids []string
		for id, owner := range s.projects {
			if owner == tenant {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		total := len(ids)
		rest := ids[min(from, total):]
		page := evalapi.ProjectPage{Data: []evalapi.Project{}, Total: &total}
		for _, id := range rest[:min(limit, len(rest))] {
			page.Data = append(page.Data, evalapi.Project{ID: id})
		}
		if page.HasMore = len(rest) > limit; page.HasMore {
			next := encodeCursor(from + limit)
			page.NextCursor = &next
		}
		return reply{http.StatusOK, page}
	}, reply{}
}

// listQuery reads limit (1 to 100, default 20) and cursor: the creation
// sequence number of the last item of the previous page (0: the first page).
// A list newest first goes on with the items older than it; one oldest
// first, with those newer.
func listQuery(q url.Values) (limit, last int, errs []fieldError) {
	limit = defaultListLimit
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxListLimit {
			errs = append(errs, fieldError{Field: "limit", Message: "limit must be a whole number from 1 to 100"})
		}
		limit = n
	}
	if c := q.Get("cursor"); c != "" {
		var ok bool
		if last, ok = decodeCursor(c); !ok {
			errs = append(errs, fieldError{Field: "cursor", Message: "cursor is not a cursor this service issued"})
		}
	}
	return limit, last, errs
}

const cursorPrefix = "after:"

// encodeCursor is an opaque cursor for the page after the item with
// creation sequence number seq.
func encodeCursor(seq int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(seq)))
}

func decodeCursor(c string) (int, bool) {
	data, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	digits, ok := strings.CutPrefix(string(data), cursorPrefix)
	seq, err := strconv.Atoi(digits)
	return seq, ok && err == nil && seq > 0
}

// newestFirst returns the stored Metrics that keep selects, newest first.
// Callers hold the lock.
func (s *Server) newestFirst(keep func(*storedMetric) bool) []*storedMetric {
	var out []*storedMetric
	for _, sm := range s.stored {
		if keep(sm) {
			out = append(out, sm)
		}
	}
	slices.SortFunc(out, func(a, b *storedMetric) int { return cmp.Compare(b.seq, a.seq) })
	return out
}

func metricNotFound(id string) reply {
	return errorReply(http.StatusNotFound, codeNotFound, "Metric not found", map[string]any{"metricId": id})
}

func projectNotFound(id string) reply {
	return errorReply(http.StatusNotFound, codeNotFound, "Project not found", map[string]any{"projectId": id})
}

// success is the answer of every deletion.
type success struct {
	Success bool `json:"success"`
}

func (s *Server) bulkDeleteTestcases(r *http.Request, body []byte, _ int) (func() reply, reply) {
	var req struct {
		IDs []string `json:"ids"`
	}
	if rejection, ok := decodeJSON(r, body, &req); !ok {
		return nil, rejection
	}
	if errs := validateIDs(req.IDs); len(errs) > 0 {
		return nil, invalid(errs...)
	}
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.testcases = append(s.testcases, req.IDs...)
		for _, id := range req.IDs {
			delete(s.sets.testcases, id)
		}
		return reply{http.StatusOK, success{true}}
	}, reply{}
}

// deleteTestset deletes a Testset and its testcases. One the Server does not
// hold counts as another client's, deleted all the same.
func (s *Server) deleteTestset(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	id := r.PathValue("testsetId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if t, held := s.sets.testsets[id]; held && s.projects[t.projectID] != tenant {
			return testsetNotFound(id)
		}
		s.testsets = append(s.testsets, id)
		for _, tc := range s.testcasesOf(id) {
			delete(s.sets.testcases, tc.testcase.ID)
		}
		delete(s.sets.testsets, id)
		return reply{http.StatusOK, success{true}}
	}, reply{}
}

// fieldError is one entry of a VALIDATION_ERROR's details.errors.
type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

var errTrailingData = errors.New("unexpected data after the JSON value")

// decodeJSON decodes body strictly: JSON content type, no unknown fields, no
// wrong types, nothing after the value.
func decodeJSON(r *http.Request, body []byte, v any) (reply, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return errorReply(http.StatusUnsupportedMediaType, codeUnsupportedMedia, "Content-Type must be application/json", nil), false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, tokenErr := dec.Token(); tokenErr != io.EOF {
			err = errTrailingData
		}
	}
	if err == nil {
		return reply{}, true
	}
	field := "body"
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		field = typeErr.Field
	}
	return invalid(fieldError{Field: field, Message: err.Error()}), false
}

// decodeMetricBody decodes a create or PATCH body strictly into b.
func decodeMetricBody(r *http.Request, body []byte, b *metricBody) (reply, bool) {
	rejection, ok := decodeJSON(r, body, b)
	if ok {
		b.readSent(body)
	}
	return rejection, ok
}

func validateIDs(ids []string) []fieldError {
	if len(ids) == 0 {
		return []fieldError{{Field: "ids", Message: "ids must be a non-empty array of strings"}}
	}
	var errs []fieldError
	for i, id := range ids {
		if id == "" {
			errs = append(errs, fieldError{Field: fmt.Sprintf("ids[%d]", i), Message: "ids must not hold empty strings"})
		}
	}
	return errs
}

func invalid(errs ...fieldError) reply {
	return errorReply(http.StatusBadRequest, codeValidation, "The request is invalid", map[string]any{"errors": errs})
}

// Error codes of the API. The description gives UNAUTHORIZED and
// INTERNAL_ERROR with their messages; a status it names no code for plays
// the code of its name (403 FORBIDDEN, 409 CONFLICT, 503 SERVICE_UNAVAILABLE).
const (
	codeUnauthorized     = "UNAUTHORIZED"
	codeInternal         = "INTERNAL_ERROR"
	codeValidation       = "VALIDATION_ERROR"
	codeNotFound         = "NOT_FOUND"
	codeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	codePayloadTooLarge  = "PAYLOAD_TOO_LARGE"
	codeUnsupportedMedia = "UNSUPPORTED_MEDIA_TYPE"
	codeRateLimited      = "RATE_LIMITED"
)

// statusReply is the ApiError answer of a status the Server plays.
func statusReply(status int) reply {
	switch status {
	case http.StatusBadRequest:
		return errorReply(status, codeValidation, "The request was rejected", map[string]any{"errors": []any{}})
	case http.StatusUnauthorized:
		return errorReply(status, codeUnauthorized, "Invalid or missing authentication token", nil)
	case http.StatusTooManyRequests:
		return errorReply(status, codeRateLimited, "Too many requests", nil)
	case http.StatusInternalServerError:
		return errorReply(status, codeInternal, "An unexpected error occurred while processing your request.", nil)
	}
	text := http.StatusText(status)
	return errorReply(status, strings.ToUpper(strings.ReplaceAll(text, " ", "_")), text, nil)
}

// apiError is the body of every error answer.
type apiError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

func errorReply(status int, code, message string, details map[string]any) reply {
	if details == nil {
		details = map[string]any{} // the API requires an object, never null
	}
	return reply{status, apiError{Code: code, Message: message, Details: details}}
}

// writeGatewayPage answers as a proxy in front of the service does: the
// status and an HTML page, no ApiError.
func writeGatewayPage(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, "<html><head><title>%[1]d %[2]s</title></head><body><center><h1>%[1]d %[2]s</h1></center></body></html>\n",
		status, http.StatusText(status))
}

func writeReply(w http.ResponseWriter, rep reply) {
	data, err := json.Marshal(rep.body)
	if err != nil {
		panic(err) // every body is a plain struct of validated values
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_, _ = w.Write(data)
}
