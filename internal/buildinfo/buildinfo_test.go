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

package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func stamped(settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
	return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Settings: settings}, true }
}

func TestGet(t *testing.T) {
	for _, tc := range []struct {
		name, version, revision string
		read                    func() (*debug.BuildInfo, bool)
		want                    string
	}{
		{"ldflags revision wins", "v0.2.0", "abc", stamped(debug.BuildSetting{Key: "vcs.revision", Value: "def"}), "abc"},
		{"vcs stamp", "v0.2.0", "", stamped(debug.BuildSetting{Key: "vcs.revision", Value: "def"}), "def"},
		{"vcs stamp of a modified tree", "dev", "", stamped(
			debug.BuildSetting{Key: "vcs.revision", Value: "def"},
			debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "def-dirty"},
		{"no build info", "dev", "", func() (*debug.BuildInfo, bool) { return nil, false }, "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := get(tc.version, tc.revision, tc.read)
			if got.Revision != tc.want || got.Version != tc.version || got.GoVersion != runtime.Version() {
				t.Errorf("get = %+v, want version %s revision %s", got, tc.version, tc.want)
			}
		})
	}
}

func TestCollector(t *testing.T) {
	info := Info{Version: "v0.2.0", Revision: "abc", GoVersion: "go1.26.0"}
	want := `
# HELP evaloperator_build_info The running manager's release version, source revision and Go version; always 1.
# TYPE evaloperator_build_info gauge
evaloperator_build_info{goversion="go1.26.0",revision="abc",version="v0.2.0"} 1
`
	if err := testutil.CollectAndCompare(info.Collector(), strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if got := info.String(); got != "eval-operator v0.2.0 (revision abc, go1.26.0)" {
		t.Errorf("String() = %q", got)
	}
}
