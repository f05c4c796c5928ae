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

package evalapitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Runs, Records and Scores as the API description and the service's
// documentation have them: a run expects one record per testcase of its
// Testset; the caller creates the records; AI and heuristic Metrics are then
// scored by the service (here by the Server's scorer, ScoringDelay after the
// record arrived), human Metrics only by a client's upsert. A run's status
// follows: awaiting_execution, running_execution while records are missing,
// running_scoring while automatic scores are, awaiting_human_scoring while
// only human ones are, then completed. A score names its Metric by the
// run's metricIds or metricVersionIds.

// Scorer is how the Server scores a record for an AI or heuristic Metric:
// the score object, in any of the service's forms.
type Scorer func(m evalapi.Metric, r evalapi.Record) json.RawMessage

// PassingScorer scores every record as passing: true, 5 or 1.0.
func PassingScorer(m evalapi.Metric, _ evalapi.Record) json.RawMessage {
	switch m.OutputType {
	case evalapi.OutputTypeBoolean:
		return json.RawMessage(`{"binaryScore":true,"reasoning":"passes"}`)
	case evalapi.OutputTypeInt:
		return json.RawMessage(`{"intScore":5,"reasoning":"passes"}`)
	default:
		return json.RawMessage(`{"floatScore":1,"reasoning":"passes"}`)
	}
}

// storedRun is a Run the Server holds.
type storedRun struct {
	projectID string
	seq       int
	run       evalapi.Run
	// kinds are the evalType of each of run.MetricIDs.
	kinds   []string
	records []*storedRecord
}

// storedRecord is a Record and its scores, by Metric id.
type storedRecord struct {
	seq     int
	record  evalapi.Record
	created time.Time
	scores  map[string]evalapi.Score
}

// runStore holds the Runs. Callers hold the Server's lock.
type runStore struct {
	seq     int
	runs    map[string]*storedRun
	records map[string]*storedRun // by record id
	scorer  Scorer
	delay   time.Duration
}

func (st *runStore) next() int {
	if st.runs == nil {
		st.runs, st.records = map[string]*storedRun{}, map[string]*storedRun{}
	}
	st.seq++
	return st.seq
}

// SetScorer sets how AI and heuristic Metrics are scored (PassingScorer
// unless set); nil scores nothing, as a service whose scoring never ends.
func (s *Server) SetScorer(f Scorer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs.scorer = f
}

// SetScoringDelay makes automatic scores appear d after their record.
func (s *Server) SetScoringDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs.delay = d
}

// Run returns the Run the Server holds under id, as GET would.
func (s *Server) Run(id string) (evalapi.Run, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs.runs[id]
	if !ok {
		return evalapi.Run{}, false
	}
	s.score(r)
	return r.run, true
}

// Runs returns every Run the Server holds, oldest first.
func (s *Server) Runs() []evalapi.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]*storedRun, 0, len(s.runs.runs))
	for _, r := range s.runs.runs {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b *storedRun) int { return a.seq - b.seq })
	out := make([]evalapi.Run, len(all))
	for i, r := range all {
		s.score(r)
		out[i] = r.run
	}
	return out
}

// metricVersionID is the version id the Server gives Metric i of run seq.
func metricVersionID(seq, i int) string {
	return fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", seq, i)
}

// score adds the automatic scores that are due, and sets the run's counts
// and status. Callers hold the lock.
func (s *Server) score(r *storedRun) {
	now := time.Now()
	missingAuto, missingHuman, scores := false, false, 0
	for _, rec := range r.records {
		for i, id := range r.run.MetricIDs {
			if _, done := rec.scores[id]; done {
				scores++
				continue
			}
			if r.kinds[i] == evalapi.EvalTypeHuman {
				missingHuman = true
				continue
			}
			m, ok := s.stored[id]
			if s.runs.scorer == nil || !ok || now.Sub(rec.created) < s.runs.delay {
				missingAuto = true
				continue
			}
			rec.scores[id] = evalapi.Score{RecordID: rec.record.ID, MetricConfigID: r.run.MetricVersionIDs[i],
				Score: s.runs.scorer(m.Metric, rec.record)}
			scores++
		}
	}
	r.run.NumRecords, r.run.NumScores = len(r.records), scores
	expected := r.run.NumExpectedRecords
	switch {
	case len(r.records) == 0:
		r.run.Status = evalapi.RunAwaitingExecution
	case expected != nil && len(r.records) < *expected:
		r.run.Status = evalapi.RunRunningExecution
	case missingAuto:
		r.run.Status = evalapi.RunRunningScoring
	case missingHuman:
		r.run.Status = evalapi.RunAwaitingHumanScoring
	default:
		r.run.Status = evalapi.RunCompleted
	}
}

func (s *Server) createRun(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	var req evalapi.RunRequest
	if rejection, ok := decodeJSON(r, body, &req); !ok {
		return nil, rejection
	}
	if len(req.MetricIDs) == 0 {
		return nil, invalid(fieldError{Field: "metricIds", Message: "metricIds must name at least one Metric"})
	}
	if req.SystemVersionID != nil && !uuidPattern.MatchString(*req.SystemVersionID) {
		return nil, invalid(fieldError{Field: "systemVersionId", Message: "systemVersionId must be a UUID"})
	}
	projectID := r.PathValue("projectId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.reaches(tenant, projectID) {
			return projectNotFound(projectID)
		}
		seq := s.runs.next()
		run := &storedRun{projectID: projectID, seq: seq, run: evalapi.Run{ID: fmt.Sprintf("run_%08d", seq),
			TestsetID: req.TestsetID, SystemVersionID: req.SystemVersionID, MetricIDs: slices.Clone(req.MetricIDs)}}
		for i, id := range req.MetricIDs {
			m, ok := s.metricOf(tenant, id)
			if !ok {
				return metricNotFound(id)
			}
			run.kinds = append(run.kinds, m.Metric.EvalType)
			run.run.MetricVersionIDs = append(run.run.MetricVersionIDs, metricVersionID(seq, i))
		}
		systemID, refusal := s.runVersion(tenant, projectID, req.SystemVersionID)
		if refusal != nil {
			return *refusal
		}
		run.run.SystemID = systemID
		if req.TestsetID != nil {
			t, ok := s.testsetOf(tenant, *req.TestsetID)
			if !ok {
				return testsetNotFound(*req.TestsetID)
			}
			n := len(s.testcasesOf(t.testset.ID))
			run.run.NumExpectedRecords = &n
		}
		s.runs.runs[run.run.ID] = run
		s.score(run)
		return reply{http.StatusCreated, run.run}
	}, reply{}
}

// runOf is the Run under id if tenant reaches it. Callers hold the lock.
func (s *Server) runOf(tenant int, id string) (*storedRun, bool) {
	r, ok := s.runs.runs[id]
	if !ok || s.projects[r.projectID] != tenant {
		return nil, false
	}
	return r, true
}

func (s *Server) getRun(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	id := r.PathValue("runId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		run, ok := s.runOf(tenant, id)
		if !ok {
			return runNotFound(id)
		}
		s.score(run)
		return reply{http.StatusOK, run.run}
	}, reply{}
}

func (s *Server) createRecord(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	var req evalapi.RecordRequest
	if rejection, ok := decodeJSON(r, body, &req); !ok {
		return nil, rejection
	}
	var errs []fieldError
	for _, f := range []struct {
		name  string
		value json.RawMessage
	}{{"inputs", req.Inputs}, {"expected", req.Expected}, {"outputs", req.Outputs}} {
		if !isObject(f.value) {
			errs = append(errs, fieldError{Field: f.name, Message: f.name + " must be an object"})
		}
	}
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	id := r.PathValue("runId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		run, ok := s.runOf(tenant, id)
		if !ok {
			return runNotFound(id)
		}
		seq := s.runs.next()
		rec := &storedRecord{seq: seq, created: time.Now(), scores: map[string]evalapi.Score{}, record: evalapi.Record{
			ID: fmt.Sprintf("rec_%08d", seq), RunID: id, TestcaseID: req.TestcaseID,
			Inputs: compact(req.Inputs), Expected: compact(req.Expected), Outputs: compact(req.Outputs)}}
		run.records = append(run.records, rec)
		s.runs.records[rec.record.ID] = run
		s.score(run)
		return reply{http.StatusCreated, rec.record}
	}, reply{}
}

// listRecords answers a page of a run's records with their scores, oldest
// first.
func (s *Server) listRecords(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	limit, last, errs := listQuery(r.URL.Query())
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	id := r.PathValue("runId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		run, ok := s.runOf(tenant, id)
		if !ok {
			return runNotFound(id)
		}
		s.score(run)
		return reply{http.StatusOK, pageOf(run.records, func(rec *storedRecord) int { return rec.seq },
			func(rec *storedRecord) evalapi.RecordWithScores { return run.withScores(rec) }, last, limit, false)}
	}, reply{}
}

// withScores is rec with its scores, in the run's Metric order.
func (r *storedRun) withScores(rec *storedRecord) evalapi.RecordWithScores {
	out := evalapi.RecordWithScores{Record: rec.record, Scores: []evalapi.Score{}}
	for _, id := range r.run.MetricIDs {
		if sc, ok := rec.scores[id]; ok {
			out.Scores = append(out.Scores, sc)
		}
	}
	return out
}

// upsertScore stores a client's score of a record for one of its run's
// Metrics, named by its id or version id.
func (s *Server) upsertScore(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	var req evalapi.ScoreRequest
	if rejection, ok := decodeJSON(r, body, &req); !ok {
		return nil, rejection
	}
	if !isObject(req.Score) {
		return nil, invalid(fieldError{Field: "score", Message: "score must be an object"})
	}
	recordID, configID := r.PathValue("recordId"), r.PathValue("metricConfigId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		run, ok := s.runs.records[recordID]
		if !ok || s.projects[run.projectID] != tenant {
			return errorReply(http.StatusNotFound, codeNotFound, "Record not found", map[string]any{"recordId": recordID})
		}
		i := slices.Index(run.run.MetricIDs, configID)
		if i < 0 {
			i = slices.Index(run.run.MetricVersionIDs, configID)
		}
		if i < 0 {
			return errorReply(http.StatusNotFound, codeNotFound, "MetricConfig not found in the run",
				map[string]any{"metricConfigId": configID})
		}
		rec := run.records[slices.IndexFunc(run.records, func(x *storedRecord) bool { return x.record.ID == recordID })]
		sc := evalapi.Score{RecordID: recordID, MetricConfigID: configID, Score: compact(req.Score)}
		rec.scores[run.run.MetricIDs[i]] = sc
		return reply{http.StatusOK, sc}
	}, reply{}
}

func runNotFound(id string) reply {
	return errorReply(http.StatusNotFound, codeNotFound, "Run not found", map[string]any{"runId": id})
}
