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

// Package buildinfo says what a binary is: its release version, set at build
// time from the chart's appVersion (the Makefile's VERSION), and the source
// revision and Go version it was built from. The manager prints it for
// --version, logs it at start and exports it as evaloperator_build_info.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// version and revision are set with -ldflags "-X
// github.com/eval-operator/eval-operator/internal/buildinfo.version=v0.2.0";
// a plain go build leaves version "dev" and takes the revision from the VCS
// information Go stamps into binaries built in a git checkout.
var (
	version  = "dev"
	revision = ""
)

// Info is what a binary is.
type Info struct {
	Version   string
	Revision  string
	GoVersion string
}

// Get returns this binary's Info.
func Get() Info {
	return get(version, revision, debug.ReadBuildInfo)
}

func get(version, revision string, read func() (*debug.BuildInfo, bool)) Info {
	info := Info{Version: version, Revision: revision, GoVersion: runtime.Version()}
	if info.Revision != "" {
		return info
	}
	info.Revision = "unknown"
	bi, ok := read()
	if !ok {
		return info
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && info.Revision != "unknown" {
		info.Revision += "-dirty"
	}
	return info
}

// String is the --version line: "eval-operator v0.2.0 (revision 1a2b..., go1.26.0)".
func (i Info) String() string {
	return fmt.Sprintf("eval-operator %s (revision %s, %s)", i.Version, i.Revision, i.GoVersion)
}

// Collector is the evaloperator_build_info gauge: always 1, its labels say
// what runs, so `count by (version) (evaloperator_build_info)` shows a
// rollout's progress.
func (i Info) Collector() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "evaloperator_build_info",
		Help: "The running manager's release version, source revision and Go version; always 1.",
		ConstLabels: prometheus.Labels{
			"version":   i.Version,
			"revision":  i.Revision,
			"goversion": i.GoVersion,
		},
	})
	g.Set(1)
	return g
}
