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

package main

import (
	"bytes"
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/test/framework"
)

func TestKubectlEval(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "kubectl-eval")
}

var (
	// controlPlane is a real API server with the CRDs, and a kubeconfig for it.
	controlPlane *framework.ControlPlane
	k8s          client.Client
)

var _ = BeforeSuite(func() {
	dir, err := os.MkdirTemp("", "kubectl-eval-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	controlPlane, err = framework.StartControlPlane(dir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(controlPlane.Stop)
	k8s, err = controlPlane.Client()
	Expect(err).NotTo(HaveOccurred())
})

// run runs the plugin with args against the control plane, with env as its
// environment, and returns its stdout and stderr.
func run(ctx SpecContext, env map[string]string, args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	cmd := newRootCommand(&stdout, &stderr, func(k string) string { return env[k] })
	cmd.SetArgs(append([]string{"--kubeconfig", controlPlane.Kubeconfig}, args...))
	err := cmd.ExecuteContext(ctx)
	return stdout.String(), stderr.String(), err
}
