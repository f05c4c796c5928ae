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
	"slices"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
)

// laggingCache is the cache of a replica whose watch has not yet brought
// the Metric named hidden (its lists leave it out), nor any change of the
// EvaluationRun stale since it was stored (its lists give that copy).
type laggingCache struct {
	cache.Cache
	hidden atomic.Pointer[string]
	stale  atomic.Pointer[evaluationv1alpha1.EvaluationRun]
}

// IndexField does nothing: the shared cache beneath has the indexes.
func (c *laggingCache) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

func (c *laggingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Cache.List(ctx, list, opts...); err != nil {
		return err
	}
	if ml, ok := list.(*evaluationv1alpha1.MetricList); ok {
		if name := c.hidden.Load(); name != nil {
			ml.Items = slices.DeleteFunc(ml.Items, func(m evaluationv1alpha1.Metric) bool { return m.Name == *name })
		}
	}
	if rl, ok := list.(*evaluationv1alpha1.EvaluationRunList); ok {
		if stale := c.stale.Load(); stale != nil {
			for i := range rl.Items {
				if rl.Items[i].UID == stale.UID {
					rl.Items[i] = *stale.DeepCopy()
				}
			}
		}
	}
	return nil
}

var _ = Describe("Several replicas behind one Service", func() {
	It("finds a Metric another replica just created, though this one's watch trails", func(ctx SpecContext) {
		lag := &laggingCache{Cache: h.mgr.GetCache()}
		trailing, url, err := addServer(h.mgr, 30*time.Second, GinkgoLogr, unlimited,
			func(o *Options) { o.Cache = lag })
		Expect(err).NotTo(HaveOccurred())
		t := newTenant()
		Eventually(func() bool { _, ok, _ := trailing.keys.Lookup(t.key); return ok }).Should(BeTrue())

		name := "from-kubectl"
		lag.hidden.Store(&name)
		id := kubectlMetric(t) // as the replica that answered the create would see it
		answer := make(chan reply, 1)
		go func() {
			defer GinkgoRecover()
			answer <- sendTo(url, request{method: http.MethodGet, path: metricPath(id), key: t.key})
		}()
		Consistently(answer).WithTimeout(300 * time.Millisecond).ShouldNot(Receive())

		// The watch event arrives.
		lag.hidden.Store(nil)
		m := metricByID(t, id)
		Expect(m).NotTo(BeNil())
		patch := client.MergeFrom(m.DeepCopy())
		m.Labels = map[string]string{"seen": "late"}
		Expect(h.k8s.Patch(ctx, m, patch)).To(Succeed())
		var rep reply
		Eventually(answer).Should(Receive(&rep))
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
	})

	It("scores a record another replica just counted, though this one's watch trails", func(ctx SpecContext) {
		lag := &laggingCache{Cache: h.mgr.GetCache()}
		_, url, err := addServer(h.mgr, 30*time.Second, GinkgoLogr, unlimited, func(o *Options) { o.Cache = lag })
		Expect(err).NotTo(HaveOccurred())
		t := newTenant()
		metricID := createdID(t, "heuristic", "boolean")
		rep := send(request{method: http.MethodPost, path: runsPath, key: t.key, body: `{"metricIds":["` + metricID + `"]}`})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		runID := runOf(rep).ID
		var l evaluationv1alpha1.EvaluationRunList
		Expect(h.k8s.List(ctx, &l, client.InNamespace(t.namespace))).To(Succeed())
		Expect(l.Items).To(HaveLen(1))
		lag.stale.Store(&l.Items[0]) // no record yet, as the trailing replica sees it

		rep = postRecord(t, runID, "q0") // to the other replica
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		score := sendTo(url, request{method: http.MethodPut, path: BasePath + "/records/" + runID + ".1/scores/" + metricID,
			key: t.key, body: `{"score":{"value":true}}`})
		Expect(score.status).To(Equal(http.StatusOK), "body: %s", score.body)
		unknown := sendTo(url, request{method: http.MethodPut, path: BasePath + "/records/" + runID + ".2/scores/" + metricID,
			key: t.key, body: `{"score":{"value":true}}`})
		Expect(unknown.status).To(Equal(http.StatusNotFound), "body: %s", unknown.body)
	})
})
