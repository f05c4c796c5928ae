//go:build cluster

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

// Package cluster runs the operator as pods on a real one-node cluster
// (make cluster): the image, the chart and the kustomize install where a
// kubelet starts them, probes probe, and the shipped RBAC is all they have.
// It skips unless CLUSTER_KUBECONFIG names that cluster's kubeconfig (make
// test-cluster sets it).
package cluster

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var (
	// kubeconfig is the real node's admin kubeconfig; stateDir holds it.
	kubeconfig, stateDir string
	// img is the image the node has imported (make cluster imports IMG).
	img string
	// nodeIP is the node's address: pods reach the fake service there.
	nodeIP string
	k8s    client.Client
	cs     *kubernetes.Clientset
	// fake is the Evaluation Service beside the cluster, on the node address.
	fake    *evalapitest.Server
	fakeKey = framework.NewKey("cluster")
)

func TestCluster(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Real node suite")
}

var _ = BeforeSuite(func() {
	kubeconfig = os.Getenv("CLUSTER_KUBECONFIG")
	if kubeconfig == "" {
		Skip("CLUSTER_KUBECONFIG is unset: run `make cluster`, then `make test-cluster`")
	}
	_, err := os.Stat(kubeconfig)
	Expect(err).NotTo(HaveOccurred(), "no real node: run `make cluster` first")
	stateDir = filepath.Dir(kubeconfig)
	img = os.Getenv("IMG")
	Expect(img).NotTo(BeEmpty(), "IMG names the image make cluster imported")

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cfg.QPS, cfg.Burst = 100, 200
	k8s, err = client.New(cfg, client.Options{Scheme: framework.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	cs, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	u, err := url.Parse(cfg.Host)
	Expect(err).NotTo(HaveOccurred())
	nodeIP = u.Hostname()

	l, err := net.Listen("tcp", net.JoinHostPort(nodeIP, "0"))
	Expect(err).NotTo(HaveOccurred())
	fake = evalapitest.New(evalapitest.ListenOn(l), evalapitest.WithKeys(fakeKey))
	DeferCleanup(fake.Close)
	SetDefaultEventuallyTimeout(3 * time.Minute)
	SetDefaultEventuallyPollingInterval(500 * time.Millisecond)
})

// ctxFor is a context for one step of a spec.
func ctxFor(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	DeferCleanup(cancel)
	return ctx
}
