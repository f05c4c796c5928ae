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
	"encoding/json"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

var _ = Describe("System versions", func() {
	It("serves the version a run names, as the SDKs' run-and-evaluate helpers read it, to its namespace only", func(ctx SpecContext) {
		t := newTenant()
		key := &evaluationv1alpha1.SecretKeySelector{Name: t.secret}
		sys := &evaluationv1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "bot"},
			Spec: evaluationv1alpha1.SystemSpec{ProjectID: "proj-1", Name: "Bot", APIKeySecretRef: key,
				Config: apiextensionsv1.JSON{Raw: []byte(`{"model":"gpt-4o"}`)}}}
		Expect(h.k8s.Create(ctx, sys)).To(Succeed())
		v := &evaluationv1alpha1.SystemVersion{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "bot-v2"},
			Spec: evaluationv1alpha1.SystemVersionSpec{SystemRef: evaluationv1alpha1.ObjectRef{Name: "bot"},
				Config: apiextensionsv1.JSON{Raw: []byte(`{"model":"gpt-4o","image":"sha256:ab"}`)}}}
		Expect(h.k8s.Create(ctx, v)).To(Succeed())
		Eventually(func(g Gomega) string {
			g.Expect(h.k8s.Get(ctx, client.ObjectKeyFromObject(v), v)).To(Succeed())
			return v.Status.ID
		}).WithTimeout(30 * time.Second).ShouldNot(BeEmpty())

		metricID := createdID(t, "heuristic", "boolean")
		rep := send(request{method: http.MethodPost, path: runsPath, key: t.key,
			body: `{"systemVersionId":"` + v.Status.ID + `","metricIds":["` + metricID + `"]}`})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		Expect(runOf(rep).SystemVersionID).To(HaveValue(Equal(v.Status.ID)))

		path := BasePath + "/systems/versions/" + v.Status.ID
		Eventually(func() int { return send(request{method: http.MethodGet, path: path, key: t.key}).status }).
			Should(Equal(http.StatusOK))
		rep = send(request{method: http.MethodGet, path: path, key: t.key})
		var got evalapi.SystemVersion
		Expect(json.Unmarshal(rep.body, &got)).To(Succeed())
		Expect(got.ID).To(Equal(v.Status.ID))
		Expect(got.SystemID).To(Equal(v.Status.SystemID))
		Expect(got.Config).To(MatchJSON(`{"image":"sha256:ab","model":"gpt-4o"}`))

		other := newTenant()
		Expect(send(request{method: http.MethodGet, path: path, key: other.key}).status).To(Equal(http.StatusNotFound))
		Expect(send(request{method: http.MethodGet, path: BasePath + "/systems/versions/87654321-4d3b-4ae4-8c7a-4b6e2a19ccf0",
			key: t.key}).status).To(Equal(http.StatusNotFound))
	})
})
