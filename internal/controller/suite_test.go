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

package controller_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/test/framework"
)

var (
	env     *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	logs    = &framework.Buffer{}
	rootCtx context.Context
)

func TestController(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controller Suite")
}

var _ = BeforeSuite(func() {
	// Every manager's log goes to logs as well, so tests can assert what was
	// (not) logged.
	ctrl.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, logs)), zap.UseDevMode(true)))
	rootCtx = context.Background()
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(20 * time.Millisecond)

	var err error
	env, err = framework.NewEnvironment()
	Expect(err).NotTo(HaveOccurred())
	Expect(framework.WithFluxSources(env)).To(Succeed())
	cfg, err = env.Start()
	Expect(err).NotTo(HaveOccurred())
	// A client of its own, so that the tests' writes are not attributed to
	// the manager and the tests read straight from the API server.
	k8s, err = client.New(cfg, client.Options{Scheme: framework.Scheme()})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// manager is a running manager with the reconcilers; stop ends it and waits,
// as a restart or crash of the operator would.
type manager struct {
	cancel context.CancelFunc
	done   chan struct{}
	// cache is the manager's cache, for tests of what it holds.
	cache cache.Cache
}

// managerOptions are the reconcilers' options, with the manager's flags
// (remote.Defaults).
type managerOptions struct {
	controller.Options
	// namespaces are watched beside the test's own namespace.
	namespaces []string
	// wrap, if set, wraps the manager's transport to the API server.
	wrap func(http.RoundTripper) http.RoundTripper
}

func startManager(opts managerOptions) *manager {
	GinkgoHelper()
	mgrCfg := rest.CopyConfig(cfg)
	mgrCfg.WrapTransport = opts.wrap
	mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{
		Scheme:                 framework.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Each test starts its own manager in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		// A manager sees only its test's namespace: what an earlier test left
		// behind must not call this test's fake service or take its faults.
		Cache: controller.CacheOptions(append([]string{testNamespace}, opts.namespaces...)),
	})
	Expect(err).NotTo(HaveOccurred())
	_, err = controller.SetupWithManager(mgr, opts.Options)
	Expect(err).NotTo(HaveOccurred())

	ctx, cancel := context.WithCancel(rootCtx)
	m := &manager{cancel: cancel, done: make(chan struct{}), cache: mgr.GetCache()}
	go func() {
		defer GinkgoRecover()
		defer close(m.done)
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	DeferCleanup(m.stop)
	return m
}

func (m *manager) stop() {
	m.cancel()
	Eventually(m.done, 30*time.Second).Should(BeClosed())
}

// newNamespace creates a namespace for one test.
// testNamespace is the namespace of the running test, the only one its
// managers watch.
var testNamespace string

func newNamespace() string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ctrl-"}}
	Expect(k8s.Create(rootCtx, ns)).To(Succeed())
	testNamespace = ns.Name
	return ns.Name
}
