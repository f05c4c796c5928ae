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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	cfg, err := WriteKubeconfig(c.env, c.Kubeconfig)
	c.Config = cfg
	return err
}

// WriteKubeconfig writes a cluster admin's kubeconfig for env's API server
// to path, for kubectl and the manager, and returns its connection.
func WriteKubeconfig(env *envtest.Environment, path string) (*rest.Config, error) {
	// On envtest's admin config, for its client-side rate limit sized for tests.
	admin, err := env.AddUser(envtest.User{Name: "dev-admin", Groups: []string{"system:masters"}}, env.Config)
	if err != nil {
		return nil, fmt.Errorf("adding the admin user: %w", err)
	}
	data, err := admin.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("writing the admin kubeconfig: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("writing the admin kubeconfig: %w", err)
	}
	return admin.Config(), nil
}

// EtcdSize is the size of etcd's database file, as etcd reports it.
type EtcdSize struct {
	// Total is etcd_mvcc_db_total_size_in_bytes: what the file takes on
	// disk, which counts against etcd's quota (--quota-backend-bytes).
	Total int64
	// InUse is etcd_mvcc_db_total_size_in_use_in_bytes: Total less the
	// pages freed by compaction that the file keeps until a defragmentation.
	InUse int64
}

// CompactEtcd compacts etcd's history up to its current revision, as the
// API server does every five minutes (--etcd-compaction-interval), so that
// EtcdSize's InUse then counts the objects stored and not their earlier
// revisions. A watch from before the compaction must list again.
func (c *ControlPlane) CompactEtcd(ctx context.Context) error {
	var current struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// Any read answers with the current revision; etcd's JSON gateway takes keys in base64.
	if err := c.etcdCall(ctx, "/v3/kv/range", map[string]any{"key": "Lw==", "limit": 1, "keys_only": true}, &current); err != nil {
		return err
	}
	return c.etcdCall(ctx, "/v3/kv/compaction", map[string]any{"revision": current.Header.Revision, "physical": true}, nil)
}

// etcdCall posts req to path of etcd's JSON gateway and decodes its answer into res, if set.
func (c *ControlPlane) etcdCall(ctx context.Context, path string, req, res any) error {
	u := *c.env.ControlPlane.Etcd.URL
	u.Path = path
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	answer, err := http.DefaultClient.Do(r)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer func() { _ = answer.Body.Close() }()
	data, err := io.ReadAll(answer.Body)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	if answer.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: HTTP %d: %s", path, answer.StatusCode, data)
	}
	if res == nil {
		return nil
	}
	return json.Unmarshal(data, res)
}

// EtcdSize scrapes etcd's own metrics, served on its client URL.
func (c *ControlPlane) EtcdSize(ctx context.Context) (EtcdSize, error) {
	u := *c.env.ControlPlane.Etcd.URL
	u.Path = "/metrics"
	families, err := scrape(ctx, u.String())
	if err != nil {
		return EtcdSize{}, err
	}
	return EtcdSize{
		Total: int64(Sum(families, "etcd_mvcc_db_total_size_in_bytes", nil)),
		InUse: int64(Sum(families, "etcd_mvcc_db_total_size_in_use_in_bytes", nil)),
	}, nil
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
