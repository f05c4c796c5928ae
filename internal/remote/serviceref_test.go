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

package remote_test

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
)

var _ = Describe("Resolving a service by reference for a namespace", func() {
	ctx := context.Background()

	It("applies the manager's lookup and namespace rule, and reads the service's own key as the manager does", func() {
		own := urlService("a", "own", "https://Own.example.com:443/api/v2/")
		own.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "own-key"}
		keyless := urlService("a", "keyless", "https://keyless.example.com/api/v2")
		onlyB := clusterService("only-b", "https://cluster.example.com/api/v2", "b")
		c := fake.NewClientBuilder().WithScheme(newScheme()).
			WithObjects(own, keyless, onlyB, keySecret("a", "own-key")).Build()
		connector := remote.NewConnector(c, remote.Defaults{Services: c})

		sc, err := connector.ServiceFor(ctx, "a", v1alpha1.ServiceReference{Kind: v1alpha1.KindEvaluationService, Name: "own"})
		Expect(err).NotTo(HaveOccurred())
		Expect(sc.Name).To(Equal("EvaluationService/own"))
		Expect(sc.Endpoint).To(Equal("https://own.example.com/api/v2"))
		Expect(sc.Service).NotTo(BeNil())
		secret, field, ok := sc.KeySecret()
		Expect(ok).To(BeTrue())
		Expect(secret).To(Equal(types.NamespacedName{Namespace: "a", Name: "own-key"}))
		Expect(field).To(Equal(v1alpha1.DefaultAPIKeySecretKey))
		Expect(sc.Key(ctx)).To(BeEquivalentTo("ak_own-key_0123456789abcdef"))

		sc, err = connector.ServiceFor(ctx, "a", v1alpha1.ServiceReference{Kind: v1alpha1.KindEvaluationService, Name: "keyless"})
		Expect(err).NotTo(HaveOccurred())
		_, _, ok = sc.KeySecret()
		Expect(ok).To(BeFalse())
		_, err = sc.Key(ctx)
		var ke *remote.KeyError
		Expect(errors.As(err, &ke)).To(BeTrue())
		Expect(ke.Message).To(Equal("EvaluationService/keyless names no apiKeySecretRef"))

		var se *remote.ServiceError
		_, err = connector.ServiceFor(ctx, "b", v1alpha1.ServiceReference{Kind: v1alpha1.KindEvaluationService, Name: "own"})
		Expect(errors.As(err, &se)).To(BeTrue())
		Expect(se.Message).To(Equal("EvaluationService/own not found in namespace b"), "another namespace's service is not found")

		_, err = connector.ServiceFor(ctx, "a", v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: "only-b"})
		Expect(errors.As(err, &se)).To(BeTrue())
		Expect(se.Reason).To(Equal(v1alpha1.ReasonServiceNotAllowed))
		_, err = connector.ServiceFor(ctx, "b", v1alpha1.ServiceReference{Kind: v1alpha1.KindClusterEvaluationService, Name: "only-b"})
		Expect(err).NotTo(HaveOccurred())
	})

	It("refuses a namespaced service at a private address unless the Defaults allow it", func() {
		loopback := urlService("a", "local", "http://127.0.0.1:1/api/v2")
		c := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(loopback).Build()
		ref := v1alpha1.ServiceReference{Kind: v1alpha1.KindEvaluationService, Name: "local"}

		refusing, err := remote.NewConnector(c, remote.Defaults{Services: c}).ServiceFor(ctx, "a", ref)
		Expect(err).NotTo(HaveOccurred())
		_, err = refusing.Service.ListMetrics(ctx, "ak_unused_0123456789abcdef", "p", evalapi.ListOptions{Limit: 1})
		Expect(err).To(MatchError(remote.ErrPrivateAddress))

		allowing, err := remote.NewConnector(c, remote.Defaults{Services: c, AllowPrivateServiceAddresses: true}).ServiceFor(ctx, "a", ref)
		Expect(err).NotTo(HaveOccurred())
		_, err = allowing.Service.ListMetrics(ctx, "ak_unused_0123456789abcdef", "p", evalapi.ListOptions{Limit: 1})
		Expect(err).To(HaveOccurred(), "nothing listens on port 1")
		Expect(err).NotTo(MatchError(remote.ErrPrivateAddress))
	})
})
