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
	"os"
	"os/exec"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/test/framework"
)

// defaultFuzzTime is how long the long run fuzzes; RELIABILITY_FUZZTIME overrides it.
const defaultFuzzTime = 3 * time.Minute

var _ = Describe("Bad input", func() {
	// Admission of invalid manifests is covered by the CEL table tests of
	// api/v1alpha1 against a real API server; this fuzzes the REST server's
	// decoder, which sees bytes before the API server does.
	It("survives fuzzing of the REST server's Metric request decoder", func(ctx SpecContext) {
		if !long {
			Skip("fuzzing runs with RELIABILITY_LONG=1; `make test` runs the seed corpus")
		}
		fuzzTime := defaultFuzzTime
		if v := os.Getenv("RELIABILITY_FUZZTIME"); v != "" {
			var err error
			fuzzTime, err = time.ParseDuration(v)
			Expect(err).NotTo(HaveOccurred(), "RELIABILITY_FUZZTIME")
		}
		cmd := exec.CommandContext(ctx, "go", "test", "-run=^$", "-fuzz=^FuzzDecodeMetricRequest$",
			"-fuzztime="+fuzzTime.String(), "./internal/restapi")
		cmd.Dir = framework.RepoRoot()
		out, err := cmd.CombinedOutput()
		_, _ = GinkgoWriter.Write(out)
		Expect(err).NotTo(HaveOccurred(), "the fuzzer found a failing input (saved under internal/restapi/testdata/fuzz):\n%s", out)
		AddReportEntry("fuzzing", "FuzzDecodeMetricRequest for "+fuzzTime.String()+": no failure", ReportEntryVisibilityAlways)
	}, SpecTimeout(30*time.Minute))
})
