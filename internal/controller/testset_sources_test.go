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
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/testset"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/testcases"
	"github.com/eval-operator/eval-operator/test/framework"
)

// artifactHosts allows srv, by its host and port, as --artifact-hosts
// would; 127.0.0.1 alone beside it allows only the scheme's own port.
func artifactHosts(srv *httptest.Server) []string {
	return []string{"127.0.0.1", srv.Listener.Addr().String()}
}

// gitRepository creates GitRepository ns/name.
func gitRepository(ns, name string) *sourcev1.GitRepository {
	GinkgoHelper()
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: sourcev1.GitRepositorySpec{URL: "https://git.example.com/" + name + ".git", Interval: metav1.Duration{Duration: time.Hour}}}
	Expect(k8s.Create(rootCtx, repo)).To(Succeed())
	return repo
}

// fromSource reads cases.jsonl of GitRepository name.
func fromSource(name string) func(*v1alpha1.TestsetSpec) {
	return func(s *v1alpha1.TestsetSpec) {
		s.SourceRef = &v1alpha1.FluxSourceTestcases{Kind: "GitRepository", Name: name, Path: "cases.jsonl"}
	}
}

// sourceNotReady matches a Ready condition False, SourceNotReady, whose
// message holds each of parts.
func sourceNotReady(parts ...string) OmegaMatcher {
	m := make([]OmegaMatcher, 0, 1+len(parts))
	m = append(m, haveReason(metav1.ConditionFalse, v1alpha1.ReasonSourceNotReady))
	for _, p := range parts {
		m = append(m, HaveField("Message", ContainSubstring(p)))
	}
	return And(m...)
}

// zeros reads zero bytes without end.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// requestLog counts the requests a server answers and keeps their Referer.
type requestLog struct {
	mu       sync.Mutex
	n        int
	referers []string
}

func (l *requestLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	l.referers = append(l.referers, r.Referer())
}

func (l *requestLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

var _ = Describe("Testset sources against a hostile tenant", func() {
	var (
		ns        string
		up        *upstream
		artifacts *framework.ArtifactServer
	)
	BeforeEach(func() {
		ns, up = newFixture()
		artifacts = framework.NewArtifactServer()
		DeferCleanup(artifacts.Close)
		up.opts.Artifacts.Hosts = artifactHosts(artifacts.Server)
	})

	It("fetches only the artifact URL of the source the Testset names, and puts no digest it did not write in a message", func() {
		startManager(up.opts)
		// team-b's source, on the same source-controller.
		secret := artifacts.PublishBlob("team-b", "secret-src", "main@sha1:bbbb", must(framework.Tarball(framework.TarEntry{
			Name: "cases.jsonl", Size: int64(len(`{"id":"1","answer":"TOP SECRET B"}`)),
			Content: strings.NewReader(`{"id":"1","answer":"TOP SECRET B"}`)})))
		repo := gitRepository(ns, "src")
		setArtifact(repo, secret)
		t := newTestset(ns, "steal", fromSource("src"))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(sourceNotReady(fmt.Sprintf("/gitrepository/%s/src/", ns)))
		Expect(artifacts.Requests(strings.TrimPrefix(secret.URL, artifacts.URL))).To(BeZero())

		By("its own artifact URL with a digest it made up: the message names only that digest")
		own := publish(artifacts, repo, "main@sha1:aaaa", map[string]string{"cases.jsonl": jsonLines(0, 3, "a")})
		real := strings.TrimPrefix(own.Digest, "sha256:")
		own.Digest = "sha256:" + strings.Repeat("0", 64)
		setArtifact(repo, own)
		Eventually(readyCondition(t)).Should(sourceNotReady(own.Digest))
		Expect(t.Status.Conditions).NotTo(ContainElement(HaveField("Message", ContainSubstring(real))))
	})

	It("follows no redirect to another host and fetches no port the hosts do not allow", func() {
		target := &requestLog{}
		l, err := net.Listen("tcp", "127.0.0.2:0")
		Expect(err).NotTo(HaveOccurred())
		other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { target.add(r) }))
		other.Listener = l
		other.Start()
		DeferCleanup(other.Close)
		redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
		}))
		DeferCleanup(redirector.Close)
		otherPort := &requestLog{}
		sameHost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherPort.add(r) }))
		DeferCleanup(sameHost.Close)
		up.opts.Artifacts.Hosts = artifactHosts(redirector)
		startManager(up.opts)

		a := publish(artifacts, &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "moved"}},
			"main@sha1:cccc", map[string]string{"cases.jsonl": jsonLines(0, 3, "a")})
		path := strings.TrimPrefix(a.URL, artifacts.URL)
		moved := gitRepository(ns, "moved")
		setArtifact(moved, &fluxmeta.Artifact{URL: redirector.URL + path, Path: a.Path, Revision: a.Revision,
			Digest: a.Digest, Size: a.Size, LastUpdateTime: a.LastUpdateTime})
		t := newTestset(ns, "moved", fromSource("moved"))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(sourceNotReady("redirect"))
		Expect(target.count()).To(BeZero())

		port := gitRepository(ns, "port")
		setArtifact(port, &fluxmeta.Artifact{URL: sameHost.URL + "/gitrepository/" + ns + "/port/x.tar.gz",
			Path: "x.tar.gz", Revision: "main@sha1:dddd", Digest: a.Digest, Size: a.Size, LastUpdateTime: a.LastUpdateTime})
		p := newTestset(ns, "port", fromSource("port"))
		Expect(k8s.Create(rootCtx, p)).To(Succeed())
		Eventually(readyCondition(p)).Should(sourceNotReady("--artifact-hosts"))
		Consistently(otherPort.count, time.Second).Should(BeZero())
		Expect(target.count()).To(BeZero())
	})

	It("bounds what a source may hold: a gzip bomb and 61,440 one-KiB lines", func() {
		startManager(up.opts)
		repo := gitRepository(ns, "bomb")
		cases := jsonLines(0, 3, "a")
		setArtifact(repo, artifacts.PublishBlob(ns, "bomb", "main@sha1:eeee", must(framework.Tarball(
			framework.TarEntry{Name: "zeros", Size: 300 << 20, Content: zeros{}},
			framework.TarEntry{Name: "cases.jsonl", Size: int64(len(cases)), Content: strings.NewReader(cases)}))))
		t := newTestset(ns, "bomb", fromSource("bomb"))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(sourceNotReady("decompressed", "--artifact-max-bytes"))

		big := gitRepository(ns, "big")
		var b strings.Builder
		for i := range 61440 {
			line := fmt.Sprintf(`{"id":"case-%05d","answer":"`, i)
			b.WriteString(line + strings.Repeat("x", 1024-len(line)-3) + "\"}\n")
		}
		setArtifact(big, publish(artifacts, big, "main@sha1:ffff", map[string]string{"cases.jsonl": b.String()}))
		large := newTestset(ns, "large", fromSource("big"))
		Expect(k8s.Create(rootCtx, large)).To(Succeed())
		Eventually(readyCondition(large)).Should(sourceNotReady("--testset-max-bytes"))
		Expect(up.Calls(evalapitest.OpCreateTestcases)).To(BeZero())
	})

	It("fetches an artifact once per revision for every Testset that names it", func() {
		startManager(up.opts)
		repo := gitRepository(ns, "shared")
		a := publish(artifacts, repo, "main@sha1:1111", map[string]string{"cases.jsonl": jsonLines(0, 50, "a")})
		setArtifact(repo, a)
		sets := make([]*v1alpha1.Testset, 0, 4)
		for i := range 4 {
			t := newTestset(ns, fmt.Sprintf("shared-%d", i), fromSource("shared"))
			Expect(k8s.Create(rootCtx, t)).To(Succeed())
			sets = append(sets, t)
		}
		for _, t := range sets {
			Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
			touch(t)
		}
		Consistently(func() int { return artifacts.Requests(strings.TrimPrefix(a.URL, artifacts.URL)) }, 2*time.Second).Should(Equal(1))
	})

	It("leaves another namespace's Testsets the workers while a stalled artifact server holds its fetches", func() {
		other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ctrl-other-"}}
		Expect(k8s.Create(rootCtx, other)).To(Succeed())
		Expect(k8s.Create(rootCtx, apiKeySecret(other.Name, testKey))).To(Succeed())
		stalled := &requestLog{}
		stop := make(chan struct{})
		staller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			stalled.add(r)
			_, _ = w.Write([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"))
			w.(http.Flusher).Flush()
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		}))
		DeferCleanup(staller.Close)
		DeferCleanup(func() { close(stop) })
		opts := up.opts
		opts.Artifacts.Hosts = artifactHosts(staller)
		opts.namespaces = []string{other.Name}
		startManager(opts)
		repo := gitRepository(ns, "slow")
		setArtifact(repo, &fluxmeta.Artifact{URL: staller.URL + "/gitrepository/" + ns + "/slow/x.tar.gz", Path: "x.tar.gz",
			Revision: "main@sha1:5555", Digest: "sha256:" + strings.Repeat("1", 64), LastUpdateTime: metav1.Now()})
		for i := range 8 {
			Expect(k8s.Create(rootCtx, newTestset(ns, fmt.Sprintf("slow-%d", i), fromSource("slow")))).To(Succeed())
		}
		Eventually(stalled.count).Should(BeNumerically(">=", 1))
		time.Sleep(time.Second) // the eight reconciles are under way

		t := newTestset(other.Name, "inline", inline(`{"id":"a","question":"q","answer":"a"}`))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t), 5*time.Second).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(stalled.count()).To(Equal(1), "one fetch of the artifact, shared by its eight Testsets")
	})

	It("syncs two namespaces' sets that together exceed the memory budget in turns, never holding more than it", func() {
		other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ctrl-other-"}}
		Expect(k8s.Create(rootCtx, other)).To(Succeed())
		Expect(k8s.Create(rootCtx, apiKeySecret(other.Name, testKey))).To(Succeed())
		// A set of 1,000 testcases holds about 160 KB (testset.setSize), over
		// half a namespace's share: one set a namespace, two in all, are
		// synced at once; every sync's calls on Testsets are under way only
		// while it holds its set.
		calls := &inFlight{}
		c, err := evalapi.NewClient(evalapi.Options{BaseURL: up.URL(), Timeout: 2 * time.Second,
			HTTPClient: &http.Client{Transport: calls.wrap(http.DefaultTransport.(*http.Transport).Clone())}})
		Expect(err).NotTo(HaveOccurred())
		up.SetLatency(50 * time.Millisecond)
		opts := up.opts
		opts.Service = c
		opts.MaxConcurrentReconciles = 8
		opts.TestsetLimits = testcases.Limits{Testcases: 1000, Bytes: 64 << 10, TestcaseBytes: 1 << 10}
		opts.TestsetMemory = testset.MinMemory(opts.TestsetLimits)
		opts.namespaces = []string{other.Name}
		startManager(opts)
		sets := make([]*v1alpha1.Testset, 0, 8)
		for _, n := range []string{ns, other.Name} {
			for i := range 4 {
				name := fmt.Sprintf("big-%d", i)
				Expect(k8s.Create(rootCtx, testcasesConfigMap(n, name, jsonLines(0, 1000, fmt.Sprint(len(sets)))))).To(Succeed())
				t := newTestset(n, name, fromConfigMap(name))
				Expect(k8s.Create(rootCtx, t)).To(Succeed())
				sets = append(sets, t)
			}
		}
		for _, t := range sets {
			Eventually(readyCondition(t), time.Minute).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		}
		Expect(calls.most.Load()).To(BeNumerically("<=", 2), "one set a namespace at once, each over half its share")
	})

	It("reads a relabelled ConfigMap's data once for all its Testsets, and parses it not again", func() {
		var gets atomic.Int32
		cmPath := "/api/v1/namespaces/" + ns + "/configmaps/cases"
		opts := up.opts
		opts.MaxConcurrentReconciles = 1
		opts.wrap = func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.Method == http.MethodGet && r.URL.Path == cmPath {
					gets.Add(1)
				}
				return rt.RoundTrip(r)
			})
		}
		startManager(opts)
		cm := testcasesConfigMap(ns, "cases", jsonLines(0, 200, "a"))
		Expect(k8s.Create(rootCtx, cm)).To(Succeed())
		sets := make([]*v1alpha1.Testset, 0, 5)
		for i := range 5 {
			t := newTestset(ns, fmt.Sprintf("cm-%d", i), fromConfigMap("cases"))
			Expect(k8s.Create(rootCtx, t)).To(Succeed())
			sets = append(sets, t)
		}
		for _, t := range sets {
			Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		}
		time.Sleep(time.Second)
		gets.Store(0)
		before := testsetCalls(up)
		for i := range 3 {
			Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			cm.Labels = map[string]string{"relabel": fmt.Sprint(i)}
			Expect(k8s.Update(rootCtx, cm)).To(Succeed())
			time.Sleep(time.Second)
		}
		Consistently(gets.Load, time.Second).Should(BeNumerically("<=", 3))
		Expect(testsetCalls(up)).To(Equal(before))
	})
})

// testsetCalls counts the calls on Testsets and their testcases up answered.
func testsetCalls(up *upstream) int {
	n := 0
	for _, op := range []string{evalapitest.OpGetTestset, evalapitest.OpListTestcases, evalapitest.OpCreateTestcases,
		evalapitest.OpUpdateTestcase, evalapitest.OpBulkDeleteTestcases, evalapitest.OpUpdateTestset} {
		n += up.Calls(op)
	}
	return n
}

// inFlight counts the calls on Testsets under way at once, and the most.
type inFlight struct{ now, most atomic.Int32 }

func (f *inFlight) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if !strings.Contains(r.URL.Path, "/testsets") {
			return rt.RoundTrip(r)
		}
		defer f.now.Add(-1)
		n := f.now.Add(1)
		for most := f.most.Load(); n > most && !f.most.CompareAndSwap(most, n); most = f.most.Load() {
		}
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func must[T any](v T, err error) T {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred())
	return v
}
