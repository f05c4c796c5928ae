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
	"encoding/base64"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// lastApplied is the annotation `kubectl apply` (client side) writes: the
// whole manifest, Secret data included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// kubectlApplied is a key Secret as `kubectl apply -f` of a stringData
// manifest leaves it.
func kubectlApplied(ns, name, key string) *corev1.Secret {
	GinkgoHelper()
	manifest, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"annotations": map[string]any{}, "name": name, "namespace": ns},
		"stringData": map[string]string{v1alpha1.DefaultAPIKeySecretKey: key},
	})
	Expect(err).NotTo(HaveOccurred())
	s := namedKeySecret(ns, name, key)
	s.Labels = map[string]string{"team": "a"}
	s.Annotations = map[string]string{lastApplied: string(manifest) + "\n"}
	return s
}

var _ = Describe("The manager's cache", func() {
	var ns string
	var up *upstream
	BeforeEach(func() { ns, up = newFixture() })

	It("holds no part of a kubectl-applied Secret's value", func() {
		mgr := startManager(up.opts)
		const key = "ak_cached_9f8e7d6c5b4a39281706"
		Expect(k8s.Create(rootCtx, kubectlApplied(ns, "applied", key), client.FieldOwner("kubectl-client-side-apply"))).
			To(Succeed())
		m := humanBoolean(ns, "uses-applied")
		m.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "applied"}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())

		stored := &corev1.Secret{}
		Expect(k8s.Get(rootCtx, client.ObjectKey{Namespace: ns, Name: "applied"}, stored)).To(Succeed())
		Expect(stored.Annotations[lastApplied]).To(ContainSubstring(key), "the API server's copy holds it")

		cached := &metav1.PartialObjectMetadata{}
		cached.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		Eventually(func() error {
			return mgr.cache.Get(rootCtx, client.ObjectKey{Namespace: ns, Name: "applied"}, cached)
		}).Should(Succeed())
		Expect(cached.Labels).To(HaveKeyWithValue("team", "a"), "the watch still sees labels")
		Expect(cached.Annotations).To(BeEmpty())
		Expect(cached.ManagedFields).To(BeEmpty())

		all := &metav1.PartialObjectMetadataList{}
		all.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		Expect(mgr.cache.List(rootCtx, all)).To(Succeed())
		Expect(all.Items).NotTo(BeEmpty())
		dump, err := json.Marshal(all)
		Expect(err).NotTo(HaveOccurred())
		secret := key[len("ak_"):]
		for _, part := range []string{secret, secret[:8], secret[len(secret)-8:], base64.StdEncoding.EncodeToString([]byte(key))} {
			Expect(string(dump)).NotTo(ContainSubstring(part))
		}
	})
})
