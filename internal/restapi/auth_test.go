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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/test/framework"
)

// expectUnauthorized expects exactly the API's 401 body.
func expectUnauthorized(rep reply) {
	GinkgoHelper()
	Expect(rep.status).To(Equal(http.StatusUnauthorized))
	Expect(rep.header.Get("WWW-Authenticate")).To(HavePrefix(`Bearer realm="eval-operator"`), "RFC 6750")
	Expect(rep.body).To(MatchJSON(`{"code":"UNAUTHORIZED","message":"` + evalapi.MessageUnauthorized + `","details":{}}`))
}

var _ = Describe("Authentication", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	// Each operation, with a valid body, so only the key decides.
	operations := []request{
		{method: http.MethodPost, path: projectPath, body: variantBody("human", "int")},
		{method: http.MethodPost, path: BasePath + "/testcases/bulk-delete", body: `{"ids":["tc-1"]}`},
		{method: http.MethodDelete, path: BasePath + "/testsets/ts-1"},
	}

	expectNothingCreated := func(namespace string) {
		GinkgoHelper()
		Expect(metricsIn(namespace)).To(BeEmpty())
		Expect(deletionsIn(namespace)).To(BeZero())
	}

	DescribeTable("answers 401 and creates nothing",
		func(authorization func(tenant) string) {
			for _, rq := range operations {
				rq.header = map[string]string{"Authorization": authorization(t)}
				expectUnauthorized(send(rq))
			}
			expectNothingCreated(t.namespace)
		},
		Entry("without a key", func(tenant) string { return "" }),
		Entry("with another scheme", func(t tenant) string { return "Basic " + t.key }),
		Entry("with an empty bearer", func(tenant) string { return "Bearer " }),
		Entry("with a key that is not an ak_ key", func(tenant) string { return "Bearer sk_" + framework.RandomHex(16) }),
		Entry("with an unknown key", func(tenant) string { return "Bearer " + framework.NewKey("unknown") }),
		Entry("with the key's prefix only", func(t tenant) string { return "Bearer " + t.key[:len(t.key)-1] }),
		Entry("with the key and more", func(t tenant) string { return "Bearer " + t.key + "x" }),
	)

	It("accepts the scheme in any case", func() {
		rep := send(request{method: http.MethodPost, path: projectPath, body: variantBody("human", "int"),
			header: map[string]string{"Authorization": "bearer " + t.key}})
		Expect(rep.status).To(Equal(http.StatusCreated))
	})

	It("stops accepting a key as soon as its Secret is deleted", func() {
		Expect(postMetric(t, variantBody("human", "int")).status).To(Equal(http.StatusCreated))
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: t.secret}}
		Expect(h.k8s.Delete(context.Background(), secret)).To(Succeed())
		Expect(h.waitKey(context.Background(), t.key, false)).To(Succeed())
		expectUnauthorized(postMetric(t, variantBody("human", "int")))
		Expect(metricsIn(t.namespace)).To(HaveLen(1))
	})

	It("stops accepting a key as soon as its Secret loses the label", func() {
		var secret corev1.Secret
		Expect(h.k8s.Get(context.Background(), client.ObjectKey{Namespace: t.namespace, Name: t.secret}, &secret)).To(Succeed())
		secret.Labels[evaluationv1alpha1.APIKeyLabel] = "false"
		Expect(h.k8s.Update(context.Background(), &secret)).To(Succeed())
		Expect(h.waitKey(context.Background(), t.key, false)).To(Succeed())
		expectUnauthorized(postMetric(t, variantBody("human", "int")))
	})

	It("accepts a rotated key and refuses the old one", func() {
		var secret corev1.Secret
		Expect(h.k8s.Get(context.Background(), client.ObjectKey{Namespace: t.namespace, Name: t.secret}, &secret)).To(Succeed())
		old := t.key
		t.key = framework.NewKey("restapi")
		secret.Data[evaluationv1alpha1.DefaultAPIKeySecretKey] = []byte(t.key)
		Expect(h.k8s.Update(context.Background(), &secret)).To(Succeed())
		Expect(h.waitKey(context.Background(), t.key, true)).To(Succeed())
		Expect(postMetric(t, variantBody("human", "int")).status).To(Equal(http.StatusCreated))
		expectUnauthorized(postMetric(tenant{key: old}, variantBody("human", "int")))
	})

	It("ignores Secrets without the label", func() {
		key := framework.NewKey("restapi")
		Expect(h.k8s.Create(context.Background(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "unlabelled"},
			Data:       map[string][]byte{evaluationv1alpha1.DefaultAPIKeySecretKey: []byte(key)},
		})).To(Succeed())
		expectUnauthorized(postMetric(tenant{key: key}, variantBody("human", "int")))
	})

	It("refuses a key held in two namespaces, since it does not say which one it grants", func() {
		other := newTenant()
		Expect(h.k8s.Create(context.Background(), framework.KeySecret(other.namespace, "copy", t.key))).To(Succeed())
		Eventually(func() error { _, _, err := h.server.keys.Lookup(t.key); return err }).Should(MatchError(tenancy.ErrAmbiguousKey))
		expectUnauthorized(postMetric(t, variantBody("human", "int")))
		expectNothingCreated(t.namespace)
		expectNothingCreated(other.namespace)
	})

	It("creates the resources in the key's namespace, with the key's Secret", func() {
		other := newTenant()
		Expect(postMetric(other, variantBody("human", "int")).status).To(Equal(http.StatusCreated))
		Expect(metricsIn(t.namespace)).To(BeEmpty())
		Expect(metricsIn(other.namespace)).To(ConsistOf(HaveField("Spec.APIKeySecretRef.Name", other.secret)))
	})
})

// deletionsIn counts the TestsetDeletions and TestcaseDeletions of namespace.
func deletionsIn(namespace string) int {
	GinkgoHelper()
	var ts evaluationv1alpha1.TestsetDeletionList
	Expect(h.k8s.List(context.Background(), &ts, client.InNamespace(namespace))).To(Succeed())
	var tc evaluationv1alpha1.TestcaseDeletionList
	Expect(h.k8s.List(context.Background(), &tc, client.InNamespace(namespace))).To(Succeed())
	return len(ts.Items) + len(tc.Items)
}
