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

package v1alpha1_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/test/framework"
)

// A reason a user sees in `kubectl get` is only useful if the troubleshooting
// page says what it means and what to do.
var _ = Describe("docs/troubleshooting.md", func() {
	It("has an entry for every condition reason", func() {
		reasons := conditionReasons()
		Expect(reasons).To(ContainElements("Created", "CreateOutcomeUnknown"), "the reasons were not found")
		page, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "docs", "troubleshooting.md"))
		Expect(err).NotTo(HaveOccurred())
		for _, reason := range reasons {
			Expect(string(page)).To(ContainSubstring("\n### "+reason+"\n"), "no entry for reason %s", reason)
		}
	})
})

// conditionReasons returns the values of the Reason* constants of this package.
func conditionReasons() []string {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "api", "v1alpha1", "*.go"))
	Expect(err).NotTo(HaveOccurred())
	constant := regexp.MustCompile(`(?m)^\s*Reason\w+\s*=\s*"(\w+)"`)
	var reasons []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred())
		for _, m := range constant.FindAllStringSubmatch(string(src), -1) {
			reasons = append(reasons, m[1])
		}
	}
	return reasons
}
