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
	"os"
	"os/exec"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// BuildManager compiles the manager (./cmd) into dir as `make image`
// builds it (static, -trimpath, no symbol table) and returns the binary's
// path. The build matters to what is measured: the binary's own pages are
// a third of its resident set.
func BuildManager(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "manager")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the manager: %w\n%s", err, out)
	}
	return bin, nil
}

// ControlPlane is a local kube-apiserver and etcd with this project's CRDs,
// for a manager run as a child process.
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
	env, err := NewEnvironment()
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
	return client.New(c.Config, client.Options{Scheme: Scheme()})
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
