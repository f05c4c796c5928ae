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

package metricsauth

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/test/framework"
)

func TestMetricsAuth(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Metrics Auth Suite")
}

var (
	env *envtest.Environment
	// kube is the suite's admin client.
	kube    *kubernetes.Clientset
	rootCtx = context.Background()
	// filterConfig is the identity the filters under test review with: a
	// user bound to config/rbac/metrics_auth_role.yaml only, as the manager is.
	filterConfig *rest.Config
	// readerRole is config/rbac/metrics_reader_role.yaml's ClusterRole, the
	// one scrapers are bound to.
	readerRole *rbacv1.ClusterRole
)

var _ = BeforeSuite(func() {
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)

	var err error
	env, err = framework.NewEnvironment()
	Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	Expect(err).NotTo(HaveOccurred())
	kube, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())

	authRole := clusterRoleFromFile("metrics_auth_role.yaml")
	Expect(kube.RbacV1().ClusterRoles().Create(rootCtx, authRole, metav1.CreateOptions{})).Error().NotTo(HaveOccurred())
	filterConfig = userBoundTo("metrics-filter", authRole.Name)

	readerRole = clusterRoleFromFile("metrics_reader_role.yaml")
	Expect(kube.RbacV1().ClusterRoles().Create(rootCtx, readerRole, metav1.CreateOptions{})).Error().NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// clusterRoleFromFile reads a ClusterRole of config/rbac.
func clusterRoleFromFile(name string) *rbacv1.ClusterRole {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "rbac", name))
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	Expect(yaml.UnmarshalStrict(raw, role)).To(Succeed())
	Expect(role.Kind).To(Equal("ClusterRole"))
	return role
}

// userBoundTo returns the config of a new user bound to the ClusterRole
// role (none if empty).
func userBoundTo(user, role string) *rest.Config {
	GinkgoHelper()
	u, err := env.AddUser(envtest.User{Name: user}, nil)
	Expect(err).NotTo(HaveOccurred())
	if role != "" {
		Expect(kube.RbacV1().ClusterRoleBindings().Create(rootCtx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}, metav1.CreateOptions{})).Error().NotTo(HaveOccurred())
	}
	return u.Config()
}

// reviewCounter counts the TokenReviews and SubjectAccessReviews a client
// sends, as a rest.Config WrapTransport.
type reviewCounter struct {
	tokenReviews, accessReviews atomic.Int64
}

func (c *reviewCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost {
			switch {
			case strings.HasSuffix(r.URL.Path, "/tokenreviews"):
				c.tokenReviews.Add(1)
			case strings.HasSuffix(r.URL.Path, "/subjectaccessreviews"):
				c.accessReviews.Add(1)
			}
		}
		return rt.RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fakeClock is a settings.now that tests move forward.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
