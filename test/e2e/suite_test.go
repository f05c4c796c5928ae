//go:build e2e

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

// Package e2e runs the manager binary the way it runs in a cluster, as a
// process with its command line, against a local control plane and the fake
// Evaluation Service (evalapitest): the samples, leader election with a
// replica killed mid-create, and the REST server.
package e2e

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/eval-operator/eval-operator/test/framework"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "E2E Suite")
}

var (
	// managerBinary is the manager built from ./cmd for this run.
	managerBinary string
	// controlPlane is the API server the managers and the specs use.
	controlPlane *framework.ControlPlane
	// k8s is a cluster admin's client.
	k8s client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// Processes start, elect leaders and reconcile: seconds, not the default 1s.
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

	dir, err := os.MkdirTemp("", "eval-operator-e2e-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)

	managerBinary, err = framework.BuildManager(ctx, dir)
	Expect(err).NotTo(HaveOccurred())

	controlPlane, err = framework.StartControlPlane(dir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(controlPlane.Stop)
	k8s, err = controlPlane.Client()
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(10*time.Minute))
