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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var _ = Describe("Testsets and testcases against the fake service", func() {
	const k = evalapi.APIKey(evalapitest.DefaultKey)
	ctx := context.Background()
	var (
		fake *evalapitest.Server
		c    *evalapi.Client
	)
	BeforeEach(func() {
		fake = evalapitest.New()
		DeferCleanup(fake.Close)
		c = newClient(fake.URL())
	})

	qa := evalapi.TestsetRequest{
		Name: "Long Context Q&A", Description: "Q&A",
		JSONSchema: json.RawMessage(`{"type":"object","required":["question","idealAnswer"],` +
			`"properties":{"question":{"type":"string"},"idealAnswer":{"type":"string"},"geo":{"enum":["eu","us"]}}}`),
		FieldMapping: evalapi.FieldMapping{Inputs: []string{"question"}, Expected: []string{"idealAnswer"}, Metadata: []string{"geo"}},
	}
	cases := func(n, from int) []json.RawMessage {
		out := make([]json.RawMessage, n)
		for i := range out {
			out[i] = json.RawMessage(fmt.Sprintf(`{"key":"q%04d","question":"Q%d?","idealAnswer":"A%d"}`, from+i, from+i, from+i))
		}
		return out
	}

	It("creates a testset, its testcases 100 a call, lists them oldest first by cursor, updates and deletes them", func() {
		ts, err := c.CreateTestset(ctx, k, "p1", qa)
		Expect(err).NotTo(HaveOccurred())
		Expect(ts.ID).NotTo(BeEmpty())
		Expect(ts.FieldMapping).To(Equal(qa.FieldMapping))

		for from := 0; from < 250; from += 100 {
			created, err := c.CreateTestcases(ctx, k, ts.ID, cases(min(100, 250-from), from))
			Expect(err).NotTo(HaveOccurred())
			Expect(created[0].TestsetID).To(Equal(ts.ID))
			Expect(created[0].Inputs).To(MatchJSON(fmt.Sprintf(`{"question":"Q%d?"}`, from)))
			Expect(created[0].Expected).To(MatchJSON(fmt.Sprintf(`{"idealAnswer":"A%d"}`, from)))
		}
		_, err = c.CreateTestcases(ctx, k, ts.ID, cases(101, 0))
		Expect(asError(err).Kind).To(Equal(evalapi.KindRejected), "more than 100 are refused before a request")
		Expect(fake.Calls(evalapitest.OpCreateTestcases)).To(Equal(3))

		var all []evalapi.Testcase
		opts := evalapi.ListOptions{Limit: 100}
		for {
			page, err := c.ListTestcases(ctx, k, ts.ID, opts)
			Expect(err).NotTo(HaveOccurred())
			Expect(*page.Total).To(Equal(250))
			all = append(all, page.Data...)
			if page.NextCursor == nil {
				Expect(page.HasMore).To(BeFalse())
				break
			}
			opts.Cursor = *page.NextCursor
		}
		Expect(all).To(HaveLen(250))
		Expect(all[0].JSONData).To(MatchJSON(cases(1, 0)[0]))
		Expect(all[249].JSONData).To(MatchJSON(cases(1, 249)[0]))

		updated, err := c.UpdateTestcase(ctx, k, all[1].ID, json.RawMessage(`{"key":"q0001","question":"new?","idealAnswer":"A1"}`))
		Expect(err).NotTo(HaveOccurred())
		Expect(updated.Inputs).To(MatchJSON(`{"question":"new?"}`))
		got, err := c.GetTestcase(ctx, k, all[1].ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(updated))

		ok, err := c.BulkDeleteTestcases(ctx, k, []string{all[0].ID, all[2].ID})
		Expect(err).NotTo(HaveOccurred())
		Expect(ok.Success).To(BeTrue())
		Expect(fake.Testcases(ts.ID)).To(HaveLen(248))

		name := "renamed"
		patched, err := c.UpdateTestset(ctx, k, ts.ID, evalapi.TestsetUpdate{Name: &name})
		Expect(err).NotTo(HaveOccurred())
		Expect(patched.Name).To(Equal("renamed"))
		Expect(patched.Description).To(Equal("Q&A"), "a field left out is kept")

		_, err = c.DeleteTestset(ctx, k, ts.ID)
		Expect(err).NotTo(HaveOccurred())
		_, err = c.GetTestset(ctx, k, ts.ID)
		Expect(asError(err).Kind).To(Equal(evalapi.KindNotFound))
		Expect(fake.Testcases(ts.ID)).To(BeEmpty(), "a deleted testset takes its testcases")
	})

	It("stores a testcase that breaks the schema, with the ways it does", func() {
		ts, err := c.CreateTestset(ctx, k, "p1", qa)
		Expect(err).NotTo(HaveOccurred())
		created, err := c.CreateTestcases(ctx, k, ts.ID, []json.RawMessage{
			json.RawMessage(`{"question":7,"geo":"mars","extra":true}`)})
		Expect(err).NotTo(HaveOccurred())
		Expect(created[0].ValidationErrors).To(ConsistOf(
			evalapi.ValidationError{Path: "/data/idealAnswer", Message: "Required field missing"},
			HaveField("Path", "/data/question"),
			HaveField("Path", "/data/geo")))
	})

	It("lists a project's testsets newest first and keeps tenants apart", func() {
		for i := range 3 {
			req := qa
			req.Name = fmt.Sprintf("set-%d", i)
			_, err := c.CreateTestset(ctx, k, "p1", req)
			Expect(err).NotTo(HaveOccurred())
		}
		page, err := c.ListTestsets(ctx, k, "p1", evalapi.ListOptions{Limit: 2})
		Expect(err).NotTo(HaveOccurred())
		Expect(page.Data).To(HaveLen(2))
		Expect(page.Data[0].Name).To(Equal("set-2"))
		page, err = c.ListTestsets(ctx, k, "p1", evalapi.ListOptions{Limit: 2, Cursor: *page.NextCursor})
		Expect(err).NotTo(HaveOccurred())
		Expect(page.Data).To(HaveLen(1))
		Expect(page.Data[0].Name).To(Equal("set-0"))
		Expect(page.NextCursor).To(BeNil())

		const other = evalapi.APIKey("ak_other_tenant_0123456789")
		fake.AddTenant(string(other))
		_, err = c.GetTestset(ctx, other, page.Data[0].ID)
		Expect(asError(err).Kind).To(Equal(evalapi.KindNotFound), "another tenant's testset does not exist for it")
		_, err = c.DeleteTestset(ctx, other, page.Data[0].ID)
		Expect(asError(err).Kind).To(Equal(evalapi.KindNotFound))
		_, ok := fake.Testset(page.Data[0].ID)
		Expect(ok).To(BeTrue())
	})

	It("refuses a testset without its required fields, naming them", func() {
		_, err := c.CreateTestset(ctx, k, "p1", evalapi.TestsetRequest{Name: "n"})
		e := asError(err)
		Expect(e.Kind).To(Equal(evalapi.KindRejected))
		Expect(e.StatusCode).To(Equal(http.StatusBadRequest))
		Expect(e.API.Details["errors"]).To(ContainElements(
			HaveKeyWithValue("field", "jsonSchema"), HaveKeyWithValue("field", "fieldMapping")))
	})

	It("plays faults on the testset operations", func() {
		ts, err := c.CreateTestset(ctx, k, "p1", qa)
		Expect(err).NotTo(HaveOccurred())
		fake.InjectFaults(evalapitest.OpCreateTestcases, evalapitest.Status(http.StatusServiceUnavailable))
		_, err = c.CreateTestcases(ctx, k, ts.ID, cases(2, 0))
		Expect(asError(err).Kind).To(Equal(evalapi.KindUnavailable))
		Expect(fake.Testcases(ts.ID)).To(BeEmpty(), "a 503 commits nothing")
		fake.InjectFaults(evalapitest.OpListTestcases, evalapitest.Status429("3"))
		_, err = c.ListTestcases(ctx, k, ts.ID, evalapi.ListOptions{})
		Expect(asError(err).Kind).To(Equal(evalapi.KindRateLimited))
	})
})
