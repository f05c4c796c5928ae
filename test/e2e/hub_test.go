//go:build e2e

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

package e2e

import (
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

// A hub: one cluster's operator serves the API from its REST server, and
// other clusters' operators use it as their Evaluation Service.
var _ = Describe("An operator whose service is another operator's REST server", func() {
	It("connects, and creates, updates and deletes its Metrics in the hub's namespace", func(ctx SpecContext) {
		hubNS := newNamespace(ctx, "hub")
		key := framework.NewKey("hub")
		createKeySecret(ctx, hubNS, "spoke-key", key, true)
		addr, err := framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		startManager(ctx, "hub", "--serve-api="+addr)

		dir, err := os.MkdirTemp("", "eval-operator-e2e-spoke-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, dir)
		cp, err := framework.StartControlPlane(dir)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cp.Stop)
		spoke, err := cp.Client()
		Expect(err).NotTo(HaveOccurred())
		const spokeNS = "team-a"
		Expect(spoke.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: spokeNS}})).To(Succeed())
		Expect(spoke.Create(ctx, framework.KeySecret(spokeNS, "hub-key", key))).To(Succeed())
		svc := &v1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{Name: "hub"},
			Spec: v1alpha1.ClusterEvaluationServiceSpec{
				ServiceConnection: v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL("http://" + addr + "/api/v2")},
				APIKeySecretRef: &v1alpha1.NamespacedSecretKeySelector{Namespace: spokeNS,
					SecretKeySelector: v1alpha1.SecretKeySelector{Name: "hub-key"}}}}
		Expect(spoke.Create(ctx, svc)).To(Succeed())
		startManagerOn(ctx, cp, "spoke", nil)

		// The probe's GET /projects is served: the connection is usable.
		Eventually(func(g Gomega) string {
			g.Expect(spoke.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
			c := meta.FindStatusCondition(svc.Status.Conditions, v1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			return c.Reason + ": " + c.Message
		}).Should(HavePrefix(v1alpha1.ReasonConnected))

		m := framework.NewMetric(spokeNS, "faithfulness", 0)
		m.Spec.APIKeySecretRef = nil
		m.Spec.ServiceRef = &v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: svc.Name}
		Expect(spoke.Create(ctx, m)).To(Succeed())
		Eventually(func(g Gomega) string {
			g.Expect(spoke.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return readyReason(m)
		}).Should(Equal(v1alpha1.ReasonCreated))
		hubCopy := func(g Gomega) *v1alpha1.Metric {
			var list v1alpha1.MetricList
			g.Expect(k8s.List(ctx, &list, client.InNamespace(hubNS))).To(Succeed())
			for i := range list.Items {
				if list.Items[i].RecordedID() == m.Status.ID {
					return &list.Items[i]
				}
			}
			return nil
		}
		Eventually(hubCopy).Should(HaveField("Spec.Name", m.Spec.Name), "the hub holds the spoke's Metric")

		Expect(spoke.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		m.Spec.Guidelines = ptr.To[v1alpha1.Text]("edited on the spoke")
		Expect(spoke.Update(ctx, m)).To(Succeed())
		Eventually(hubCopy).Should(HaveField("Spec.Guidelines", HaveValue(Equal(v1alpha1.Text("edited on the spoke")))))

		Expect(spoke.Delete(ctx, m)).To(Succeed())
		Eventually(hubCopy).Should(BeNil(), "deleting the spoke's Metric deleted the hub's")
	})
})
