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

package evalapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var _ = Describe("Runs, records and scores against the fake service", func() {
	const k = evalapi.APIKey(evalapitest.DefaultKey)
	ctx := context.Background()
	var (
		fake               *evalapitest.Server
		c                  *evalapi.Client
		testsetID, ai, hmn string
		record             func(runID string, i int) evalapi.Record
		runWith            func(metricIDs ...string) evalapi.Run
		status             func(runID string) string
	)
	BeforeEach(func() {
		fake = evalapitest.New()
		DeferCleanup(fake.Close)
		c = newClient(fake.URL())
		ts, err := c.CreateTestset(ctx, k, "p1", evalapi.TestsetRequest{Name: "qa", JSONSchema: json.RawMessage(`{}`),
			FieldMapping: evalapi.FieldMapping{Inputs: []string{"q"}, Expected: []string{}, Metadata: []string{}}})
		Expect(err).NotTo(HaveOccurred())
		testsetID = ts.ID
		_, err = c.CreateTestcases(ctx, k, ts.ID, []json.RawMessage{json.RawMessage(`{"q":"a"}`), json.RawMessage(`{"q":"b"}`)})
		Expect(err).NotTo(HaveOccurred())
		m, err := c.CreateMetric(ctx, k, "p1", evalapi.MetricRequest{Name: "exact", EvalType: "heuristic", OutputType: "boolean"})
		Expect(err).NotTo(HaveOccurred())
		ai = m.ID
		m, err = c.CreateMetric(ctx, k, "p1", evalapi.MetricRequest{Name: "tone", EvalType: "human", OutputType: "int"})
		Expect(err).NotTo(HaveOccurred())
		hmn = m.ID
		record = func(runID string, i int) evalapi.Record {
			GinkgoHelper()
			r, err := c.CreateRecord(ctx, k, runID, evalapi.RecordRequest{Inputs: json.RawMessage(fmt.Sprintf(`{"q":"%d"}`, i)),
				Expected: json.RawMessage(`{}`), Outputs: json.RawMessage(`{"a":"x"}`)})
			Expect(err).NotTo(HaveOccurred())
			return r
		}
		runWith = func(metricIDs ...string) evalapi.Run {
			GinkgoHelper()
			run, err := c.CreateRun(ctx, k, "p1", evalapi.RunRequest{TestsetID: &testsetID, MetricIDs: metricIDs})
			Expect(err).NotTo(HaveOccurred())
			return run
		}
		status = func(runID string) string {
			GinkgoHelper()
			run, err := c.GetRun(ctx, k, runID)
			Expect(err).NotTo(HaveOccurred())
			return run.Status
		}
	})

	It("moves a run through the service's states as records and scores arrive", func() {
		run := runWith(ai, hmn)
		Expect(run.Status).To(Equal(evalapi.RunAwaitingExecution))
		Expect(run.NumExpectedRecords).To(HaveValue(Equal(2)))
		Expect(run.MetricVersionIDs).To(HaveLen(2))

		fake.SetScoringDelay(time.Hour)
		first := record(run.ID, 1)
		Expect(status(run.ID)).To(Equal(evalapi.RunRunningExecution))
		record(run.ID, 2)
		Expect(status(run.ID)).To(Equal(evalapi.RunRunningScoring), "the automatic scores are late")
		fake.SetScoringDelay(0)
		Expect(status(run.ID)).To(Equal(evalapi.RunAwaitingHumanScoring), "the human scores never come by themselves")

		page, err := c.ListRecords(ctx, k, run.ID, evalapi.ListOptions{Limit: 1})
		Expect(err).NotTo(HaveOccurred())
		Expect(page.Data).To(HaveLen(1))
		Expect(page.HasMore).To(BeTrue())
		Expect(page.Data[0].ID).To(Equal(first.ID))
		Expect(page.Data[0].Scores).To(ConsistOf(HaveField("MetricConfigID", run.MetricVersionIDs[0])))
		Expect(page.Data[0].Scores[0].Score).To(MatchJSON(`{"binaryScore":true,"reasoning":"passes"}`))

		_, err = c.UpsertScore(ctx, k, first.ID, hmn, json.RawMessage(`{"value":4}`))
		Expect(err).NotTo(HaveOccurred())
		next, err := c.ListRecords(ctx, k, run.ID, evalapi.ListOptions{Limit: 1, Cursor: *page.NextCursor})
		Expect(err).NotTo(HaveOccurred())
		Expect(next.HasMore).To(BeFalse())
		_, err = c.UpsertScore(ctx, k, next.Data[0].ID, run.MetricVersionIDs[1], json.RawMessage(`{"value":5}`))
		Expect(err).NotTo(HaveOccurred(), "a score may name the Metric's version id")
		got, err := c.GetRun(ctx, k, run.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Status).To(Equal(evalapi.RunCompleted))
		Expect(got.NumRecords).To(Equal(2))
		Expect(got.NumScores).To(Equal(4))
	})

	It("scores with the scorer it is given, and never with none", func() {
		fake.SetScorer(func(_ evalapi.Metric, r evalapi.Record) json.RawMessage {
			return json.RawMessage(fmt.Sprintf(`{"score":%t}`, string(r.Inputs) == `{"q":"1"}`))
		})
		run := runWith(ai)
		record(run.ID, 1)
		record(run.ID, 2)
		Expect(status(run.ID)).To(Equal(evalapi.RunCompleted))
		page, err := c.ListRecords(ctx, k, run.ID, evalapi.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(page.Data[0].Scores[0].Score).To(MatchJSON(`{"score":true}`))
		Expect(page.Data[1].Scores[0].Score).To(MatchJSON(`{"score":false}`))

		fake.SetScorer(nil)
		stuck := runWith(ai)
		record(stuck.ID, 1)
		record(stuck.ID, 2)
		Expect(status(stuck.ID)).To(Equal(evalapi.RunRunningScoring))
	})

	It("refuses a run of unknown Metrics or Testset, and keeps tenants apart", func() {
		_, err := c.CreateRun(ctx, k, "p1", evalapi.RunRequest{MetricIDs: []string{"met_nope"}})
		Expect(asError(err).StatusCode).To(Equal(http.StatusNotFound))
		_, err = c.CreateRun(ctx, k, "p1", evalapi.RunRequest{MetricIDs: nil})
		Expect(asError(err).Kind).To(Equal(evalapi.KindRejected))
		run := runWith(ai)
		fake.AddTenant("ak_other_0123456789abcdef")
		_, err = c.GetRun(ctx, "ak_other_0123456789abcdef", run.ID)
		Expect(asError(err).StatusCode).To(Equal(http.StatusNotFound))
		_, err = c.ListRecords(ctx, "ak_other_0123456789abcdef", run.ID, evalapi.ListOptions{})
		Expect(asError(err).StatusCode).To(Equal(http.StatusNotFound))
	})

	It("plays faults on the run operations", func() {
		run := runWith(ai)
		fake.InjectFaults(evalapitest.OpGetRun, evalapitest.Status500)
		fake.InjectFaults(evalapitest.OpListRecords, evalapitest.Status429("1"))
		_, err := c.GetRun(ctx, k, run.ID)
		Expect(asError(err).StatusCode).To(Equal(http.StatusInternalServerError))
		_, err = c.ListRecords(ctx, k, run.ID, evalapi.ListOptions{})
		Expect(asError(err).StatusCode).To(Equal(http.StatusTooManyRequests))
		Expect(fake.Calls(evalapitest.OpGetRun)).To(Equal(1))
	})
})
