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

package reliability

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("Stopping the manager mid-create", func() {
	// Slow creates keep requests in flight most of the time, so stops land
	// mid-request; maxStopDelay spans several rounds of creates.
	const (
		upstreamLatency = 250 * time.Millisecond
		perTrial        = 8
		maxStopDelay    = 700 * time.Millisecond
		reconcilers     = "--max-concurrent-reconciles=4"
	)

	// interrupt runs trials (more while no stop has cut a create off): each
	// creates perTrial Metrics, starts a manager
	// and, at a random point after the trial's first create request, stops it
	// with stop. A last manager then runs until every Metric settles. cut
	// names the Metrics a stop left pending without an id.
	interrupt := func(ctx context.Context, f *fixture, trials int, stop func(*framework.MeteredManager) error) (
		s settled, cut map[string]bool, ran int,
	) {
		GinkgoHelper()
		random := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 0))
		cut = map[string]bool{}
		// Until a stop has landed in the window the guard protects, up to
		// four times as many trials: the delays are random.
		trial := 0
		for ; trial < trials || (len(cut) == 0 && trial < 4*trials); trial++ {
			f.createMetrics(ctx, fmt.Sprintf("stop-%02d", trial), perTrial)
			before := f.server.Calls(evalapitest.OpCreateMetric)
			p := f.start(reconcilers)
			Eventually(func() int { return f.server.Calls(evalapitest.OpCreateMetric) }).
				WithContext(ctx).WithTimeout(30 * time.Second).Should(BeNumerically(">", before))
			time.Sleep(time.Duration(random.Int64N(int64(maxStopDelay))))
			Expect(stop(p)).To(Succeed())
			maps.Copy(cut, f.pendingWithoutID(ctx))
		}
		f.start(reconcilers)
		s = f.expectSettled(ctx, trial*perTrial, 2*time.Minute)
		f.expectNoDuplicates()
		return s, cut, trial
	}

	It("never creates a Metric twice, nor loses one, when killed (SIGKILL) at random points, and settles every cut-off create", func(ctx SpecContext) {
		trials := scale(5, 50)
		f := newFixture(ctx, evalapitest.WithLatency(upstreamLatency))
		s, cut, trials := interrupt(ctx, f, trials, (*framework.MeteredManager).Kill)
		f.expectNothingLost(ctx)
		f.expectNoSecrets(ctx)
		// The kills must have hit the window the create-pending guard
		// protects, or this spec proved nothing.
		Expect(cut).NotTo(BeEmpty(), "no kill landed between a create's pending annotation and its id")
		Expect(s.unknown).To(BeZero(), "creates cut off by a kill were left for a person")
		AddReportEntry("SIGKILL", fmt.Sprintf(
			"%d kills; %d Metrics: %d Ready, 0 CreateOutcomeUnknown; %d left pending without an id by a kill: "+
				"%d Recovered from the service's list, the others created again (never committed); %d upstream creates, 0 duplicates",
			trials, trials*perTrial, s.ready, len(cut), s.recovered, f.server.Creates()), ReportEntryVisibilityAlways)
	}, SpecTimeout(30*time.Minute))

	It("leaves cut-off creates to a person, as before, when the service cannot list its Metrics (SIGKILL)", func(ctx SpecContext) {
		trials := scale(3, 10)
		f := newFixture(ctx, evalapitest.WithLatency(upstreamLatency), evalapitest.WithoutMetricLifecycle())
		s, _, trials := interrupt(ctx, f, trials, (*framework.MeteredManager).Kill)
		toAdopt := f.expectNothingLost(ctx)
		f.expectNoSecrets(ctx)
		Expect(s.recovered).To(BeZero())
		AddReportEntry("SIGKILL, no list", fmt.Sprintf(
			"%d kills; %d Metrics: %d Ready, %d for a person (CreateOutcomeUnknown, or RemoteNotFound when a kill lost "+
				"the status of a created Metric; %d of them created upstream, flagged for adoption); %d upstream creates, 0 duplicates",
			trials, trials*perTrial, s.ready, s.unknown, toAdopt, f.server.Creates()), ReportEntryVisibilityAlways)
	}, SpecTimeout(30*time.Minute))
})
