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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

var _ = Describe("Connections", func() {
	It("serves two namespaces from two services and a standalone sandbox with one operator, none through --api-url", func(ctx SpecContext) {
		flags := evalapitest.New()
		DeferCleanup(flags.Close)
		services := map[string]*evalapitest.Server{}
		for _, name := range []string{"staging", "production"} {
			services[name] = evalapitest.New(evalapitest.WithIDPrefix("met_" + name + "_"))
			DeferCleanup(services[name].Close)
		}
		conns := map[string]v1alpha1.ServiceConnection{
			"staging":    {URL: v1alpha1.ServiceURL(services["staging"].URL())},
			"production": {URL: v1alpha1.ServiceURL(services["production"].URL())},
			"sandbox":    {Standalone: &v1alpha1.StandaloneService{}},
		}
		// The fakes listen on loopback, which a namespaced service may reach only with the flag.
		startManager(ctx, "manager", "--api-url="+flags.URL(), "--allow-private-service-addresses")

		for name, conn := range conns {
			ns := newNamespace(ctx, "conn-"+name)
			createKeySecret(ctx, ns, "evaluation-api-key", evalapitest.DefaultKey, false)
			svc := &v1alpha1.EvaluationService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1alpha1.DefaultServiceName},
				Spec: v1alpha1.EvaluationServiceSpec{ServiceConnection: conn,
					APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: "evaluation-api-key"}}}
			if conn.Standalone != nil {
				svc.Spec.APIKeySecretRef = nil
			}
			Expect(k8s.Create(ctx, svc)).To(Succeed())
			Eventually(kstatusOf(ctx, v1alpha1.GroupVersion.WithKind("EvaluationService"), client.ObjectKeyFromObject(svc))).
				Should(Equal(status.CurrentStatus), name)

			m := failoverMetric(ns, 0)
			Expect(k8s.Create(ctx, m)).To(Succeed())
			id := readyWith(ctx, m, v1alpha1.ReasonCreated)
			Expect(m.Status.Service).To(Equal("EvaluationService/default"))
			Expect(id).To(HavePrefix("met_"))
			if s, remote := services[name]; remote {
				Expect(id).To(HavePrefix("met_"+name+"_"), "created on %s", name)
				Expect(s.Creates()).To(Equal(1))
			}
		}
		Expect(flags.Creates()).To(BeZero(), "every namespace has its own service: nothing through --api-url")
	})
})
