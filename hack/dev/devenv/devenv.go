// Package devenv runs the operator locally, the way `make dev`, the e2e and
// reliability suites and the benchmarks do: a real kube-apiserver and etcd
// (envtest) with the CRDs installed, a kubeconfig file for them, and the
// manager binary built and run as a child process.
package devenv

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
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/eval-operator/eval-operator/internal/testenv"
)

// Build compiles the manager (./cmd) into dir and returns the binary's path.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "manager")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd")
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the manager: %w\n%s", err, out)
	}
	return bin, nil
}

// ControlPlane is a local kube-apiserver and etcd with this project's CRDs.
type ControlPlane struct {
	// Config is a cluster admin's connection to the API server.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for Config, for kubectl
	// and the manager.
	Kubeconfig string

	env *envtest.Environment
}

// StartControlPlane starts the control plane, installs the CRDs and writes
// a cluster admin's kubeconfig to dir/kubeconfig.
func StartControlPlane(dir string) (*ControlPlane, error) {
	env, err := testenv.New()
	if err != nil {
		return nil, err
	}
	if _, err := env.Start(); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	cp := &ControlPlane{env: env, Kubeconfig: filepath.Join(dir, "kubeconfig")}
	if err := cp.writeKubeconfig(); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return cp, nil
}

func (c *ControlPlane) writeKubeconfig() error {
	// On envtest's admin config, for its client-side rate limit sized for tests.
	admin, err := c.env.AddUser(envtest.User{Name: "dev-admin", Groups: []string{"system:masters"}}, c.env.Config)
	if err != nil {
		return fmt.Errorf("adding the admin user: %w", err)
	}
	data, err := admin.KubeConfig()
	if err != nil {
		return fmt.Errorf("writing the admin kubeconfig: %w", err)
	}
	if err := os.WriteFile(c.Kubeconfig, data, 0o600); err != nil {
		return fmt.Errorf("writing the admin kubeconfig: %w", err)
	}
	c.Config = admin.Config()
	return nil
}

// Client returns a client for the built-in kinds and this project's kinds.
func (c *ControlPlane) Client() (client.Client, error) {
	return client.New(c.Config, client.Options{Scheme: testenv.Scheme()})
}

// Stop stops the API server and etcd and removes their data and the
// kubeconfig, which would point at nothing.
func (c *ControlPlane) Stop() error {
	if err := c.env.Stop(); err != nil {
		return fmt.Errorf("stopping the control plane: %w", err)
	}
	if err := os.Remove(c.Kubeconfig); err != nil {
		return fmt.Errorf("removing the kubeconfig: %w", err)
	}
	return nil
}

// Manager is a running manager binary.
type Manager struct {
	cmd       *exec.Cmd
	probeAddr string
	done      chan struct{}
	err       error // how the process ended; set before done closes
}

// StartManager runs the manager binary against kubeconfig with its health
// probes on probeAddr ("0" turns them off, and WaitReady with them) and the
// extra args; its output goes to out. The process gets its own process
// group, so a Ctrl-C in the terminal reaches only the caller, which then
// stops it in order, and a kill reaches any children it has.
func StartManager(binary, kubeconfig, probeAddr string, out io.Writer, args ...string) (*Manager, error) {
	cmd := exec.Command(binary, //nolint:gosec // running the caller's manager binary is the point
		append([]string{"--health-probe-bind-address=" + probeAddr}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	m := &Manager{cmd: cmd, probeAddr: probeAddr, done: make(chan struct{})}
	go func() {
		m.err = cmd.Wait()
		close(m.done)
	}()
	return m, nil
}

// Pid is the manager's process id.
func (m *Manager) Pid() int { return m.cmd.Process.Pid }

// Done is closed when the process has ended.
func (m *Manager) Done() <-chan struct{} { return m.done }

// Err says how the process ended; call it after Done is closed.
func (m *Manager) Err() error { return m.err }

// WaitReady waits until the manager's /readyz answers 200.
func (m *Manager) WaitReady(ctx context.Context) error {
	url := "http://" + m.probeAddr + "/readyz"
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if probe(ctx, url) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", url, ctx.Err())
		case <-m.done:
			return fmt.Errorf("the manager exited before it was ready: %w", m.err)
		case <-tick.C:
		}
	}
}

func probe(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Stop asks the manager to shut down (SIGTERM) and returns once it has
// ended. It kills it as soon as force receives (a second Ctrl-C), or after
// grace, which it then reports as an error.
func (m *Manager) Stop(grace time.Duration, force <-chan os.Signal) error {
	if err := m.signal(syscall.SIGTERM); err != nil {
		return err
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-m.done:
		return nil
	case <-force:
		return m.Kill()
	case <-timer.C:
		return errors.Join(fmt.Errorf("the manager did not exit within %s of SIGTERM", grace), m.Kill())
	}
}

// killWait bounds the wait for a killed process to end, which takes moments
// unless something hangs, such as a process outside its group holding its
// output open.
const killWait = 30 * time.Second

// Kill kills the manager's process group at once (SIGKILL), as a node
// failure or an OOM kill would, and returns once the process has ended.
func (m *Manager) Kill() error {
	if err := m.signal(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-m.done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("the manager did not exit within %s of SIGKILL", killWait)
	}
}

// signal signals the process group unless the process has ended; one that
// ends meanwhile cannot be signalled (ESRCH), which is fine.
func (m *Manager) signal(sig syscall.Signal) error {
	select {
	case <-m.done:
		return nil
	default:
	}
	if err := syscall.Kill(-m.Pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signalling the manager: %w", err)
	}
	return nil
}

// FreeAddr returns a loopback address with a port that was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}
