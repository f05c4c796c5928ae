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

package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/kinds"
	"github.com/eval-operator/eval-operator/test/framework"
)

const (
	// The Helm release and its namespace; the kustomize install's.
	release, helmNS          = "eval-operator", "eval-system"
	kustomizeNS, kustomizeDp = "eval-operator-system", "eval-operator-controller-manager"
	leaseName                = "eval-operator.evaluation.eval-operator.dev"
	chartDir                 = "charts/eval-operator"
	// chart010 is the last commit of chart 0.1.0 (its CRDs templates).
	chart010 = "545b1dd9029b81837c2e74e0c6bcc809948c6313"
)

// helmBindings are the bindings the chart makes for its ServiceAccount.
var helmBindings = []string{
	"ClusterRoleBinding/eval-operator-manager",
	"ClusterRoleBinding/eval-operator-metrics-auth",
	"RoleBinding/" + helmNS + "/eval-operator-leader-election",
}

var _ = Describe("The operator as pods on a real node", Ordered, func() {
	It("runs the kustomize install under the restricted Pod Security level, with its own ServiceAccount and RBAC only", func() {
		ctx := ctxFor(5 * time.Minute)
		render := run(ctx, nil, tool("KUSTOMIZE", "kustomize"), "build", "config/default")
		kubectl(ctx, render, "apply", "--server-side", "-f", "-")
		expectHealthyInstall(ctx, kustomizeNS, kustomizeDp, img, []string{
			"ClusterRoleBinding/eval-operator-manager-rolebinding",
			"ClusterRoleBinding/eval-operator-metrics-auth-rolebinding",
			"RoleBinding/" + kustomizeNS + "/eval-operator-leader-election-rolebinding",
		})
		// Gone before the chart installs the same CRDs and a manager of its own.
		kubectl(ctx, render, "delete", "--wait", "--timeout=3m", "-f", "-")
	})

	It("upgrades from chart 0.1.0 with Metrics present: nothing re-created, all Ready after", func() {
		ctx := ctxFor(6 * time.Minute)
		src := sourceAt(ctx, chart010)
		importManager(ctx, src, img[:strings.LastIndex(img, ":")]+":0.1.0")
		chart := filepath.Join(src, chartDir)
		restrictedNamespace(ctx, helmNS)
		helm(ctx, "install", release, chart, "--namespace", helmNS, "--wait", "--timeout=3m")
		ns := "upgraded"
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, framework.KeySecret(ns, framework.KeySecretName, framework.NewKey("upgraded")))).To(Succeed())
		for i := range 9 {
			Expect(k8s.Create(ctx, framework.NewMetric(ns, fmt.Sprintf("from-0-1-0-%d", i), i))).To(Succeed())
		}
		before := readyMetrics(ctx, ns, 9)

		helm(ctx, "upgrade", release, chartDir, "--namespace", helmNS, "--wait", "--timeout=3m")
		expectHealthyInstall(ctx, helmNS, release, img, helmBindings)
		Expect(readyMetrics(ctx, ns, 9)).To(Equal(before), "each Metric's uid and remote id")
		// The fresh install below starts from here: CRDs and Metrics kept.
		helm(ctx, "uninstall", release, "--namespace", helmNS, "--wait", "--timeout=2m")
	})

	It("runs the Helm chart with defaults the same way", func() {
		ctx := ctxFor(5 * time.Minute)
		restrictedNamespace(ctx, helmNS)
		helm(ctx, "install", release, chartDir, "--namespace", helmNS, "--wait", "--timeout=3m")
		expectHealthyInstall(ctx, helmNS, release, img, helmBindings)
		// Without the REST server the manager creates none of the kinds.
		for _, kind := range []string{"metrics", "testsetdeletions", "testcasedeletions"} {
			Expect(may(ctx, helmNS, release, "create", kind)).To(BeFalse(), "create %s", kind)
		}
	})

	It("reconciles the samples standalone", func() {
		ctx := ctxFor(3 * time.Minute)
		ns := "samples"
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		// The sample Secret's key is a placeholder the manager refuses.
		Expect(k8s.Create(ctx, framework.KeySecret(ns, "evaluation-api-key", framework.NewKey("samples")))).To(Succeed())
		kubectl(ctx, nil, "apply", "-n", ns, "-f", "config/samples")
		kubectl(ctx, nil, "wait", "-n", ns, "--for=condition=Ready", "--timeout=2m",
			"metrics", "--all")
		kubectl(ctx, nil, "wait", "-n", ns, "--for=condition=Ready", "--timeout=2m",
			"testsetdeletions", "--all")
		kubectl(ctx, nil, "wait", "-n", ns, "--for=condition=Ready", "--timeout=2m",
			"testcasedeletions", "--all")
	})

	It("serves the REST API with two replicas, and reaches a service beside the cluster", func() {
		ctx := ctxFor(5 * time.Minute)
		helm(ctx, "upgrade", release, chartDir, "--namespace", helmNS, "--reuse-values", "--wait", "--timeout=3m",
			"--set", "replicaCount=2,serveApi.enabled=true",
			// The fake service listens on the node's own address.
			"--set-json", `extraArgs=["--allow-private-service-addresses"]`)
		expectHealthyInstall(ctx, helmNS, release, img, helmBindings)

		for _, kind := range []string{"metrics", "testsetdeletions", "testcasedeletions"} {
			Expect(may(ctx, helmNS, release, "create", kind)).To(BeTrue(), "create %s", kind)
		}

		ns := fakeNamespace(ctx)
		m := framework.NewMetric(ns, "reached-from-the-pod", 0)
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			status, reason := framework.Ready(m)
			g.Expect(status).To(Equal(metav1.ConditionTrue), reason)
			g.Expect(m.Status.ID).To(HavePrefix("met_"))
		}).Should(Succeed())
		_, ok := fake.Metric(m.Status.ID)
		Expect(ok).To(BeTrue(), "the fake service holds %s", m.Status.ID)
	})

	It("answers the SDKs' calls through its ClusterIP Service", func() {
		ctx := ctxFor(2 * time.Minute)
		key := framework.NewKey("cluster-rest")
		_, err := framework.NewNamespace(ctx, k8s, "team-rest", key)
		Expect(err).NotTo(HaveOccurred())
		api := restAPI(ctx, key)

		// The key's Secret reaches the pods' informers shortly after it exists.
		var created map[string]any
		Eventually(func(g Gomega) {
			code, body := api.call(ctx, http.MethodPost, "/projects/proj_cluster/metrics",
				`{"name":"Grounded","evalType":"heuristic","outputType":"boolean"}`)
			g.Expect(code).To(Equal(http.StatusCreated), body)
			g.Expect(json.Unmarshal([]byte(body), &created)).To(Succeed())
		}).WithTimeout(30 * time.Second).Should(Succeed())
		id := created["id"].(string)

		code, body := api.call(ctx, http.MethodGet, "/projects/proj_cluster/metrics?limit=10", "")
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(body).To(ContainSubstring(id))
		code, body = api.call(ctx, http.MethodGet, "/metrics/"+id, "")
		Expect(code).To(Equal(http.StatusOK), body)
		code, body = api.call(ctx, http.MethodPatch, "/metrics/"+id,
			`{"evalType":"heuristic","outputType":"boolean","description":"patched through the Service"}`)
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(body).To(ContainSubstring("patched through the Service"))
		code, body = api.call(ctx, http.MethodDelete, "/metrics/"+id, "")
		Expect(code).To(Equal(http.StatusOK), body)
		code, _ = api.call(ctx, http.MethodGet, "/metrics/"+id, "")
		Expect(code).To(Equal(http.StatusNotFound))
	})

	It("answers /metrics through its Service only to a token the shipped RBAC allows", func() {
		ctx := ctxFor(2 * time.Minute)
		for _, sa := range []string{"scraper", "stranger"} {
			Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: helmNS, Name: sa}})).To(Succeed())
		}
		kubectl(ctx, nil, "create", "clusterrolebinding", "scraper-metrics-reader",
			"--clusterrole=eval-operator-metrics-reader", "--serviceaccount="+helmNS+":scraper")
		DeferCleanup(func(ctx context.Context) {
			kubectl(ctx, nil, "delete", "clusterrolebinding", "scraper-metrics-reader")
		})
		var svc corev1.Service
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: helmNS, Name: release + "-metrics"}, &svc)).To(Succeed())
		url := "https://" + net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port))) + "/metrics"
		scrape := func(token string) (int, string) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			Expect(err).NotTo(HaveOccurred())
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			// The manager's metrics certificate is self-signed unless cert-manager gives one.
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed, see above
			res, err := c.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer func() { _ = res.Body.Close() }()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		token := func(sa string) string {
			return strings.TrimSpace(string(kubectl(ctx, nil, "create", "token", sa, "-n", helmNS)))
		}
		Eventually(func(g Gomega) {
			code, body := scrape(token("scraper"))
			g.Expect(code).To(Equal(http.StatusOK))
			g.Expect(body).To(ContainSubstring("controller_runtime_reconcile_total"))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		code, _ := scrape("")
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, _ = scrape(token("stranger"))
		Expect(code).To(Equal(http.StatusForbidden))
	})

	It("fails over to the other replica while 200 Metrics are created: no duplicate, none left for a person", func() {
		ctx := ctxFor(8 * time.Minute)
		ns := fakeNamespace(ctx)
		before := fake.Creates()
		const n = 200
		var wg sync.WaitGroup
		var made atomic.Int32
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			_, _, err := framework.Parallel(ctx, n, 8, func(ctx context.Context, i int) error {
				defer made.Add(1)
				return k8s.Create(ctx, framework.NewMetric(ns, fmt.Sprintf("failover-%03d", i), i))
			})
			Expect(err).NotTo(HaveOccurred())
		}()
		Eventually(func() int { return fake.Creates() - before }).Should(BeNumerically(">=", 20))

		leader := leaseHolder(ctx)
		pod := strings.SplitN(leader, "_", 2)[0]
		killed := time.Now()
		Expect(k8s.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: helmNS, Name: pod}})).To(Succeed())
		var next string
		Eventually(func() string {
			next = leaseHolder(ctx)
			return strings.SplitN(next, "_", 2)[0]
		}).WithTimeout(2 * time.Minute).ShouldNot(Or(Equal(pod), BeEmpty()))
		took := time.Since(killed)
		GinkgoWriter.Printf("failover: leader %s deleted, %s leads after %.1f s\n", pod, next, took.Seconds())
		AddReportEntry("failover seconds", fmt.Sprintf("%.1f", took.Seconds()))
		// The stopping leader releases the Lease; were it killed, the
		// Lease's 15 s would pass first.
		Expect(took).To(BeNumerically("<", 15*time.Second), "a new leader within the Lease's duration")
		wg.Wait()

		Eventually(func(g Gomega) {
			var list v1alpha1.MetricList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			g.Expect(list.Items).To(HaveLen(n))
			for i := range list.Items {
				status, reason := framework.Ready(&list.Items[i])
				g.Expect(reason).NotTo(Equal(v1alpha1.ReasonCreateOutcomeUnknown), list.Items[i].Name)
				g.Expect(status).To(Equal(metav1.ConditionTrue), "%s: %s", list.Items[i].Name, reason)
			}
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(fake.Creates()-before).To(Equal(n), "creates sent to the service")
	})

	It("rolls out a new image build under steady REST traffic without a failed request", func() {
		ctx := ctxFor(6 * time.Minute)
		key := framework.NewKey("cluster-rollout")
		_, err := framework.NewNamespace(ctx, k8s, "team-rollout", key)
		Expect(err).NotTo(HaveOccurred())
		api := restAPI(ctx, key)
		Eventually(func() int {
			code, _ := api.call(ctx, http.MethodGet, "/projects/proj_rollout/metrics", "")
			return code
		}).WithTimeout(30 * time.Second).Should(Equal(http.StatusOK))

		// A second build: the same image under another tag, which changes
		// the pod template, so the Deployment rolls.
		next := img + "-rollout-" + framework.RandomHex(3)
		ctr(ctx, "images", "tag", "--force", img, next)
		tag := next[strings.LastIndex(next, ":")+1:]

		stop := make(chan struct{})
		var sent, failed atomic.Int32
		var failures sync.Map
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			// A steady client: a create and a delete every 200 ms, well
			// within the tenant's write rate.
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				code, body := api.call(ctx, http.MethodPost, "/projects/proj_rollout/metrics",
					fmt.Sprintf(`{"name":"rollout %d","evalType":"heuristic","outputType":"boolean"}`, i))
				sent.Add(1)
				if code != http.StatusCreated {
					failed.Add(1)
					failures.Store(i, fmt.Sprintf("%d %s", code, body))
					continue
				}
				var m map[string]any
				if json.Unmarshal([]byte(body), &m) == nil {
					code, body = api.call(ctx, http.MethodDelete, fmt.Sprintf("/metrics/%v", m["id"]), "")
					sent.Add(1)
					if code != http.StatusOK {
						failed.Add(1)
						failures.Store(-i, fmt.Sprintf("DELETE %d %s", code, body))
					}
				}
			}
		}()
		time.Sleep(3 * time.Second)
		helm(ctx, "upgrade", release, chartDir, "--namespace", helmNS, "--reuse-values", "--wait", "--timeout=4m",
			"--set", "image.tag="+tag)
		time.Sleep(5 * time.Second)
		close(stop)
		wg.Wait()
		failures.Range(func(k, v any) bool { GinkgoWriter.Printf("request %v: %v\n", k, v); return true })
		GinkgoWriter.Printf("rolling update: %d requests, %d failed\n", sent.Load(), failed.Load())
		AddReportEntry("rolling update requests", fmt.Sprintf("%d sent, %d failed", sent.Load(), failed.Load()))
		Expect(failed.Load()).To(BeZero())
		Expect(sent.Load()).To(BeNumerically(">", 20))
		expectHealthyInstall(ctx, helmNS, release, next, helmBindings)
	})

	canaries()

	It("uninstalls, keeping the CRDs and so every Metric, as the docs say", func() {
		ctx := ctxFor(3 * time.Minute)
		helm(ctx, "uninstall", release, "--namespace", helmNS, "--wait", "--timeout=2m")
		var pods corev1.PodList
		Eventually(func(g Gomega) {
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(helmNS))).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).Should(Succeed())
		for _, resource := range kinds.Resources() {
			kubectl(ctx, nil, "get", "crd", resource+"."+v1alpha1.GroupVersion.Group)
		}
		var metrics v1alpha1.MetricList
		Expect(k8s.List(ctx, &metrics, client.InNamespace("samples"))).To(Succeed())
		Expect(metrics.Items).To(HaveLen(9))
		out := string(kubectl(ctx, nil, "get", "clusterroles,clusterrolebindings", "-o", "name"))
		Expect(out).NotTo(ContainSubstring("eval-operator-manager"))
	})
})

// readyMetrics waits until namespace holds n Metrics, all Ready, and
// returns each one's uid and remote id by name.
func readyMetrics(ctx context.Context, namespace string, n int) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	Eventually(func(g Gomega) {
		var list v1alpha1.MetricList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		for i := range list.Items {
			m := &list.Items[i]
			status, reason := framework.Ready(m)
			g.Expect(status).To(Equal(metav1.ConditionTrue), "%s: %s", m.Name, reason)
			g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation), m.Name)
			out[m.Name] = string(m.UID) + " " + m.Status.ID
		}
	}).Should(Succeed())
	return out
}

// fakeNamespace makes a namespace whose default EvaluationService is the
// fake service on the node address, with its key.
func fakeNamespace(ctx context.Context) string {
	GinkgoHelper()
	ns, err := framework.NewNamespace(ctx, k8s, "team-fake", fakeKey)
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.Create(ctx, &v1alpha1.EvaluationService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
		Spec: v1alpha1.EvaluationServiceSpec{ServiceConnection: v1alpha1.ServiceConnection{
			URL: v1alpha1.ServiceURL(fake.URL()),
		}},
	})).To(Succeed())
	return ns
}

// leaseHolder is the leader election Lease's holder, "<pod>_<uid>".
func leaseHolder(ctx context.Context) string {
	GinkgoHelper()
	var l coordinationv1.Lease
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: helmNS, Name: leaseName}, &l)).To(Succeed())
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// rest calls the REST server through its ClusterIP Service with a key.
type rest struct{ base, key string }

func restAPI(ctx context.Context, key string) rest {
	GinkgoHelper()
	var svc corev1.Service
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: helmNS, Name: release + "-api"}, &svc)).To(Succeed())
	return rest{base: "http://" + net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port))) + "/api/v2", key: key}
}

// call sends one request as the SDKs do and returns the status and body; a
// transport error is status 0 with the error as the body.
func (r rest) call(ctx context.Context, method, path, body string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, bytes.NewBufferString(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+r.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
