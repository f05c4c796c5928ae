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
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("A rolling update", func() {
	// Creates slow enough that every stop lands with several in flight.
	const (
		upstreamLatency = 2 * time.Second
		perTrial        = 8
		maxStopDelay    = 4 * time.Second
		reconcilers     = "--max-concurrent-reconciles=4"
	)

	It("finishes every create in flight within the chart's grace period, then SIGKILL", func(ctx SpecContext) {
		grace := chartGracePeriod()
		trials := scale(2, 10)
		random := rand.New(rand.NewPCG(uint64(GinkgoRandomSeed()), 1))
		f := newFixture(ctx, evalapitest.WithLatency(upstreamLatency))
		var longest time.Duration
		for trial := range trials {
			f.createMetrics(ctx, fmt.Sprintf("rollout-%02d", trial), perTrial)
			before := f.server.Calls(evalapitest.OpCreateMetric)
			p := f.start(reconcilers)
			Eventually(func() int { return f.server.Calls(evalapitest.OpCreateMetric) }).
				WithContext(ctx).WithTimeout(30 * time.Second).Should(BeNumerically(">", before))
			time.Sleep(time.Duration(random.Int64N(int64(maxStopDelay))))
			// What the kubelet does: SIGTERM, and SIGKILL once the grace period is over.
			start := time.Now()
			Expect(p.Stop(grace, nil)).To(Succeed(), "the manager outlived the chart's grace period of %s", grace)
			longest = max(longest, time.Since(start))
		}
		f.start(reconcilers)
		s := f.expectSettled(ctx, trials*perTrial, 2*time.Minute)
		f.expectNoDuplicates()
		f.expectNothingLost(ctx)
		AddReportEntry("rolling update", fmt.Sprintf(
			"%d SIGTERMs with %s upstream latency; longest stop %s of a %s grace period; %d Metrics: %d Ready, %d CreateOutcomeUnknown; %d upstream creates",
			trials, upstreamLatency, longest.Round(10*time.Millisecond), grace, trials*perTrial, s.ready, s.unknown,
			f.server.Creates()), ReportEntryVisibilityAlways)
		Expect(s.unknown).To(BeZero(), "a stop cut creates short, leaving their outcome unknown")
	}, SpecTimeout(30*time.Minute))
})

// chartGracePeriod renders the Helm chart with its defaults and returns the
// manager pod's terminationGracePeriodSeconds: the deadline a rolling update
// gives a stopping manager before the kubelet kills it.
func chartGracePeriod() time.Duration {
	GinkgoHelper()
	root := framework.RepoRoot()
	helm := filepath.Join(root, "bin", "helm")
	var out, stderr bytes.Buffer
	cmd := exec.Command(helm, "template", "eval-operator", filepath.Join(root, "charts", "eval-operator"),
		"--show-only", "templates/deployment.yaml")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	Expect(cmd.Run()).To(Succeed(), "rendering the chart (make helm installs bin/helm): %s", stderr.String())
	var d appsv1.Deployment
	Expect(utilyaml.NewYAMLOrJSONDecoder(&out, 4096).Decode(&d)).To(Succeed())
	seconds := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	Expect(seconds).NotTo(BeNil(), "the chart sets no terminationGracePeriodSeconds")
	return time.Duration(*seconds) * time.Second
}
