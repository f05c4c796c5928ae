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
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

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
	return StartManagerWithEnv(binary, kubeconfig, probeAddr, nil, out, args...)
}

// StartManagerWithEnv is StartManager with env ("NAME=value") added to the
// process's environment, over the test's own: what a chart's extraEnv sets.
func StartManagerWithEnv(binary, kubeconfig, probeAddr string, env []string, out io.Writer, args ...string) (*Manager, error) {
	cmd := exec.Command(binary, //nolint:gosec // running the caller's manager binary is the point
		append([]string{"--health-probe-bind-address=" + probeAddr}, args...)...)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="+kubeconfig), env...)
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

// FreeAddr returns a loopback address with a port that was free a moment
// ago, for a manager binary to listen on (a child process binds its own
// addresses; in-process servers take a listener of port 0 instead).
//
// The port lies below the kernel's ephemeral range: an ephemeral port, once
// closed, is handed to the next outgoing connection or port-0 listener of
// any process on the machine, and the binary started a moment later finds it
// taken. Below the range only another FreeAddr can pick it, one chance in
// thousands.
func FreeAddr() (string, error) {
	low := ephemeralLow()
	var err error
	for range 100 {
		// Not a secret: any spread of ports will do.
		port := minFreePort + rand.IntN(low-minFreePort) //nolint:gosec
		var l net.Listener
		if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			_ = l.Close()
			return l.Addr().String(), nil
		}
	}
	return "", fmt.Errorf("finding a free port: %w", err)
}

// minFreePort is the lowest port FreeAddr picks, above the well-known
// services' ports.
const minFreePort = 10000

// ephemeralLow is the lowest port the kernel picks for port 0 and outgoing
// connections (Linux's default when it cannot be read).
func ephemeralLow() int {
	low := 32768
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return low
	}
	if _, err := fmt.Sscan(string(data), &low); err != nil || low <= minFreePort+1000 {
		return 32768
	}
	return low
}
