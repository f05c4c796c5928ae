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

package restapi

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/test/framework"
)

// servedLabel opts a namespace in, in these tests.
const servedLabel = "eval-operator.dev/rest"

// listenLocal returns a listener on a free loopback port and its base URL.
func listenLocal() (net.Listener, string) {
	GinkgoHelper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	return ln, "http://" + ln.Addr().String()
}

// runServer runs a server on the harness's manager cache until the spec
// ends, and returns it with its base URL once it answers.
func runServer(opts Options) (*Server, string) {
	GinkgoHelper()
	ln, url := listenLocal()
	opts.Listener, opts.Client, opts.Cache, opts.Logger = ln, h.mgr.GetClient(), h.mgr.GetCache(), ctrl.Log.WithName("scoped")
	if opts.KubeClient == nil {
		opts.KubeClient = kubernetes.NewForConfigOrDie(h.cfg)
	}
	s, err := New(opts)
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done, 30*time.Second).Should(Receive(BeNil()))
	})
	Eventually(func() error {
		res, err := h.http.Get(url + routeOpenAPI)
		if err == nil {
			_ = res.Body.Close()
		}
		return err
	}).Should(Succeed())
	return s, url
}

func setNamespaceLabel(namespace string, value *string) {
	GinkgoHelper()
	ns := &corev1.Namespace{}
	Expect(h.k8s.Get(context.Background(), client.ObjectKey{Name: namespace}, ns)).To(Succeed())
	before := ns.DeepCopy()
	if value == nil {
		delete(ns.Labels, servedLabel)
	} else {
		ns.Labels[servedLabel] = *value
	}
	Expect(h.k8s.Patch(context.Background(), ns, client.MergeFrom(before))).To(Succeed())
}

// knows reports whether s accepts key.
func knows(s *Server, key string) func() bool {
	return func() bool { _, ok, _ := s.keys.Lookup(key); return ok }
}

var _ = Describe("The key Secret informer", func() {
	It("ignores a Secret whose key breaks the key rules", func(ctx SpecContext) {
		t := newTenant()
		key := framework.NewKey("newline")
		Expect(h.k8s.Create(ctx, framework.KeySecret(t.namespace, "newline", key+"\n"))).To(Succeed())
		// The watch delivers in order: once a later Secret is known, so is this one.
		later := framework.NewKey("later")
		Expect(h.k8s.Create(ctx, framework.KeySecret(t.namespace, "later", later))).To(Succeed())
		Expect(h.waitKey(ctx, later, true)).To(Succeed())
		expectUnauthorized(send(request{method: http.MethodPost, path: projectPath, key: key,
			body: variantBody("human", "boolean")}))
	})
})

var _ = Describe("--rest-namespace-selector", func() {
	It("serves only the keys of the namespaces it selects, following their labels", func(ctx SpecContext) {
		selector, err := labels.Parse(servedLabel + "=enabled")
		Expect(err).NotTo(HaveOccurred())
		s, url := runServer(Options{NamespaceSelector: selector})
		in, out := newTenant(), newTenant()
		setNamespaceLabel(in.namespace, ptr.To("enabled"))
		setNamespaceLabel(out.namespace, ptr.To("disabled"))
		Eventually(knows(s, in.key)).Should(BeTrue())

		rep := sendTo(url, request{method: http.MethodPost, path: projectPath, key: in.key, body: variantBody("human", "boolean")})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		expectUnauthorized(sendTo(url, request{method: http.MethodPost, path: projectPath, key: out.key,
			body: variantBody("human", "boolean")}))
		Expect(metricsIn(out.namespace)).To(BeEmpty())

		// Opting in and out takes effect without a restart.
		setNamespaceLabel(out.namespace, ptr.To("enabled"))
		Eventually(knows(s, out.key)).Should(BeTrue())
		setNamespaceLabel(in.namespace, nil)
		Eventually(knows(s, in.key)).Should(BeFalse())
		expectUnauthorized(sendTo(url, request{method: http.MethodPost, path: projectPath, key: in.key,
			body: variantBody("human", "boolean")}))
	})
})

// managerRules are the rules the installers grant a manager with the REST
// server: the ClusterRole `make manifests` generates and the REST server's
// own (config/rest/role.yaml).
func managerRules() []rbacv1.PolicyRule {
	GinkgoHelper()
	files := []string{"rbac/role.yaml", "rest/role.yaml"}
	rules := make([]rbacv1.PolicyRule, 0, 8*len(files))
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", file))
		Expect(err).NotTo(HaveOccurred())
		var role rbacv1.ClusterRole
		Expect(yaml.Unmarshal(data, &role)).To(Succeed())
		rules = append(rules, role.Rules...)
	}
	// The Metric CRD is cluster-scoped: a Role cannot grant it.
	return slices.DeleteFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, "apiextensions.k8s.io")
	})
}

// grantClusterScoped gives user the manager's rules on cluster-scoped
// kinds (ClusterEvaluationServices), which the namespace-scoped installers
// keep in the manager's ClusterRole.
func grantClusterScoped(ctx context.Context, user string) {
	GinkgoHelper()
	var rules []rbacv1.PolicyRule
	for _, r := range managerRules() {
		r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(res string) bool {
			return !strings.HasPrefix(res, "clusterevaluationservices")
		})
		if len(r.Resources) > 0 {
			rules = append(rules, r)
		}
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "eval-operator-manager-cluster-scoped"}, Rules: rules}
	Expect(h.k8s.Create(ctx, role)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	Expect(h.k8s.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(h.k8s.Delete(ctx, binding)).To(Succeed())
		Expect(h.k8s.Delete(ctx, role)).To(Succeed())
	})
}

// grantIn gives user the manager's rules in namespace only, as the
// namespace-scoped installers do.
func grantIn(ctx context.Context, namespace, user string) {
	GinkgoHelper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "eval-operator-manager"},
		Rules: managerRules()}
	Expect(h.k8s.Create(ctx, role)).To(Succeed())
	Expect(h.k8s.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "eval-operator-manager"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
}

// startScopedManager runs, until the spec ends, a manager with the
// reconcilers and a REST server that watches namespaces only, as user.
func startScopedManager(cfg *rest.Config, namespaces []string) (ctrl.Manager, string) {
	GinkgoHelper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 framework.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  controller.CacheOptions(namespaces),
		Logger:                 ctrl.Log.WithName("scoped"),
	})
	Expect(err).NotTo(HaveOccurred())
	connector, err := controller.SetupWithManager(mgr, controller.Options{})
	Expect(err).NotTo(HaveOccurred())
	ln, url := listenLocal()
	_, err = AddToManager(mgr, connector, Options{Listener: ln, Namespaces: namespaces, Logger: ctrl.Log.WithName("scoped")})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done, 30*time.Second).Should(Receive(BeNil()))
	})
	return mgr, url
}

var _ = Describe("--watch-namespaces", func() {
	It("runs with Roles in the watched namespaces only, and serves only their keys", func(ctx SpecContext) {
		klogSeen := len(klogged.String())

		const user = "eval-operator-scoped"
		scoped, err := h.env.AddUser(envtest.User{Name: user}, h.cfg)
		Expect(err).NotTo(HaveOccurred())
		a, b, outside := newTenant(), newTenant(), newTenant()
		for _, ns := range []string{a.namespace, b.namespace} {
			grantIn(ctx, ns, user)
		}
		grantClusterScoped(ctx, user)
		mgr, url := startScopedManager(scoped.Config(), []string{a.namespace, b.namespace})

		// A create is answered once the reconciler has processed it, and a
		// delete once the object is gone: the REST server's own rules
		// (config/rest/role.yaml) are what these need.
		rep := sendTo(url, request{method: http.MethodPost, path: projectPath, key: a.key, body: variantBody("human", "boolean")})
		id := idOf(rep)
		rep = sendTo(url, request{method: http.MethodDelete, path: metricPath(id), key: a.key})
		Expect(rep.status).To(BeNumerically("<", 300), "body: %s", rep.body)
		m := &evaluationv1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: b.namespace, Name: "direct"},
			Spec: evaluationv1alpha1.MetricSpec{ProjectID: "proj-1", Name: "m", EvalType: "human", OutputType: "boolean"}}
		Expect(h.k8s.Create(ctx, m)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(h.k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			g.Expect(m.Status.ID).NotTo(BeEmpty())
		}).Should(Succeed())

		expectUnauthorized(sendTo(url, request{method: http.MethodPost, path: projectPath, key: outside.key,
			body: variantBody("human", "boolean")}))
		Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue(), "every informer listed its namespaces")
		Expect(klogged.String()[klogSeen:]).NotTo(ContainSubstring("forbidden"))
	})
})
