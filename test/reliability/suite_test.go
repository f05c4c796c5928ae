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

// Package reliability runs the built manager binary against a real API
// server and the upstream test server, and injects what production brings:
// SIGKILL at random points, an upstream that fails, times out and resets, bad
// keys. It asserts that the operator never creates a remote Metric twice,
// loses no id, converges without hot loops, and never shows a key.
//
// The short versions run in about a minute; RELIABILITY_LONG=1 runs the long
// ones (`make test-reliability`).
package reliability

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/test/framework"
)

var (
	// k8s reads and writes straight to the API server.
	k8s client.Client
	// binary is the manager built from ./cmd; kubeconfig makes it a cluster admin.
	binary, kubeconfig string
	// controlPlane is the API server and etcd every spec runs against.
	controlPlane *framework.ControlPlane
	// long selects the long versions of the specs.
	long = os.Getenv("RELIABILITY_LONG") != ""
)

func TestReliability(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Reliability Suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	dir := GinkgoT().TempDir()
	cp, err := framework.StartControlPlane(dir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cp.Stop)
	kubeconfig, controlPlane = cp.Kubeconfig, cp
	k8s, err = cp.Client()
	Expect(err).NotTo(HaveOccurred())
	binary, err = framework.BuildManager(ctx, dir)
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(5*time.Minute))

// scale picks the short or the long version of a size.
func scale(short, longer int) int {
	if long {
		return longer
	}
	return short
}
