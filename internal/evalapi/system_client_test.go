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
	"errors"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var uuid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// kindOf is the Kind of err, an *evalapi.Error.
func kindOf(err error) evalapi.ErrorKind {
	var e *evalapi.Error
	ExpectWithOffset(1, errors.As(err, &e)).To(BeTrue(), "%v", err)
	return e.Kind
}

var _ = Describe("Systems and their versions, against the fake service", func() {
	var (
		fake *evalapitest.Server
		c    *evalapi.Client
		ctx  = context.Background()
		key  = evalapi.APIKey(evalapitest.DefaultKey)
	)

	BeforeEach(func() {
		fake = evalapitest.New()
		DeferCleanup(fake.Close)
		var err error
		c, err = evalapi.NewClient(evalapi.Options{BaseURL: fake.URL()})
		Expect(err).NotTo(HaveOccurred())
	})

	upsert := func(name, config string) evalapi.System {
		s, err := c.UpsertSystem(ctx, key, "p1", evalapi.SystemRequest{Name: name, Config: json.RawMessage(config)})
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		return s
	}

	It("upserts a System by name: the same name is the same System, its first config its production version", func() {
		s := upsert("Support bot", `{"model":"gpt-4o"}`)
		Expect(s.ID).To(MatchRegexp(uuid.String()))
		Expect(s.Versions).To(HaveLen(1))
		Expect(s.ProductionVersion).NotTo(BeNil())
		Expect(s.ProductionVersion.Config).To(MatchJSON(`{"model":"gpt-4o"}`))

		again, err := c.UpsertSystem(ctx, key, "p1", evalapi.SystemRequest{Name: "Support bot", Description: "the bot",
			Config: json.RawMessage(`{"model": "gpt-4o"}`)})
		Expect(err).NotTo(HaveOccurred())
		Expect(again.ID).To(Equal(s.ID))
		Expect(again.Description).To(Equal("the bot"))
		Expect(again.Versions).To(HaveLen(1), "the same config is the same version")

		other := upsert("Other bot", `{"model":"gpt-4o"}`)
		Expect(other.ID).NotTo(Equal(s.ID))
		page, err := c.ListSystems(ctx, key, "p1", evalapi.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(page.Data).To(HaveLen(2))
		Expect(page.Data[0].ID).To(Equal(s.ID), "oldest first")
	})

	It("upserts a version by its config, whatever the key order, renaming it when a name is sent", func() {
		s := upsert("Support bot", `{"model":"gpt-4o"}`)
		v1, err := c.UpsertSystemVersion(ctx, key, s.ID, evalapi.SystemVersionRequest{Name: "canary",
			Config: json.RawMessage(`{"image":"sha256:ab","model":"gpt-4o"}`)})
		Expect(err).NotTo(HaveOccurred())
		Expect(v1.ID).To(MatchRegexp(uuid.String()))
		Expect(v1.SystemID).To(Equal(s.ID))

		same, err := c.UpsertSystemVersion(ctx, key, s.ID, evalapi.SystemVersionRequest{
			Config: json.RawMessage(`{ "model": "gpt-4o", "image": "sha256:ab" }`)})
		Expect(err).NotTo(HaveOccurred())
		Expect(same.ID).To(Equal(v1.ID))
		Expect(same.Name).To(Equal("canary"), "no name keeps the name")

		renamed, err := c.UpsertSystemVersion(ctx, key, s.ID, evalapi.SystemVersionRequest{Name: "stable",
			Config: json.RawMessage(`{"model":"gpt-4o","image":"sha256:ab"}`)})
		Expect(err).NotTo(HaveOccurred())
		Expect(renamed.ID).To(Equal(v1.ID))
		Expect(renamed.Name).To(Equal("stable"))

		v2, err := c.UpsertSystemVersion(ctx, key, s.ID, evalapi.SystemVersionRequest{
			Config: json.RawMessage(`{"model":"gpt-4o","image":"sha256:cd"}`)})
		Expect(err).NotTo(HaveOccurred())
		Expect(v2.ID).NotTo(Equal(v1.ID))

		got, err := c.GetSystemVersion(ctx, key, v1.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Name).To(Equal("stable"))
		sys, err := c.GetSystem(ctx, key, s.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(sys.Versions).To(HaveLen(3))
		Expect(sys.ProductionVersion.ID).NotTo(Equal(v2.ID), "an upsert never makes a version the production one")
	})

	It("sets the production version by PATCH, only to a version of the System", func() {
		s := upsert("Support bot", `{"model":"gpt-4o"}`)
		v, err := c.UpsertSystemVersion(ctx, key, s.ID, evalapi.SystemVersionRequest{Config: json.RawMessage(`{"model":"gpt-5"}`)})
		Expect(err).NotTo(HaveOccurred())
		got, err := c.UpdateSystem(ctx, key, s.ID, evalapi.SystemUpdate{ProductionVersionID: ptr(v.ID)})
		Expect(err).NotTo(HaveOccurred())
		Expect(got.ProductionVersion.ID).To(Equal(v.ID))

		other := upsert("Other bot", `{"model":"gpt-4o"}`)
		_, err = c.UpdateSystem(ctx, key, other.ID, evalapi.SystemUpdate{ProductionVersionID: ptr(v.ID)})
		Expect(kindOf(err)).To(Equal(evalapi.KindRejected))
	})

	It("refuses ids that are not UUIDs, and answers 404 for unknown ones", func() {
		_, err := c.GetSystemVersion(ctx, key, "rev-abc123")
		Expect(kindOf(err)).To(Equal(evalapi.KindRejected))
		_, err = c.GetSystemVersion(ctx, key, "87654321-4d3b-4ae4-8c7a-4b6e2a19ccf0")
		Expect(kindOf(err)).To(Equal(evalapi.KindNotFound))
		_, err = c.GetSystem(ctx, key, "sys_1")
		Expect(kindOf(err)).To(Equal(evalapi.KindRejected))
	})

	It("deletes a System but keeps its versions", func() {
		s := upsert("Support bot", `{"model":"gpt-4o"}`)
		ok, err := c.DeleteSystem(ctx, key, s.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok.Success).To(BeTrue())
		_, err = c.GetSystem(ctx, key, s.ID)
		Expect(kindOf(err)).To(Equal(evalapi.KindNotFound))
		_, err = c.GetSystemVersion(ctx, key, s.ProductionVersion.ID)
		Expect(err).NotTo(HaveOccurred())
	})

	It("creates a run only for a version of the run's project, and links the run to its System", func() {
		m, err := c.CreateMetric(ctx, key, "p1", evalapitest.MinimalRequest("heuristic", "boolean"))
		Expect(err).NotTo(HaveOccurred())
		s := upsert("Support bot", `{"model":"gpt-4o"}`)
		v := s.ProductionVersion.ID

		run, err := c.CreateRun(ctx, key, "p1", evalapi.RunRequest{SystemVersionID: ptr(v), MetricIDs: []string{m.ID}})
		Expect(err).NotTo(HaveOccurred())
		Expect(run.SystemVersionID).To(HaveValue(Equal(v)))
		Expect(run.SystemID).To(HaveValue(Equal(s.ID)))

		_, err = c.CreateRun(ctx, key, "p1", evalapi.RunRequest{SystemVersionID: ptr("rev-abc123"), MetricIDs: []string{m.ID}})
		Expect(kindOf(err)).To(Equal(evalapi.KindRejected), "not a UUID")
		_, err = c.CreateRun(ctx, key, "p1", evalapi.RunRequest{SystemVersionID: ptr("87654321-4d3b-4ae4-8c7a-4b6e2a19ccf0"),
			MetricIDs: []string{m.ID}})
		Expect(kindOf(err)).To(Equal(evalapi.KindNotFound), "no such version")

		otherProject, err := c.UpsertSystem(ctx, key, "p2", evalapi.SystemRequest{Name: "Support bot", Config: json.RawMessage(`{}`)})
		Expect(err).NotTo(HaveOccurred())
		_, err = c.CreateRun(ctx, key, "p1", evalapi.RunRequest{SystemVersionID: ptr(otherProject.ProductionVersion.ID),
			MetricIDs: []string{m.ID}})
		Expect(kindOf(err)).To(Equal(evalapi.KindNotFound), "a version of another project")
		Expect(fake.Runs()).To(HaveLen(1))
	})

	It("keeps a tenant to its own Systems and versions", func() {
		s := upsert("Support bot", `{"model":"gpt-4o"}`)
		fake.AddTenant("ak_evalapitest_other_tenant")
		other := evalapi.APIKey("ak_evalapitest_other_tenant")
		_, err := c.GetSystem(ctx, other, s.ID)
		Expect(kindOf(err)).To(Equal(evalapi.KindNotFound))
		_, err = c.GetSystemVersion(ctx, other, s.ProductionVersion.ID)
		Expect(kindOf(err)).To(Equal(evalapi.KindNotFound))
		_, err = c.UpsertSystemVersion(ctx, other, s.ID, evalapi.SystemVersionRequest{Config: json.RawMessage(`{}`)})
		Expect(kindOf(err)).To(Equal(evalapi.KindNotFound))
	})

	It("refuses a config that is not an object", func() {
		_, err := c.UpsertSystem(ctx, key, "p1", evalapi.SystemRequest{Name: "x", Config: json.RawMessage(`[1]`)})
		Expect(kindOf(err)).To(Equal(evalapi.KindRejected))
	})
})
