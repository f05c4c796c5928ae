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
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/rollout"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
)

// expectQuotaRefusal asserts a 403 QUOTA_EXCEEDED that no SDK retries.
func expectQuotaRefusal(rep reply) {
	GinkgoHelper()
	Expect(rep.status).To(Equal(http.StatusForbidden), "body: %s", rep.body)
	Expect(apiErrorOf(rep)["code"]).To(Equal(apierror.CodeQuotaExceeded))
	Expect(rep.header.Get(apierror.ShouldRetryHeader)).To(Equal("false"))
	Expect(rep.header.Get("Retry-After")).To(BeEmpty())
}

var _ = Describe("A tenant's budget", func() {
	It("refuses a create past the namespace's budget of the kind before writing, and counts kinds apart", func() {
		_, url, err := addServer(h.mgr, 30*time.Second, ctrl.Log, unlimited, func(o *Options) {
			o.Budget = tenancy.Budget{"Metric": 2, "Testset": 1, "TestsetDeletion": 1, "TestcaseDeletion": 1}
		})
		Expect(err).NotTo(HaveOccurred())
		t := newTenant()
		post := func(path, body string) reply {
			return sendTo(url, request{method: http.MethodPost, path: path, key: t.key, body: body})
		}
		Eventually(func() int { return post(projectPath, variantBody("human", "int")).status }).Should(Equal(http.StatusCreated))
		Expect(post(projectPath, variantBody("human", "int")).status).To(Equal(http.StatusCreated))
		// The budget is counted in the cache: a create sent before the cache
		// holds both would be served.
		Eventually(func() (int, error) { return cachedLen(t.namespace, &evaluationv1alpha1.MetricList{}) }).Should(Equal(2))
		expectQuotaRefusal(post(projectPath, variantBody("human", "int")))
		Expect(metricsIn(t.namespace)).To(HaveLen(2), "nothing written past the budget")

		bulk := BasePath + "/testcases/bulk-delete"
		Expect(post(bulk, `{"ids":["a"]}`).status).To(Equal(http.StatusOK), "another kind, another budget")
		Eventually(func() (int, error) { return cachedLen(t.namespace, &evaluationv1alpha1.TestcaseDeletionList{}) }).Should(Equal(1))
		expectQuotaRefusal(post(bulk, `{"ids":["b"]}`))
		Expect(cachedLen(t.namespace, &evaluationv1alpha1.TestcaseDeletionList{})).To(Equal(1), "nothing written past the budget")

		Expect(post(testsetsPath, qaTestset).status).To(Equal(http.StatusCreated))
		Eventually(func() (int, error) { return cachedLen(t.namespace, &evaluationv1alpha1.TestsetList{}) }).Should(Equal(1))
		expectQuotaRefusal(post(testsetsPath, qaTestset))
		Expect(cachedLen(t.namespace, &evaluationv1alpha1.TestsetList{})).To(Equal(1), "nothing written past the budget")
	})

	It("holds the SystemVersions the gates upsert to the namespace's budget: no run past it", func(ctx SpecContext) {
		_, url, err := addServer(h.mgr, 30*time.Second, ctrl.Log, unlimited, func(o *Options) {
			o.Budget = tenancy.Budget{"SystemVersion": 1}
		})
		Expect(err).NotTo(HaveOccurred())
		t := newTenant()
		Expect(h.k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "podinfo-gate"},
			Data: map[string]string{"evaluationrun.yaml": gateTemplate}})).To(Succeed())
		Expect(h.k8s.Create(ctx, &evaluationv1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "podinfo"},
			Spec: evaluationv1alpha1.SystemSpec{ProjectID: "proj-1", Name: "podinfo", Config: apiextensionsv1.JSON{Raw: []byte(`{}`)}}})).
			To(Succeed())
		gate := func(revision string) reply { // outside the OpenAPI document, which sendTo checks answers against
			rep, err := h.do(ctx, url, request{method: http.MethodPost, path: rollout.RouteAnalysis, key: t.key,
				body: `{"name":"podinfo","revision":"` + revision + `","template":"podinfo-gate","system":"podinfo"}`})
			Expect(err).NotTo(HaveOccurred())
			return rep
		}
		Eventually(func() int { return gate("a1").status }).Should(Equal(http.StatusConflict), "pending")
		Eventually(func() (int, error) { return cachedLen(t.namespace, &evaluationv1alpha1.SystemVersionList{}) }).Should(Equal(1))
		expectQuotaRefusal(gate("b2"))
		Expect(versionsIn(t.namespace)).To(HaveLen(1), "nothing written past the budget")
		Expect(runsIn(t.namespace)).To(HaveLen(1), "no run for the release without its version")
	})

	It("counts the namespace's objects applied by kubectl or GitOps, not only its own creates", func(ctx SpecContext) {
		_, url, err := addServer(h.mgr, 30*time.Second, ctrl.Log, unlimited, func(o *Options) {
			o.Budget = tenancy.Budget{"Metric": 2}
		})
		Expect(err).NotTo(HaveOccurred())
		t := newTenant()
		for range 2 {
			Expect(h.k8s.Create(ctx, apiMetric(t))).To(Succeed())
		}
		Eventually(func() (int, error) { return cachedLen(t.namespace, &evaluationv1alpha1.MetricList{}) }).Should(Equal(2))
		expectQuotaRefusal(sendTo(url, request{method: http.MethodPost, path: projectPath, key: t.key,
			body: variantBody("human", "int")}))
		Expect(metricsIn(t.namespace)).To(HaveLen(2), "nothing written past the budget")
	})

	It("counts creates sent together, and those the cache does not show yet: never one past the budget", func() {
		_, url, err := addServer(h.mgr, 30*time.Second, ctrl.Log, unlimited, func(o *Options) {
			o.Budget = tenancy.Budget{"Metric": 3}
		})
		Expect(err).NotTo(HaveOccurred())
		t := newTenant()
		Eventually(func() int {
			return sendTo(url, request{method: http.MethodGet, path: projectPath, key: t.key}).status
		}).Should(Equal(http.StatusOK))
		const sent = 12
		statuses := make(chan int, sent)
		var wg sync.WaitGroup
		for range sent {
			wg.Go(func() {
				defer GinkgoRecover()
				statuses <- sendTo(url, request{method: http.MethodPost, path: projectPath, key: t.key,
					body: variantBody("human", "int")}).status
			})
		}
		wg.Wait()
		close(statuses)
		counts := map[int]int{}
		for s := range statuses {
			counts[s]++
		}
		Expect(counts).To(Equal(map[int]int{http.StatusCreated: 3, http.StatusForbidden: sent - 3}))
		Expect(metricsIn(t.namespace)).To(HaveLen(3))
	})

	It("lets a namespace's creates overlap: only the check and the reservation take turns", func() {
		slow := &slowCreates{Client: h.mgr.GetClient(), delay: 200 * time.Millisecond}
		_, url, err := addServer(h.mgr, 30*time.Second, ctrl.Log, unlimited, func(o *Options) {
			o.Client = slow
		})
		Expect(err).NotTo(HaveOccurred())
		t := newTenant()
		Eventually(func() int {
			return sendTo(url, request{method: http.MethodGet, path: projectPath, key: t.key}).status
		}).Should(Equal(http.StatusOK))
		const sent = 32
		var wg sync.WaitGroup
		for range sent {
			wg.Go(func() {
				defer GinkgoRecover()
				Expect(sendTo(url, request{method: http.MethodPost, path: projectPath, key: t.key,
					body: variantBody("human", "int")}).status).To(Equal(http.StatusCreated))
			})
		}
		wg.Wait()
		Expect(metricsIn(t.namespace)).To(HaveLen(sent))
		// One at a time, the API server would never see two creates of the
		// namespace in flight; each waits 200 ms there, so they pile up.
		Expect(slow.peak()).To(BeNumerically(">=", sent/4), "creates of one namespace in flight at once")
	})

	It("answers a full ResourceQuota with a 403, not a 500", func() {
		t := newTenant()
		ctx := context.Background()
		hard := corev1.ResourceList{"count/metrics.evaluation.eval-operator.dev": resource.MustParse("0")}
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "tenant"},
			Spec: corev1.ResourceQuotaSpec{Hard: hard}}
		Expect(h.k8s.Create(ctx, q)).To(Succeed())
		// envtest runs no quota controller: write the status it would.
		q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: hard}
		Expect(h.k8s.Status().Update(ctx, q)).To(Succeed())
		// The API server's quota admission reads quotas from its own cache:
		// wait until it refuses a dry-run create, so the POST meets the quota.
		Eventually(func() error {
			return h.k8s.Create(ctx, benchMetric(t), client.DryRunAll)
		}).Should(MatchError(ContainSubstring("exceeded quota")))

		rep := postMetric(t, variantBody("human", "int"))
		expectQuotaRefusal(rep)
		Expect(apiErrorOf(rep)["message"]).To(ContainSubstring("exceeded quota"))
		Expect(metricsIn(t.namespace)).To(BeEmpty())
	})

	It("answers a namespace being deleted with a 403 that says so", func() {
		t := newTenant()
		ctx := context.Background()
		// A finalizer keeps the namespace terminating: envtest deletes nothing in it.
		ns := &corev1.Namespace{}
		Expect(h.k8s.Get(ctx, client.ObjectKey{Name: t.namespace}, ns)).To(Succeed())
		Expect(h.k8s.Delete(ctx, ns)).To(Succeed())
		Eventually(func() int { return postMetric(t, variantBody("human", "int")).status }).Should(Equal(http.StatusForbidden))
		rep := postMetric(t, variantBody("human", "int"))
		Expect(apiErrorOf(rep)["code"]).To(Equal(apierror.CodeForbidden))
		Expect(apiErrorOf(rep)["message"]).To(ContainSubstring("being terminated"))
		Expect(rep.header.Get(apierror.ShouldRetryHeader)).To(Equal("false"))
	})
})

// cachedLen is how many objects of list's kind the manager's cache holds in
// namespace, the count the budget is checked against.
func cachedLen(namespace string, list client.ObjectList) (int, error) {
	err := h.mgr.GetCache().List(context.Background(), list, client.InNamespace(namespace))
	return meta.LenList(list), err
}

// slowCreates is a client whose creates take delay at the API server, and
// which records how many were in flight at once.
type slowCreates struct {
	client.Client
	delay time.Duration

	mu             sync.Mutex
	inFlight, most int
}

func (c *slowCreates) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.mu.Lock()
	c.inFlight++
	c.most = max(c.most, c.inFlight)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}()
	time.Sleep(c.delay)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *slowCreates) peak() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.most
}
