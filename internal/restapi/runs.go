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
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	judgement "github.com/eval-operator/eval-operator/internal/verdict"
)

// Runs, records and scores. On a standalone service the cluster is the run's
// record: a run is an EvaluationRun, and the records and scores written to
// it are counted in its status, never stored (a bit per record and Metric
// says which records have a score, so each is counted once).
const (
	routeRuns    = BasePath + "/projects/{projectId}/runs"
	routeRun     = BasePath + "/runs/{runId}"
	routeRecords = BasePath + "/runs/{runId}/records"
	routeScore   = BasePath + "/records/{recordId}/scores/{metricConfigId}"
)

const runKind = "EvaluationRun"

// runEndpoint is the budget's and the watches' view of the runs this server
// creates (through the runs API and the Flagger gate), which are read back.
var runEndpoint = &endpoint{kind: runKind, local: &localCreate{readable: true},
	newObject: func() evaluationv1alpha1.Object { return &evaluationv1alpha1.EvaluationRun{} }}

// maxRunRecords bounds the records of a run kept in the cluster: the
// scored-records bitmap of each Metric is at most 1,250 bytes.
const maxRunRecords = 10000

// maxSessionIDLen bounds a record's sessionId, in characters.
const maxSessionIDLen = 256

// recordRequest is the body of a record create; otelLinkId, which the SDKs
// send, is accepted and not kept; sessionId, which the Python SDK sends
// though the service's OpenAPI does not list it yet, is answered back.
type recordRequest struct {
	TestcaseID string          `json:"testcaseId,omitempty"`
	Inputs     json.RawMessage `json:"inputs"`
	Expected   json.RawMessage `json:"expected"`
	Outputs    json.RawMessage `json:"outputs"`
	OtelLinkID string          `json:"otelLinkId,omitempty"`
	SessionID  string          `json:"sessionId,omitempty"`
}

// runRefs are a run's Metrics and Testset as the cluster holds them.
type runRefs struct {
	metrics   []*evaluationv1alpha1.Metric
	testset   *evaluationv1alpha1.Testset
	testsetID *string
}

// createRun is POST /projects/{projectId}/runs: an EvaluationRun of the
// namespace's Testset and Metrics named by their ids, answered at once with
// the id this server gives it.
func (s *Server) createRun(w http.ResponseWriter, r *http.Request) apierror.Response {
	var req evalapi.RunRequest
	secret, failed := s.decodeRequest(w, r, runKind, &req)
	if failed != nil {
		return *failed
	}
	if n := len(req.MetricIDs); n == 0 || n > 50 {
		return apierror.Validation(apierror.Field{Field: "metricIds", Message: "must name 1 to 50 Metrics"}).Response()
	}
	refs, err := s.runRefs(r.Context(), secret.Namespace, req)
	if err != nil {
		return s.failure(runKind, err)
	}
	run := newRunObject(secret, r.PathValue("projectId"), req, refs)
	conn, err := s.standaloneConnection(r.Context(), run, "runs, records and scores", "EvaluationRun")
	if err != nil {
		return s.failure(runKind, err)
	}
	if conn != nil && conn.RunPassCriteria != nil {
		// The namespace's admin chose them on its standalone service.
		run.Spec.PassCriteria = *conn.RunPassCriteria.DeepCopy()
	}
	settle, err := s.quotas.Reserve(r.Context(), runKind, run, false)
	if err != nil {
		return s.failure(runKind, err)
	}
	err = s.opts.Client.Create(r.Context(), run)
	apierror.NoteWrite(r.Context(), err)
	settle(err == nil)
	if err != nil {
		return s.failure(runKind, apierror.WriteFailed(nil, err, "creating the EvaluationRun"))
	}
	s.unseen.add(r.Context(), s.opts.Cache, run)
	return apierror.Response{Status: http.StatusCreated, Body: runAnswer(run, refs.testsetID, refs.metricIDs(), expectedOf(refs.testset))}
}

// runRefs finds the Metrics and Testset req names in namespace.
func (s *Server) runRefs(ctx context.Context, namespace string, req evalapi.RunRequest) (runRefs, error) {
	var refs runRefs
	for i, id := range req.MetricIDs {
		m, err := s.findMetric(ctx, namespace, id)
		if e, ok := errors.AsType[*apierror.Error](err); ok && e.Status == http.StatusNotFound {
			return refs, apierror.Validation(apierror.Field{Field: fmt.Sprintf("metricIds[%d]", i),
				Message: "no Metric of this namespace has this id"})
		}
		if err != nil {
			return refs, err
		}
		refs.metrics = append(refs.metrics, m)
	}
	if req.TestsetID != nil {
		t, err := s.findTestset(ctx, namespace, *req.TestsetID)
		if e, ok := errors.AsType[*apierror.Error](err); ok && e.Status == http.StatusNotFound {
			return refs, apierror.Validation(apierror.Field{Field: "testsetId", Message: "no Testset of this namespace has this id"})
		}
		if err != nil {
			return refs, err
		}
		refs.testset, refs.testsetID = t, req.TestsetID
	}
	return refs, nil
}

func (f runRefs) metricIDs() []string {
	ids := make([]string, len(f.metrics))
	for i, m := range f.metrics {
		ids[i] = m.RecordedID()
	}
	return ids
}

// newRunObject is the EvaluationRun of a run request, its id assigned here.
func newRunObject(secret types.NamespacedName, project string, req evalapi.RunRequest, refs runRefs) *evaluationv1alpha1.EvaluationRun {
	id := remote.NewRunID()
	run := &evaluationv1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{
		Name: strings.ReplaceAll(id, "_", "-"), Namespace: secret.Namespace,
		Annotations: map[string]string{evaluationv1alpha1.RunIDAnnotation: id},
		Labels:      map[string]string{evaluationv1alpha1.CreatedByLabel: evaluationv1alpha1.CreatedByRESTAPI},
	}, Spec: evaluationv1alpha1.EvaluationRunSpec{
		ProjectID:       evaluationv1alpha1.ResourceID(project),
		APIKeySecretRef: &evaluationv1alpha1.SecretKeySelector{Name: secret.Name},
	}}
	for _, m := range refs.metrics {
		run.Spec.MetricRefs = append(run.Spec.MetricRefs, evaluationv1alpha1.ObjectRef{Name: m.Name})
	}
	if refs.testset != nil {
		run.Spec.TestsetRef = &evaluationv1alpha1.ObjectRef{Name: refs.testset.Name}
	}
	if v := ptr.Deref(req.SystemVersionID, ""); v != "" {
		run.Spec.SystemVersionID = v
	}
	return run
}

// standaloneOnly refuses run on a real Evaluation Service: its runs, records
// and scores go to that service.
func (s *Server) standaloneOnly(ctx context.Context, run *evaluationv1alpha1.EvaluationRun) error {
	_, err := s.standaloneConnection(ctx, run, "runs, records and scores", "EvaluationRun")
	return err
}

// standaloneConnection is obj's standalone service (nil without a
// connector), or, where its service is real, a refusal: that service keeps
// what (its runs, its Systems), which kind objects keep in the cluster.
func (s *Server) standaloneConnection(ctx context.Context, obj evaluationv1alpha1.Object, what, kind string) (*remote.Connection, error) {
	if s.opts.Connector == nil {
		return nil, nil
	}
	conn, err := s.opts.Connector.Connect(ctx, obj)
	if se, ok := errors.AsType[*remote.ServiceError](err); ok {
		return nil, apierror.New(http.StatusServiceUnavailable, apierror.CodeUpstreamError,
			"The namespace's Evaluation Service connection cannot be used: "+se.Message, nil)
	}
	if err != nil {
		return nil, err
	}
	if !conn.CarriedOutByCommit(obj) {
		return nil, apierror.Conflict("This namespace's %s are kept by its Evaluation Service (%s): send them there, "+
			"or apply %s objects", what, conn.Service, kind)
	}
	return conn, nil
}

// runAnswer is run as the API answers it, its Testset and Metrics given
// by their ids, and expected the records it expects when its status does
// not say yet.
func runAnswer(run *evaluationv1alpha1.EvaluationRun, testsetID *string, metricIDs []string, expected *int) evalapi.Run {
	st := run.Status
	res := evalapi.Run{ID: run.RecordedID(), TestsetID: testsetID, MetricIDs: metricIDs, MetricVersionIDs: []string{},
		NumRecords: int(st.Records), NumScores: int(st.Scores), Status: st.Phase, NumExpectedRecords: expected}
	if res.Status == "" {
		res.Status = evalapi.RunAwaitingExecution
	}
	if run.Spec.SystemVersionID != "" {
		res.SystemVersionID = ptr.To(run.Spec.SystemVersionID)
	}
	if st.ExpectedRecords != nil {
		res.NumExpectedRecords = ptr.To(int(*st.ExpectedRecords))
	}
	return res
}

// expectedOf is the records a run of t expects: its testcases.
func expectedOf(t *evaluationv1alpha1.Testset) *int {
	if t == nil {
		return nil
	}
	return ptr.To(int(t.Status.Testcases))
}

// getRun is GET /runs/{runId}.
func (s *Server) getRun(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(runKind, err)
	}
	run, err := s.findRun(r.Context(), secret.Namespace, r.PathValue("runId"))
	if err == nil {
		// The counts change with every record and score: read them from the
		// API server, so that a client reads its own writes.
		err = s.opts.Reader.Get(r.Context(), client.ObjectKeyFromObject(run), run)
	}
	if err != nil {
		return s.failure(runKind, err)
	}
	refs, err := s.refsOf(r.Context(), run)
	if err != nil {
		return s.failure(runKind, err)
	}
	expected := expectedOf(refs.testset)
	answer := runAnswer(run, refs.testsetID, refs.metricIDs(), expected)
	if run.Status.Verdict == "" && s.standaloneOnly(r.Context(), run) == nil {
		// The phase as of these counts, which the reconciler reports only at
		// its next look.
		metrics := make([]judgement.Metric, len(refs.metrics))
		for i, m := range refs.metrics {
			metrics[i] = remote.JudgingOf(m)
		}
		// standaloneOnly passed: the cluster keeps this run.
		kept, _ := remote.ClusterRun(run).Get(r.Context(), expected, metrics)
		answer.Status = kept.Status
	}
	return apierror.Response{Status: http.StatusOK, Body: answer}
}

// findRun is the run of namespace with id, as findMetric finds a Metric.
func (s *Server) findRun(ctx context.Context, namespace, id string) (*evaluationv1alpha1.EvaluationRun, error) {
	var run *evaluationv1alpha1.EvaluationRun
	err := s.lookUp(ctx, runKind, namespace, func() (bool, error) {
		var list evaluationv1alpha1.EvaluationRunList
		err := s.opts.Cache.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{remoteIDIndex: id})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		run = &list.Items[0]
		return true, nil
	})
	if err == nil && run == nil {
		err = apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No Run has this id", nil)
	}
	return run, err
}

// refsOf reads run's Testset and Metrics, named by object, from the cache.
func (s *Server) refsOf(ctx context.Context, run *evaluationv1alpha1.EvaluationRun) (runRefs, error) {
	var refs runRefs
	for _, ref := range run.Spec.MetricRefs {
		m := &evaluationv1alpha1.Metric{}
		if err := s.opts.Cache.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: ref.Name}, m); err != nil {
			if apierrors.IsNotFound(err) {
				return refs, apierror.Conflict("The run's Metric %s no longer exists", ref.Name)
			}
			return refs, err
		}
		refs.metrics = append(refs.metrics, m)
	}
	if ref := run.Spec.TestsetRef; ref != nil {
		t := &evaluationv1alpha1.Testset{}
		err := s.opts.Cache.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: ref.Name}, t)
		if err != nil && !apierrors.IsNotFound(err) {
			return refs, err
		}
		if err == nil {
			refs.testset, refs.testsetID = t, ptr.To(t.RecordedID())
		}
	}
	return refs, nil
}

// createRecord is POST /runs/{runId}/records: the record is counted in the
// run's status and answered with its id, "<runId>.<n>"; its data is not kept.
func (s *Server) createRecord(w http.ResponseWriter, r *http.Request) apierror.Response {
	var req recordRequest
	secret, failed := s.decodeRequest(w, r, runKind, &req)
	if failed != nil {
		return *failed
	}
	var errs []apierror.Field
	for _, f := range []struct {
		name  string
		value json.RawMessage
	}{{"inputs", req.Inputs}, {"expected", req.Expected}, {"outputs", req.Outputs}} {
		if !isJSONObject(f.value) {
			errs = append(errs, apierror.Field{Field: f.name, Message: "must be a JSON object"})
		}
	}
	if utf8.RuneCountInString(req.SessionID) > maxSessionIDLen || !evaluationv1alpha1.ValidLineText(req.SessionID) {
		errs = append(errs, apierror.Field{Field: "sessionId", Message: fmt.Sprintf(
			"must be at most %d characters; it %s", maxSessionIDLen, evaluationv1alpha1.LineTextRule)})
	}
	if len(errs) > 0 {
		return apierror.Validation(errs...).Response()
	}
	run, err := s.writableRun(r.Context(), secret.Namespace, r.PathValue("runId"))
	if err != nil {
		return s.failure(runKind, err)
	}
	var n int32
	err = s.updateRunStatus(r.Context(), run, func(run *evaluationv1alpha1.EvaluationRun) error {
		if run.Status.Records >= maxRunRecords {
			return apierror.Conflict("The run has %d records, the most a run kept in the cluster counts", maxRunRecords)
		}
		run.Status.Records++
		n = run.Status.Records
		return nil
	})
	if err != nil {
		return s.failure(runKind, err)
	}
	id := run.RecordedID()
	return apierror.Response{Status: http.StatusCreated, Body: evalapi.Record{ID: id + "." + strconv.Itoa(int(n)), RunID: id,
		TestcaseID: req.TestcaseID, Inputs: req.Inputs, Expected: req.Expected, Outputs: req.Outputs, SessionID: req.SessionID}}
}

// upsertScore is PUT /records/{recordId}/scores/{metricConfigId}: the score
// is judged against its Metric and counted in the run's status, once per
// record and Metric; a score that cannot be read (no binaryScore, intScore,
// floatScore, score or value of the Metric's type) is answered with a
// validation error and not counted, as the verdict counts it as none.
func (s *Server) upsertScore(w http.ResponseWriter, r *http.Request) apierror.Response {
	var req evalapi.ScoreRequest
	secret, failed := s.decodeRequest(w, r, runKind, &req)
	if failed != nil {
		return *failed
	}
	if !isJSONObject(req.Score) {
		return apierror.Validation(apierror.Field{Field: "score", Message: "must be a JSON object"}).Response()
	}
	recordID, metricID := r.PathValue("recordId"), r.PathValue("metricConfigId")
	runID, index, ok := parseRecordID(recordID)
	if !ok {
		return apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No Record has this id", nil).Response()
	}
	run, err := s.writableRun(r.Context(), secret.Namespace, runID)
	if err != nil {
		return s.failure(runKind, err)
	}
	if index > int(run.Status.Records) {
		// Another replica may have counted the record a moment ago, and
		// this one's watch not brought it yet: the API server decides.
		err := s.opts.Reader.Get(r.Context(), client.ObjectKeyFromObject(run), run)
		if err != nil && !apierrors.IsNotFound(err) {
			return s.failure(runKind, err)
		}
		if err != nil || index > int(run.Status.Records) {
			return apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No Record has this id", nil).Response()
		}
	}
	m, err := s.runMetric(r.Context(), run, metricID)
	if err != nil {
		return s.failure(runKind, err)
	}
	answer := evalapi.Score{RecordID: recordID, MetricConfigID: metricID, Score: req.Score,
		ValidationErrors: []evalapi.ValidationError{}}
	pass, readable := judgement.Passes(remote.JudgingOf(m), req.Score)
	if !readable {
		answer.ValidationErrors = append(answer.ValidationErrors, evalapi.ValidationError{Path: "/score",
			Message: fmt.Sprintf("no binaryScore, intScore, floatScore, score or value of the Metric's type (%s): "+
				"not counted", m.Spec.OutputType)})
		return apierror.Response{Status: http.StatusOK, Body: answer}
	}
	err = s.updateRunStatus(r.Context(), run, func(run *evaluationv1alpha1.EvaluationRun) error {
		return countScore(run, m, index, pass)
	})
	if err != nil {
		return s.failure(runKind, err)
	}
	return apierror.Response{Status: http.StatusOK, Body: answer}
}

// countScore counts a score of m for record index of run, once.
func countScore(run *evaluationv1alpha1.EvaluationRun, m *evaluationv1alpha1.Metric, index int, pass bool) error {
	id := m.RecordedID()
	i := slices.IndexFunc(run.Status.Metrics, func(r evaluationv1alpha1.MetricResult) bool { return r.ID == id })
	if i < 0 {
		run.Status.Metrics = append(run.Status.Metrics, evaluationv1alpha1.MetricResult{ID: id, Name: m.Name})
		i = len(run.Status.Metrics) - 1
	}
	res := &run.Status.Metrics[i]
	bits, err := base64.StdEncoding.DecodeString(res.ScoredRecords)
	if err != nil {
		bits = nil // not this server's: start again
	}
	byteAt, bit := (index-1)/8, byte(1)<<((index-1)%8)
	if byteAt >= len(bits) {
		bits = append(bits, make([]byte, byteAt+1-len(bits))...)
	}
	if bits[byteAt]&bit != 0 {
		return apierror.Conflict("Record %s.%d already has a score of Metric %s: a run kept in the cluster counts one score "+
			"per record and Metric, and keeps no scores to change", run.RecordedID(), index, id)
	}
	bits[byteAt] |= bit
	res.ScoredRecords = base64.StdEncoding.EncodeToString(bits)
	if pass {
		res.Passed++
	} else {
		res.Failed++
	}
	run.Status.Scores++
	return nil
}

// parseRecordID splits "<runId>.<n>".
func parseRecordID(id string) (runID string, index int, ok bool) {
	runID, n, found := strings.Cut(id, ".")
	index, err := strconv.Atoi(n)
	return runID, index, found && err == nil && index >= 1 && index <= maxRunRecords
}

// runMetric is the Metric of run whose id is id.
func (s *Server) runMetric(ctx context.Context, run *evaluationv1alpha1.EvaluationRun, id string) (
	*evaluationv1alpha1.Metric, error) {
	refs, err := s.refsOf(ctx, run)
	if err != nil {
		return nil, err
	}
	for _, m := range refs.metrics {
		if m.RecordedID() == id {
			return m, nil
		}
	}
	return nil, apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "The Run has no Metric with this id", nil)
}

// writableRun is the run of namespace with id, while it may still be
// written to: kept in the cluster, and not judged.
func (s *Server) writableRun(ctx context.Context, namespace, id string) (*evaluationv1alpha1.EvaluationRun, error) {
	run, err := s.findRun(ctx, namespace, id)
	if err != nil {
		return nil, err
	}
	if err := s.standaloneOnly(ctx, run); err != nil {
		return nil, err
	}
	if run.Status.Verdict != "" {
		return nil, apierror.Conflict("The run is judged (%s): what is written to it now would not count", run.Status.Verdict)
	}
	return run, nil
}

// runLocks serialises this replica's status writes of one run, so that
// concurrent records and scores do not conflict with each other here.
var runLocks = uidLocks{held: map[types.UID]*uidLock{}}

// uidLocks are mutexes by object uid, each kept only while someone holds or
// waits for it, so that the runs of months leave nothing behind.
type uidLocks struct {
	mu   sync.Mutex
	held map[types.UID]*uidLock
}

type uidLock struct {
	sync.Mutex
	// users hold or wait for the lock.
	users int
}

// lock locks uid's mutex and returns its unlock.
func (l *uidLocks) lock(uid types.UID) (unlock func()) {
	l.mu.Lock()
	e := l.held[uid]
	if e == nil {
		e = &uidLock{}
		l.held[uid] = e
	}
	e.users++
	l.mu.Unlock()
	e.Lock()
	return func() {
		e.Unlock()
		l.mu.Lock()
		if e.users--; e.users == 0 {
			delete(l.held, uid)
		}
		l.mu.Unlock()
	}
}

// updateRunStatus applies change to run's status and writes it, retrying a
// conflict with the API server's copy (another replica, or the reconciler).
func (s *Server) updateRunStatus(ctx context.Context, run *evaluationv1alpha1.EvaluationRun,
	change func(*evaluationv1alpha1.EvaluationRun) error) error {
	defer runLocks.lock(run.UID)()
	key := client.ObjectKeyFromObject(run)
	backoff := wait.Backoff{Steps: 20, Duration: 5 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: time.Second}
	err := retry.RetryOnConflict(backoff, func() error {
		fresh := &evaluationv1alpha1.EvaluationRun{}
		if err := s.opts.Reader.Get(ctx, key, fresh); err != nil {
			return err
		}
		if fresh.UID != run.UID {
			return apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No Run has this id", nil)
		}
		if fresh.Status.Verdict != "" {
			return apierror.Conflict("The run is judged (%s): what is written to it now would not count", fresh.Status.Verdict)
		}
		if err := change(fresh); err != nil {
			return err
		}
		err := s.opts.Client.Status().Update(ctx, fresh)
		apierror.NoteWrite(ctx, err)
		if err == nil {
			*run = *fresh
		}
		return err
	})
	if _, ok := err.(*apierror.Error); ok { //nolint:errorlint // change returns an apiError as is
		return err
	}
	if apierrors.IsNotFound(err) {
		return apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No Run has this id", nil)
	}
	if err != nil {
		return apierror.WriteFailed(nil, err, "counting in the run's status")
	}
	return nil
}

// isJSONObject reports whether raw is a JSON object.
func isJSONObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
