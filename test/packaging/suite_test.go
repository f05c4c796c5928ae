//go:build packaging

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

// Package packaging checks the operator's install manifests, the kustomize
// tree in config/ and the Helm chart, the way a platform team meets them:
// rendered, then applied with server-side apply and strict field validation
// to a real API server. It also checks that they grant no more than needed.
package packaging

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/eval-operator/eval-operator/test/framework"
)

func TestPackaging(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Packaging Suite")
}

var (
	// repoRoot is where config/ and charts/ live.
	repoRoot string
	// kubeconfig points kubectl at the test API server as a cluster admin.
	kubeconfig string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	repoRoot = framework.RepoRoot()
	kubeconfig = startAPIServer()

	// The Prometheus and cert-manager opt-ins need their kinds.
	for _, file := range []string{"servicemonitor-crd.yaml", "monitoring-crds.yaml"} {
		crd, err := os.ReadFile(filepath.Join("testdata", file))
		Expect(err).NotTo(HaveOccurred())
		apply(ctx, "packaging-prerequisites", crd)
	}
	waitEstablished(ctx, "servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com",
		"issuers.cert-manager.io", "certificates.cert-manager.io")
}, NodeTimeout(3*time.Minute))

// startAPIServer starts an API server with no CRDs, stopped when the
// current node ends, and returns a cluster admin's kubeconfig for it.
func startAPIServer() string {
	GinkgoHelper()
	env, err := framework.NewEnvironment()
	Expect(err).NotTo(HaveOccurred())
	// The specs install the CRDs themselves, from the renders under test.
	env.CRDDirectoryPaths = nil
	env.ErrorIfCRDPathMissing = false
	cfg, err := env.Start()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)

	admin, err := env.AddUser(envtest.User{Name: "packaging-admin", Groups: []string{"system:masters"}}, cfg)
	Expect(err).NotTo(HaveOccurred())
	data, err := admin.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	return path
}
