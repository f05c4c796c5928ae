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
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// stopGrace is how long Terminate waits after SIGTERM before it kills.
const stopGrace = 30 * time.Second

// MeteredOptions describe one run of a MeteredManager.
type MeteredOptions struct {
	// Binary is the path BuildManager returned.
	Binary string
	// Kubeconfig is the control plane's ControlPlane.Kubeconfig.
	Kubeconfig string
	// Args are added to the command line, e.g. --api-url.
	Args []string
	// Log, if set, receives the manager's output as well.
	Log io.Writer
}

// MeteredManager is a manager binary run with its metrics served and its
// output kept, for the reliability suite, which kills it with SIGKILL and
// searches its logs, and the benchmarks, which read its peak memory. A child
// process is what production runs, so neither a crash nor memory use is
// simulated. Its Manager stops and kills it.
type MeteredManager struct {
	*Manager
	output Buffer
	// MetricsURL is the manager's plain-HTTP Prometheus endpoint.
	MetricsURL string
}

// StartMetered runs the manager with its metrics served over plain HTTP on
// a free loopback port and the health probes off, so that several managers
// (and other people's tests) can run on one machine.
func StartMetered(opts MeteredOptions) (*MeteredManager, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	p := &MeteredManager{MetricsURL: "http://" + addr + "/metrics"}
	var out io.Writer = &p.output
	if opts.Log != nil {
		out = io.MultiWriter(&p.output, opts.Log)
	}
	args := append([]string{"--metrics-bind-address=" + addr, "--metrics-secure=false"}, opts.Args...)
	if p.Manager, err = StartManager(opts.Binary, opts.Kubeconfig, "0", out, args...); err != nil {
		return nil, err
	}
	return p, nil
}

// Terminate stops the manager as the kubelet does: SIGTERM, and SIGKILL
// after stopGrace, which it reports as an error.
func (p *MeteredManager) Terminate() error { return p.Stop(stopGrace, nil) }

// Output is everything the manager wrote to stdout and stderr so far.
func (p *MeteredManager) Output() string { return p.output.String() }

// Memory is the manager's resident set size, from /proc (Linux only).
type Memory struct {
	// Peak is VmHWM, the high-water mark of the resident set.
	Peak int64
	// Current is VmRSS: Anon, the process's own memory, and File, the
	// pages of its binary and libraries.
	Current, Anon, File int64
}

// Memory reads the running manager's resident set sizes.
func (p *MeteredManager) Memory() (Memory, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.Pid()), "status"))
	if err != nil {
		return Memory{}, fmt.Errorf("reading the manager's memory: %w", err)
	}
	var m Memory
	for line := range strings.Lines(string(data)) {
		name, value, _ := strings.Cut(line, ":")
		switch name {
		case "VmHWM":
			m.Peak, err = parseKB(value)
		case "VmRSS":
			m.Current, err = parseKB(value)
		case "RssAnon":
			m.Anon, err = parseKB(value)
		case "RssFile":
			m.File, err = parseKB(value)
		}
		if err != nil {
			return Memory{}, err
		}
	}
	return m, nil
}

// parseKB reads a /proc/<pid>/status size such as "  12345 kB" into bytes.
func parseKB(v string) (int64, error) {
	kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing %q: %w", v, err)
	}
	return kb << 10, nil
}

// ScrapeText returns the metrics endpoint's page as served.
func (p *MeteredManager) ScrapeText(ctx context.Context) (string, error) {
	return scrapeText(ctx, p.MetricsURL)
}

// Scrape returns the manager's metrics, parsed.
func (p *MeteredManager) Scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	return scrape(ctx, p.MetricsURL)
}

// scrapeText returns the Prometheus page at url as served.
func scrapeText(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("scraping %s: %w", url, err)
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return "", fmt.Errorf("reading the metrics of %s: %w", url, err)
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("scraping %s: HTTP %d", url, res.StatusCode)
	}
	return string(body), nil
}

// scrape returns the metrics served at url, parsed.
func scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	text, err := scrapeText(ctx, url)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parsing the metrics of %s: %w", url, err)
	}
	return families, nil
}

// Sum adds up the samples of the counter or gauge family name whose labels
// include all of labels.
func Sum(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	var total float64
	for _, m := range families[name].GetMetric() {
		if hasLabels(m, labels) {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}
