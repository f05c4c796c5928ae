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

package tenancy

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("The key Secret informer", func() {
	It("keeps neither annotations nor managedFields, where kubectl apply leaves the Secret's data", func() {
		const key = "ak_applied_0123456789abcdef"
		s := framework.KeySecret("ns", "k", key)
		s.Annotations = map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"apiKey":"` + key + `"}}`}
		s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
		s.Data["other"] = []byte("not needed")
		slim, err := keepOnlyAPIKey(s)
		Expect(err).NotTo(HaveOccurred())
		kept := slim.(*corev1.Secret)
		Expect(kept.Annotations).To(BeEmpty())
		Expect(kept.ManagedFields).To(BeEmpty())
		Expect(kept.Data).To(Equal(map[string][]byte{evaluationv1alpha1.DefaultAPIKeySecretKey: []byte(key)}))
	})
})
