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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// projectsService is a fake service that serves GET /api/v2/projects as
// the reference describes it: 200 with a page for key, 401 with the
// service's ApiError otherwise, or refuse's answer when set.
type projectsService struct {
	*httptest.Server
	calls  atomic.Int32
	refuse atomic.Pointer[string]
}

func newProjectsService(key string) *projectsService {
	GinkgoHelper()
	s := &projectsService{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method != http.MethodGet || r.URL.Path != "/api/v2/projects" || r.URL.Query().Get("limit") != "1":
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": "NOT_FOUND", "message": "no such route", "details": map[string]any{}})
		case r.Header.Get("Authorization") != "Bearer "+key:
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": "UNAUTHORIZED",
				"message": "The authentication token is invalid or missing", "details": map[string]any{}})
		case s.refuse.Load() != nil:
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": "VALIDATION_ERROR", "message": *s.refuse.Load(), "details": map[string]any{}})
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"data": []any{map[string]any{"id": "p1", "name": "P", "description": nil}},
				"nextCursor": nil, "hasMore": false})
		}
	}))
	DeferCleanup(s.Close)
	return s
}

func (s *projectsService) url() v1alpha1.ServiceURL { return v1alpha1.ServiceURL(s.URL + "/api/v2") }

// serviceReady reads svc's Ready condition.
func serviceReady(svc v1alpha1.ServiceObject) func(Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		return meta.FindStatusCondition(svc.GetServiceStatus().Conditions, v1alpha1.ConditionReady)
	}
}

func namespacedService(ns, name string, conn v1alpha1.ServiceConnection) *v1alpha1.EvaluationService {
	return &v1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.EvaluationServiceSpec{ServiceConnection: conn,
			APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: secretName}}}
}

var _ = Describe("EvaluationService and ClusterEvaluationService", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace()
		Expect(k8s.Create(rootCtx, apiKeySecret(ns, testKey))).To(Succeed())
	})

	It("are Ready Standalone without a call, and Connected once the probe answers with the key", func() {
		startManager(managerOptions{Options: controller.Options{Defaults: remote.Defaults{AllowPrivateServiceAddresses: true}}})
		sandbox := namespacedService(ns, "sandbox", v1alpha1.ServiceConnection{Standalone: &v1alpha1.StandaloneService{}})
		Expect(k8s.Create(rootCtx, sandbox)).To(Succeed())
		Eventually(serviceReady(sandbox)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonStandalone))
		Expect(sandbox.Status.Endpoint).To(Equal("standalone"))

		up := newProjectsService(testKey)
		svc := namespacedService(ns, "default", v1alpha1.ServiceConnection{URL: up.url()})
		Expect(k8s.Create(rootCtx, svc)).To(Succeed())
		Eventually(serviceReady(svc)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonConnected))
		u, err := url.Parse(up.URL)
		Expect(err).NotTo(HaveOccurred())
		Expect(svc.Status.Endpoint).To(Equal(u.Host))
		Expect(up.calls.Load()).To(BeEquivalentTo(1), "one probe per change")
	})

	It("says Unauthorized on a refused key, and probes again when the Secret is rotated", func() {
		startManager(managerOptions{Options: controller.Options{Defaults: remote.Defaults{AllowPrivateServiceAddresses: true}}})
		up := newProjectsService(rotatedKey)
		svc := namespacedService(ns, "default", v1alpha1.ServiceConnection{URL: up.url()})
		Expect(k8s.Create(rootCtx, svc)).To(Succeed())
		Eventually(serviceReady(svc)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonUnauthorized))

		secret := apiKeySecret(ns, rotatedKey)
		Expect(k8s.Update(rootCtx, secret)).To(Succeed())
		Eventually(serviceReady(svc)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonConnected))
	})

	It("says Rejected with the service's code and a bounded, printable message only", func() {
		startManager(managerOptions{Options: controller.Options{Defaults: remote.Defaults{AllowPrivateServiceAddresses: true}}})
		up := newProjectsService(testKey)
		long := "bad\x1b[31mrequest " + strings.Repeat("x", 5000)
		up.refuse.Store(&long)
		svc := namespacedService(ns, "default", v1alpha1.ServiceConnection{URL: up.url()})
		Expect(k8s.Create(rootCtx, svc)).To(Succeed())
		Eventually(serviceReady(svc)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))
		c := meta.FindStatusCondition(svc.Status.Conditions, v1alpha1.ConditionReady)
		Expect(c.Message).To(ContainSubstring("VALIDATION_ERROR"))
		Expect(c.Message).NotTo(ContainSubstring("\x1b"))
		Expect(len(c.Message)).To(BeNumerically("<", 400))
	})

	It("keeps a namespaced service off the cluster's network, and lets a cluster service reach it", func() {
		startManager(managerOptions{})
		up := newProjectsService(testKey)
		tenant := namespacedService(ns, "default", v1alpha1.ServiceConnection{URL: up.url()})
		Expect(k8s.Create(rootCtx, tenant)).To(Succeed())
		Eventually(serviceReady(tenant)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))
		Expect(meta.FindStatusCondition(tenant.Status.Conditions, v1alpha1.ConditionReady).Message).
			To(ContainSubstring("may not reach the cluster's network"))

		admin := &v1alpha1.ClusterEvaluationService{ObjectMeta: metav1.ObjectMeta{GenerateName: "admin-"},
			Spec: v1alpha1.ClusterEvaluationServiceSpec{ServiceConnection: v1alpha1.ServiceConnection{URL: up.url()},
				APIKeySecretRef: &v1alpha1.NamespacedSecretKeySelector{Namespace: ns,
					SecretKeySelector: v1alpha1.SecretKeySelector{Name: secretName}}}}
		Expect(k8s.Create(rootCtx, admin)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(rootCtx, admin))).To(Succeed()) })
		Eventually(serviceReady(admin)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonConnected))
		Expect(up.calls.Load()).To(BeEquivalentTo(1), "only the cluster service's probe arrived")
	})
})
