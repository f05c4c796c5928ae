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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/eval-operator/eval-operator/test/framework"
)

// protected is a handler that answers 200 "ok", wrapped in a filter and
// served over httptest, with everything the filter logged and answered.
type protected struct {
	url      string
	client   *http.Client
	reviews  *reviewCounter
	logs     *framework.Buffer
	mu       sync.Mutex
	answers  []string
	sawToken bool
}

// serve wraps the handler with the filter provide makes from cfg, counting
// the reviews it sends.
func serve(provide func(*rest.Config, *http.Client) (metricsserver.Filter, error), cfg *rest.Config) *protected {
	GinkgoHelper()
	p := &protected{reviews: &reviewCounter{}, logs: &framework.Buffer{}}
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = p.reviews.wrap
	httpClient, err := rest.HTTPClientFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	filter, err := provide(cfg, httpClient)
	Expect(err).NotTo(HaveOccurred())
	// Every level, so that a token logged at any verbosity is seen.
	log := funcr.New(func(prefix, args string) { _, _ = p.logs.Write([]byte(prefix + " " + args + "\n")) },
		funcr.Options{Verbosity: 10})
	h, err := filter(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			p.mu.Lock()
			p.sawToken = true
			p.mu.Unlock()
		}
		_, _ = io.WriteString(w, "ok")
	}))
	Expect(err).NotTo(HaveOccurred())
	srv := httptest.NewServer(h)
	DeferCleanup(srv.Close)
	p.url, p.client = srv.URL, srv.Client()
	return p
}

// do sends method /metrics with the Authorization header auth (none if
// empty) and returns the status and body.
func (p *protected) do(method, auth string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(rootCtx, method, p.url+"/metrics", nil)
	Expect(err).NotTo(HaveOccurred())
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := p.client.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	p.mu.Lock()
	p.answers = append(p.answers, fmt.Sprint(resp.Header), string(body))
	p.mu.Unlock()
	return resp.StatusCode, string(body)
}

// get sends GET /metrics with token as bearer token.
func (p *protected) get(token string) (int, string) {
	GinkgoHelper()
	return p.do(http.MethodGet, "Bearer "+token)
}

// expectNoLeak checks that no token appears in what the filter logged or
// answered, and that the handler never saw the Authorization header.
func (p *protected) expectNoLeak(tokens ...string) {
	GinkgoHelper()
	logged := p.logs.String()
	p.mu.Lock()
	answered := strings.Join(p.answers, "\n")
	sawToken := p.sawToken
	p.mu.Unlock()
	for _, t := range tokens {
		Expect(logged).NotTo(ContainSubstring(t), "a token was logged")
		Expect(answered).NotTo(ContainSubstring(t), "a token was answered")
	}
	Expect(sawToken).To(BeFalse(), "the handler got the Authorization header")
}

// account is a ServiceAccount with a token.
type account struct {
	namespace, name, token string
}

func (a account) user() string { return "system:serviceaccount:" + a.namespace + ":" + a.name }

// newAccount creates a ServiceAccount in ns and requests a token for it.
func newAccount(ns, name string) account {
	GinkgoHelper()
	_, err := kube.CoreV1().ServiceAccounts(ns).Create(rootCtx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	tr, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(rootCtx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(tr.Status.Token).NotTo(BeEmpty())
	return account{namespace: ns, name: name, token: tr.Status.Token}
}

// bindReader binds the metrics-reader ClusterRole to a, waits until the API
// server's authorizer sees it, and returns the binding's name.
func bindReader(a account) string {
	GinkgoHelper()
	crb, err := kube.RbacV1().ClusterRoleBindings().Create(rootCtx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "metrics-reader-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: readerRole.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: a.name, Namespace: a.namespace}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Eventually(apiAllows).WithArguments(a, "get").Should(BeTrue())
	return crb.Name
}

// unbind deletes the binding and waits until the API server denies a.
func unbind(binding string, a account) {
	GinkgoHelper()
	Expect(kube.RbacV1().ClusterRoleBindings().Delete(rootCtx, binding, metav1.DeleteOptions{})).To(Succeed())
	Eventually(apiAllows).WithArguments(a, "get").Should(BeFalse())
}

// apiAllows asks the API server directly whether a may use verb on /metrics.
func apiAllows(a account, verb string) (bool, error) {
	sar, err := kube.AuthorizationV1().SubjectAccessReviews().Create(rootCtx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:                  a.user(),
			Groups:                []string{"system:serviceaccounts", "system:serviceaccounts:" + a.namespace, "system:authenticated"},
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: verb},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

func newNamespace() string {
	GinkgoHelper()
	ns, err := kube.CoreV1().Namespaces().Create(rootCtx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "metricsauth-"}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return ns.Name
}

var _ = Describe("FilterProvider on a real API server", func() {
	var (
		ns      string
		reader  account // bound to metrics-reader
		other   account // bound to nothing
		garbage string
		p       *protected
	)

	BeforeEach(func() {
		ns = newNamespace()
		reader = newAccount(ns, "prometheus")
		other = newAccount(ns, "other")
		garbage = "garbage-" + rand.String(32)
		bindReader(reader)
		p = serve(FilterProvider, filterConfig)
	})

	It("answers 401 to a request without a token or with a malformed Authorization header", func() {
		for _, auth := range []string{"", "Bearer", "Bearer ", "Basic " + reader.token, reader.token, "Bearer " + reader.token + " extra"} {
			code, _ := p.do(http.MethodGet, auth)
			Expect(code).To(Equal(http.StatusUnauthorized), "Authorization %q", auth)
		}
		Expect(p.reviews.tokenReviews.Load()).To(BeZero(), "a malformed header needs no TokenReview")
		p.expectNoLeak(reader.token)
	})

	It("answers 401 to a token the API server does not authenticate", func() {
		code, body := p.get(garbage)
		Expect(code).To(Equal(http.StatusUnauthorized))
		Expect(body).NotTo(ContainSubstring("ok"))
		Expect(p.reviews.tokenReviews.Load()).To(BeEquivalentTo(1))
		Expect(p.reviews.accessReviews.Load()).To(BeZero())
		p.expectNoLeak(garbage)
	})

	It("serves the bound service account's GET /metrics", func() {
		code, body := p.get(reader.token)
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(Equal("ok"))
		p.expectNoLeak(reader.token)
	})

	It("answers 403 to a service account not bound to metrics-reader", func() {
		code, body := p.get(other.token)
		Expect(code).To(Equal(http.StatusForbidden))
		Expect(body).To(ContainSubstring(other.user()))
		p.expectNoLeak(other.token)
	})

	It("answers 403 to a POST by the bound service account: only get is granted", func() {
		Expect(apiAllows(reader, "post")).To(BeFalse())
		code, _ := p.do(http.MethodPost, "Bearer "+reader.token)
		Expect(code).To(Equal(http.StatusForbidden))
		code, _ = p.get(reader.token)
		Expect(code).To(Equal(http.StatusOK), "get is still granted")
		p.expectNoLeak(reader.token)
	})

	It("logs refusals at V(1) with the user but never a token", func() {
		for _, auth := range []string{"", "Bearer " + garbage, "Bearer " + other.token, "Basic " + reader.token} {
			_, _ = p.do(http.MethodGet, auth)
		}
		_, _ = p.do(http.MethodPost, "Bearer "+reader.token)
		logged := p.logs.String()
		Expect(logged).To(ContainSubstring(`"msg"="Refused a metrics request: no bearer token"`))
		Expect(logged).To(ContainSubstring(`"msg"="Refused a metrics request: token not authenticated"`))
		Expect(logged).To(ContainSubstring(`"msg"="Refused a metrics request: not authorized" "user"="` + other.user() + `"`))
		Expect(logged).To(ContainSubstring(`"verb"="post"`))
		for _, line := range strings.Split(strings.TrimSpace(logged), "\n") {
			Expect(line).To(ContainSubstring(`"level"=1`), "a refusal is logged at V(1)")
		}
		p.expectNoLeak(garbage, other.token, reader.token)
	})

	It("reuses its reviews: a second request with the same token sends no TokenReview or SubjectAccessReview", func() {
		for _, tc := range []struct {
			token string
			code  int
		}{{reader.token, http.StatusOK}, {other.token, http.StatusForbidden}, {garbage, http.StatusUnauthorized}} {
			code, _ := p.get(tc.token)
			Expect(code).To(Equal(tc.code))
			tokens, access := p.reviews.tokenReviews.Load(), p.reviews.accessReviews.Load()
			Expect(tokens).NotTo(BeZero())
			code, _ = p.get(tc.token)
			Expect(code).To(Equal(tc.code))
			Expect(p.reviews.tokenReviews.Load()).To(Equal(tokens), "a new TokenReview")
			Expect(p.reviews.accessReviews.Load()).To(Equal(access), "a new SubjectAccessReview")
		}
	})

	It("answers 500, never 200, when the API server refuses its reviews", func() {
		// A user who may not create TokenReviews.
		bare := serve(FilterProvider, userBoundTo("no-reviews-"+ns, ""))
		code, _ := bare.get(reader.token)
		Expect(code).To(Equal(http.StatusInternalServerError))
		Expect(bare.logs.String()).To(ContainSubstring("forbidden"))

		// A user who may create TokenReviews but not SubjectAccessReviews.
		tokenOnly := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "token-reviews-only-" + ns},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{authenticationv1.GroupName}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"},
			}},
		}
		Expect(kube.RbacV1().ClusterRoles().Create(rootCtx, tokenOnly, metav1.CreateOptions{})).Error().NotTo(HaveOccurred())
		half := serve(FilterProvider, userBoundTo("token-reviews-only-"+ns, tokenOnly.Name))
		// The binding takes effect asynchronously; until then the
		// TokenReview fails the same way.
		Eventually(func() int64 {
			code, _ := half.get(reader.token)
			Expect(code).To(Equal(http.StatusInternalServerError))
			return half.reviews.accessReviews.Load()
		}).ShouldNot(BeZero())
		Expect(half.logs.String()).To(ContainSubstring("subjectaccessreviews.authorization.k8s.io is forbidden"))
		bare.expectNoLeak(reader.token)
		half.expectNoLeak(reader.token)
	})
})

var _ = Describe("The filter's caches on a real API server", func() {
	var (
		ns    string
		clock *fakeClock
		s     settings
		p     *protected
	)

	BeforeEach(func() {
		ns = newNamespace()
		clock = newFakeClock()
		s = defaultSettings()
		s.now = clock.now
		p = serve(newFilterProvider(s), filterConfig)
	})

	It("honours a revoked binding until the allow TTL ends", func() {
		reader := newAccount(ns, "prometheus")
		binding := bindReader(reader)
		code, _ := p.get(reader.token)
		Expect(code).To(Equal(http.StatusOK))
		Expect(p.reviews.accessReviews.Load()).To(BeEquivalentTo(1))

		unbind(binding, reader)
		code, _ = p.get(reader.token)
		Expect(code).To(Equal(http.StatusOK), "allowed from the cache")

		clock.advance(s.allowTTL - time.Second)
		code, _ = p.get(reader.token)
		Expect(code).To(Equal(http.StatusOK), "allowed from the cache until the allow TTL")
		Expect(p.reviews.tokenReviews.Load()).To(BeEquivalentTo(2), "the token TTL is shorter: reviewed again")
		Expect(p.reviews.accessReviews.Load()).To(BeEquivalentTo(1))

		clock.advance(2 * time.Second)
		code, _ = p.get(reader.token)
		Expect(code).To(Equal(http.StatusForbidden), "reviewed again after the allow TTL")
		Expect(p.reviews.accessReviews.Load()).To(BeEquivalentTo(2))
	})

	It("honours a new binding only after the deny TTL", func() {
		reader := newAccount(ns, "prometheus")
		code, _ := p.get(reader.token)
		Expect(code).To(Equal(http.StatusForbidden))

		bindReader(reader)
		code, _ = p.get(reader.token)
		Expect(code).To(Equal(http.StatusForbidden), "denied from the cache")
		Expect(p.reviews.accessReviews.Load()).To(BeEquivalentTo(1))

		clock.advance(s.denyTTL)
		code, _ = p.get(reader.token)
		Expect(code).To(Equal(http.StatusOK))
		Expect(p.reviews.accessReviews.Load()).To(BeEquivalentTo(2))
	})

	It("reviews a refused token again after the refused-token TTL, an authenticated one after the token TTL", func() {
		garbage := "garbage-" + rand.String(32)
		reader := newAccount(ns, "prometheus")
		bindReader(reader)
		for _, t := range []string{garbage, reader.token} {
			_, _ = p.get(t)
		}
		Expect(p.reviews.tokenReviews.Load()).To(BeEquivalentTo(2))

		clock.advance(s.refusedTokenTTL)
		for _, t := range []string{garbage, reader.token} {
			_, _ = p.get(t)
		}
		Expect(p.reviews.tokenReviews.Load()).To(BeEquivalentTo(3), "only the refused token is reviewed again")

		clock.advance(s.tokenTTL - s.refusedTokenTTL)
		code, _ := p.get(reader.token)
		Expect(code).To(Equal(http.StatusOK))
		Expect(p.reviews.tokenReviews.Load()).To(BeEquivalentTo(4))
	})
})
