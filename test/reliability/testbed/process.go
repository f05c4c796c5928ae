// Package testbed holds what the reliability suite and the benchmarks share:
// the manager binary run as a child process against a test control plane,
// the objects they create, and a parallel driver. The reliability suite kills
// the child with SIGKILL and reads its logs; the benchmarks read its peak
// memory. A child process is what production runs, so neither a crash nor
// memory use is simulated.
package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/eval-operator/eval-operator/internal/testenv"
)

// stopGrace is how long Stop waits after SIGTERM before it kills.
const stopGrace = 30 * time.Second

// Build compiles the manager into dir and returns the binary's path.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "manager")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd")
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the manager: %w\n%s", err, out)
	}
	return bin, nil
}

// WriteKubeconfig writes a kubeconfig for a cluster admin of env's control
// plane into dir and returns its path.
func WriteKubeconfig(env *envtest.Environment, cfg *rest.Config, dir string) (string, error) {
	admin, err := env.AddUser(envtest.User{Name: "testbed-admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return "", fmt.Errorf("adding the manager's user: %w", err)
	}
	data, err := admin.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering the kubeconfig: %w", err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return path, nil
}

// Options describe one run of the manager.
type Options struct {
	// Binary is the path Build returned.
	Binary string
	// Kubeconfig is the path WriteKubeconfig returned.
	Kubeconfig string
	// Args are added to the command line, e.g. --api-url.
	Args []string
	// Log, if set, receives the manager's output as well.
	Log io.Writer
}

// Process is a running (or exited) manager.
type Process struct {
	cmd    *exec.Cmd
	output *testenv.Buffer
	exited chan struct{}
	// MetricsURL is the manager's plain-HTTP Prometheus endpoint.
	MetricsURL string
}

// Start runs the manager with its metrics served over plain HTTP on a free
// loopback port and the health probes off, so that several managers (and
// other people's tests) can run on one machine.
func Start(opts Options) (*Process, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--metrics-bind-address=" + addr,
		"--metrics-secure=false",
		"--health-probe-bind-address=0",
	}, opts.Args...)
	p := &Process{
		cmd:        exec.Command(opts.Binary, args...), //nolint:gosec // the binary Build compiled, with the caller's flags
		output:     &testenv.Buffer{},
		exited:     make(chan struct{}),
		MetricsURL: "http://" + addr + "/metrics",
	}
	var out io.Writer = p.output
	if opts.Log != nil {
		out = io.MultiWriter(p.output, opts.Log)
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+opts.Kubeconfig)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the manager: %w", err)
	}
	go func() {
		_ = p.cmd.Wait() // the exit status of a killed manager is expected
		close(p.exited)
	}()
	return p, nil
}

// FreeAddr returns a loopback address whose port was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Kill sends SIGKILL, as a node failure or an OOM kill would, and waits.
func (p *Process) Kill() error {
	return p.signalAndWait(syscall.SIGKILL, stopGrace)
}

// Stop sends SIGTERM, as the kubelet does, and waits; after stopGrace it kills.
func (p *Process) Stop() error {
	if err := p.signalAndWait(syscall.SIGTERM, stopGrace); err != nil {
		return errors.Join(err, p.Kill())
	}
	return nil
}

func (p *Process) signalAndWait(sig syscall.Signal, timeout time.Duration) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signalling the manager: %w", err)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("the manager did not exit within %s of %s", timeout, sig)
	}
}

// Output is everything the manager wrote to stdout and stderr so far.
func (p *Process) Output() string { return p.output.String() }

// Memory is the manager's resident set size, from /proc (Linux only).
type Memory struct {
	// Peak is VmHWM, the high-water mark of the resident set.
	Peak int64
	// Current is VmRSS.
	Current int64
}

// Memory reads the running manager's resident set sizes.
func (p *Process) Memory() (Memory, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "status"))
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
func (p *Process) ScrapeText(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.MetricsURL, nil)
	if err != nil {
		return "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("scraping the manager: %w", err)
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return "", fmt.Errorf("reading the manager's metrics: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("scraping the manager: HTTP %d", res.StatusCode)
	}
	return string(body), nil
}

// Scrape returns the manager's metrics, parsed.
func (p *Process) Scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	text, err := p.ScrapeText(ctx)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parsing the manager's metrics: %w", err)
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
