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
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/eval-operator/eval-operator/test/framework"
)

// validToken is the one token fakeTokens authenticates.
const validToken = "valid-token-4b1d"

// fakeTokens authenticates validToken as the user alice and refuses any
// other token; err, if set, fails the next reviews instead.
type fakeTokens struct {
	calls atomic.Int64
	mu    sync.Mutex
	errs  []error
	// gate, if set, holds every review until it is closed.
	gate chan struct{}
}

func (f *fakeTokens) failNext(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, errs...)
}

func (f *fakeTokens) Create(_ context.Context, r *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	f.calls.Add(1)
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		f.mu.Unlock()
		return nil, err
	}
	f.mu.Unlock()
	out := r.DeepCopy()
	if r.Spec.Token == validToken {
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
			Username: "alice", UID: "uid-1", Groups: []string{"team"},
			Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a", "b"}},
		}}
	} else {
		// An authenticator may echo what it was given; the filter must not
		// pass that on.
		out.Status = authenticationv1.TokenReviewStatus{Error: "invalid token " + r.Spec.Token}
	}
	return out, nil
}

// fakeAccess allows what allow says and records the specs it was asked.
type fakeAccess struct {
	mu    sync.Mutex
	specs []authorizationv1.SubjectAccessReviewSpec
	allow func(authorizationv1.SubjectAccessReviewSpec) bool
	errs  []error
}

func (f *fakeAccess) failNext(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, errs...)
}

func (f *fakeAccess) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.specs)
}

func (f *fakeAccess) Create(_ context.Context, r *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.specs = append(f.specs, *r.Spec.DeepCopy())
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return nil, err
	}
	out := r.DeepCopy()
	out.Status.Allowed = f.allow(r.Spec)
	return out, nil
}

// unitGuard is a guard on fakes, its handler and its log.
type unitGuard struct {
	g       *guard
	h       http.Handler
	tokens  *fakeTokens
	access  *fakeAccess
	logs    *framework.Buffer
	clock   *fakeClock
	handled atomic.Int64
}

func newUnitGuard() *unitGuard {
	GinkgoHelper()
	u := &unitGuard{
		tokens: &fakeTokens{},
		access: &fakeAccess{allow: func(s authorizationv1.SubjectAccessReviewSpec) bool {
			return s.User == "alice" && s.NonResourceAttributes.Verb == "get" && s.NonResourceAttributes.Path == "/metrics"
		}},
		logs:  &framework.Buffer{},
		clock: newFakeClock(),
	}
	s := defaultSettings()
	s.now = u.clock.now
	s.backoff.Duration = time.Millisecond
	u.g = newGuard(u.tokens, u.access, s)
	log := funcr.New(func(prefix, args string) { _, _ = u.logs.Write([]byte(prefix + " " + args + "\n")) },
		funcr.Options{Verbosity: 10})
	var err error
	u.h, err = u.g.filter(log, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		u.handled.Add(1)
		_, _ = io.WriteString(w, "ok")
	}))
	Expect(err).NotTo(HaveOccurred())
	return u
}

// serve answers method path with token and returns the recorded answer.
func (u *unitGuard) serve(method, path, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	u.h.ServeHTTP(rec, req)
	return rec
}

var _ = Describe("The filter on fake reviewers", func() {
	var u *unitGuard

	BeforeEach(func() { u = newUnitGuard() })

	It("asks a SubjectAccessReview for the TokenReview's user, groups, uid and extra, the path and the lowercase verb", func() {
		Expect(u.serve(http.MethodGet, "/metrics", validToken).Code).To(Equal(http.StatusOK))
		Expect(u.serve(http.MethodPut, "/metrics/extra", validToken).Code).To(Equal(http.StatusForbidden))
		Expect(u.access.specs).To(Equal([]authorizationv1.SubjectAccessReviewSpec{{
			User: "alice", UID: "uid-1", Groups: []string{"team", "system:authenticated"},
			Extra:                 map[string]authorizationv1.ExtraValue{"scopes": {"a", "b"}},
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
		}, {
			User: "alice", UID: "uid-1", Groups: []string{"team", "system:authenticated"},
			Extra:                 map[string]authorizationv1.ExtraValue{"scopes": {"a", "b"}},
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics/extra", Verb: "put"},
		}}))
	})

	It("stays bounded after 10,000 distinct garbage tokens, keeping no token", func() {
		for i := range 10000 {
			Expect(u.serve(http.MethodGet, "/metrics", "garbage-"+strconv.Itoa(i)).Code).To(Equal(http.StatusUnauthorized))
		}
		Expect(u.tokens.calls.Load()).To(BeEquivalentTo(10000))
		Expect(u.g.users.len()).To(Equal(u.g.s.maxEntries))
		Expect(u.handled.Load()).To(BeZero())

		// The newest refusals are cached, the oldest were dropped.
		Expect(u.serve(http.MethodGet, "/metrics", "garbage-9999").Code).To(Equal(http.StatusUnauthorized))
		Expect(u.tokens.calls.Load()).To(BeEquivalentTo(10000))
		Expect(u.serve(http.MethodGet, "/metrics", "garbage-0").Code).To(Equal(http.StatusUnauthorized))
		Expect(u.tokens.calls.Load()).To(BeEquivalentTo(10001))

		// Nothing cached holds a token.
		u.g.users.mu.Lock()
		dump := fmt.Sprintf("%+v", u.g.users.entries)
		for el := u.g.users.order.Front(); el != nil; el = el.Next() {
			dump += fmt.Sprintf("%+v", *el.Value.(*ttlEntry[tokenResult]))
		}
		u.g.users.mu.Unlock()
		Expect(dump).NotTo(ContainSubstring("garbage-"))

		// Expired entries are dropped, not only evicted by newer ones.
		u.clock.advance(u.g.s.refusedTokenTTL)
		Expect(u.serve(http.MethodGet, "/metrics", validToken).Code).To(Equal(http.StatusOK))
		Expect(u.g.users.len()).To(Equal(1))
		Expect(u.g.allowed.len()).To(Equal(1))
	})

	It("never logs or answers a token, even one a TokenReview echoes", func() {
		secret := "garbage-" + strings.Repeat("x", 40)
		rec := u.serve(http.MethodGet, "/metrics", secret)
		Expect(rec.Code).To(Equal(http.StatusUnauthorized))
		Expect(u.logs.String()).To(ContainSubstring("invalid token [redacted]"))
		u.tokens.failNext(apierrors.NewBadRequest("bad review of " + secret + "2"))
		Expect(u.serve(http.MethodGet, "/metrics", secret+"2").Code).To(Equal(http.StatusInternalServerError))
		Expect(u.logs.String()).To(ContainSubstring("bad review of [redacted]"))
		Expect(u.logs.String()).NotTo(ContainSubstring(secret))
		Expect(rec.Body.String() + fmt.Sprint(rec.Header())).NotTo(ContainSubstring(secret))
	})

	It("answers 500 and does not cache it when a review fails, and retries a transient failure", func() {
		forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"}, "", errors.New("no"))
		u.tokens.failNext(forbidden)
		Expect(u.serve(http.MethodGet, "/metrics", validToken).Code).To(Equal(http.StatusInternalServerError))
		Expect(u.tokens.calls.Load()).To(BeEquivalentTo(1), "a forbidden review is not retried")

		u.access.failNext(forbidden)
		Expect(u.serve(http.MethodGet, "/metrics", validToken).Code).To(Equal(http.StatusInternalServerError))
		Expect(u.tokens.calls.Load()).To(BeEquivalentTo(2), "the failure was not cached")
		Expect(u.access.calls()).To(Equal(1))
		Expect(u.handled.Load()).To(BeZero())

		u.access.failNext(apierrors.NewInternalError(errors.New("etcd")), apierrors.NewTooManyRequests("busy", 0))
		Expect(u.serve(http.MethodGet, "/metrics", validToken).Code).To(Equal(http.StatusOK))
		Expect(u.access.calls()).To(Equal(4), "two transient failures, then the review")

		u.tokens.failNext(apierrors.NewServiceUnavailable("a"), apierrors.NewServiceUnavailable("b"),
			apierrors.NewServiceUnavailable("c"), apierrors.NewServiceUnavailable("d"), apierrors.NewServiceUnavailable("e"))
		Expect(u.serve(http.MethodGet, "/metrics", "another").Code).To(Equal(http.StatusInternalServerError))
		Expect(u.tokens.calls.Load()).To(BeEquivalentTo(2+u.g.s.backoff.Steps), "gives up after the backoff's attempts")
	})

	It("sends one TokenReview for concurrent requests with the same new token", func() {
		u.tokens.gate = make(chan struct{})
		var wg sync.WaitGroup
		codes := make([]int, 20)
		for i := range codes {
			wg.Go(func() { codes[i] = u.serve(http.MethodGet, "/metrics", validToken).Code })
		}
		Eventually(u.tokens.calls.Load).Should(BeEquivalentTo(1))
		Consistently(u.tokens.calls.Load, 100*time.Millisecond).Should(BeEquivalentTo(1))
		close(u.tokens.gate)
		wg.Wait()
		Expect(codes).To(HaveEach(http.StatusOK))
		Expect(u.tokens.calls.Load()).To(BeEquivalentTo(1))
		Expect(u.access.calls()).To(Equal(1))
	})

	It("stops waiting for a review, and never calls the handler, when the request's context ends", func() {
		u.tokens.gate = make(chan struct{})
		DeferCleanup(func() { close(u.tokens.gate) })
		ctx, cancel := context.WithCancel(rootCtx)
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+validToken)
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { defer close(done); u.h.ServeHTTP(rec, req) }()
		Eventually(u.tokens.calls.Load).Should(BeEquivalentTo(1))
		cancel()
		Eventually(done).Should(BeClosed())
		Expect(u.handled.Load()).To(BeZero())
	})
})

var _ = Describe("ttlCache", func() {
	It("drops the least recently used entry when full, and expired entries", func() {
		c := newTTLCache[int](2, time.Hour)
		now := time.Unix(0, 0)
		a, b, d := key{1}, key{2}, key{3}
		c.add(a, 1, time.Minute, now)
		c.add(b, 2, 2*time.Minute, now)
		expectCached(c, a, now, 1) // a is now the most recently used
		c.add(d, 3, time.Minute, now)
		Expect(c.len()).To(Equal(2))
		_, ok := c.get(b, now)
		Expect(ok).To(BeFalse(), "b was the least recently used")
		_, ok = c.get(a, now.Add(time.Minute))
		Expect(ok).To(BeFalse(), "a expired")
		Expect(c.len()).To(Equal(1))
		expectCached(c, d, now.Add(time.Minute-1), 3)
	})
})

func expectCached(c *ttlCache[int], k key, now time.Time, want int) {
	GinkgoHelper()
	v, ok := c.get(k, now)
	Expect(ok).To(BeTrue())
	Expect(v).To(Equal(want))
}
