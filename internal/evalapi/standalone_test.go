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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

var _ = Describe("Standalone", func() {
	var svc evalapi.Standalone
	ctx := context.Background()

	It("answers a create in response form under a new unique id", func() {
		seen := map[string]bool{}
		for range 2000 {
			req := minimal("ai", "int")
			m, err := svc.CreateMetric(ctx, "", "p", req)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.ID).To(MatchRegexp(`^met_[0-9a-f]{20}$`))
			Expect(seen).NotTo(HaveKey(m.ID))
			seen[m.ID] = true
			Expect(m).To(Equal(evalapi.ResponseFor(m.ID, req)))
		}
	})

	It("completes deletions at once", func() {
		s, err := svc.BulkDeleteTestcases(ctx, "ak_x0123456789abcdef", []string{"tc1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Success).To(BeTrue())
		s, err = svc.DeleteTestset(ctx, "ak_x0123456789abcdef", "ts1")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Success).To(BeTrue())
	})

	It("accepts no key, but refuses a key that is not an ak_ key", func() {
		const bad = evalapi.APIKey("sk_secret-value")
		_, err := svc.CreateMetric(ctx, bad, "p", minimal("human", "int"))
		Expect(err).To(MatchError(evalapi.ErrInvalidKey))
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
		Expect(err.Error()).NotTo(ContainSubstring(string(bad)))
		_, err = svc.BulkDeleteTestcases(ctx, bad, []string{"tc1"})
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
		_, err = svc.DeleteTestset(ctx, bad, "ts1")
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
		_, err = svc.GetMetric(ctx, bad, "met_1")
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
		_, err = svc.UpdateMetric(ctx, bad, "met_1", evalapi.MetricUpdate{EvalType: "human", OutputType: "int"})
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
		_, err = svc.DeleteMetric(ctx, bad, "met_1")
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
		_, err = svc.ListMetrics(ctx, bad, "p", evalapi.ListOptions{})
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
	})

	It("keeps no remote Metrics: a GET finds none and a list is empty", func() {
		_, err := svc.GetMetric(ctx, "", "met_1")
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotFound))
		Expect(err).To(MatchError(evalapi.ErrNoRemoteMetrics))
		page, err := svc.ListMetrics(ctx, "", "p", evalapi.ListOptions{Limit: 5})
		Expect(err).NotTo(HaveOccurred())
		Expect(page).To(Equal(evalapi.MetricPage{Data: []evalapi.Metric{}, Total: ptr(0)}))
	})

	It("answers an update with the desired variant in response form under the id", func() {
		spec := evalapi.SpecFor("p", minimal("ai", "float"))
		m, err := svc.UpdateMetric(ctx, "ak_x0123456789abcdef", "met_1", evalapi.DesiredVariant(&spec))
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(evalapi.ResponseFor("met_1", evalapi.RequestFor(&spec))))
	})

	It("completes a Metric's deletion at once", func() {
		s, err := svc.DeleteMetric(ctx, "", "met_1")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Success).To(BeTrue())
	})
})
