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

package framework

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSuitesCarryTheirBuildTag holds every Go file of a suite under test/
// to the build line of its suite_test.go: a file without it is the whole
// untagged package, which does not compile, so `go test ./...` and
// `go vet ./...` fail while the tagged runs pass.
func TestSuitesCarryTheirBuildTag(t *testing.T) {
	suites, err := filepath.Glob(filepath.Join(RepoRoot(), "test", "*", "suite_test.go"))
	if err != nil || len(suites) == 0 {
		t.Fatalf("no suites under test/: %v", err)
	}
	for _, suite := range suites {
		tag := firstLine(t, suite)
		if !strings.HasPrefix(tag, "//go:build ") {
			continue // an untagged suite, run by make test
		}
		files, err := filepath.Glob(filepath.Join(filepath.Dir(suite), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if got := firstLine(t, f); got != tag {
				t.Errorf("%s starts with %q, not its suite's %q", f, got, tag)
			}
		}
	}
}

func firstLine(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	s.Scan()
	return s.Text()
}
