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
	"encoding/json"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/gates"
	"github.com/eval-operator/eval-operator/internal/restapi/rollout"
)

// analysis calls the analysis gate as Argo Rollouts' web provider does: a
// POST of the AnalysisTemplate's jsonBody with a bearer key.
func analysis(key, body string) reply {
	GinkgoHelper()
	rep, err := h.do(context.Background(), h.url, request{method: http.MethodPost, path: rollout.RouteAnalysis, key: key, body: body})
	Expect(err).NotTo(HaveOccurred())
	Expect(string(rep.body)).NotTo(ContainSubstring(key))
	if rep.status != http.StatusOK {
		Expect(spec.Components.Schemas["ApiError"].Value.VisitJSON(decodeAny(rep.body))).To(Succeed(), "body: %s", rep.body)
	}
	return rep
}

// verdictIn is the verdict field of a 200 answer: what the shipped
// AnalysisTemplate's jsonPath {$.verdict} reads.
func verdictIn(g Gomega, rep reply) string {
	g.Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
	var a struct{ Verdict string }
	g.Expect(json.Unmarshal(rep.body, &a)).To(Succeed())
	return a.Verdict
}

var _ = Describe("The analysis gate (Argo Rollouts' web provider)", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })
	const request = `{"name":"podinfo","revision":"%s","template":"podinfo-gate"}`

	It("makes one run per release revision and answers each verdict with a 200, a pending run with a 409", func(ctx SpecContext) {
		Expect(h.k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "podinfo-gate"},
			Data: map[string]string{"evaluationrun.yaml": gateTemplate}})).To(Succeed())
		rep := analysis(t.key, strings.Replace(request, "%s", "7c9f", 1))
		Expect(rep.status).To(Equal(http.StatusConflict), "pending: the web provider measures again")
		Expect(codeOf(rep)).To(Equal(rollout.CodeEvaluationPending))
		runs := runsIn(t.namespace)
		Expect(runs).To(HaveLen(1))
		Expect(runs[0].Annotations).To(And(HaveKeyWithValue(rollout.AnalysisReleaseAnnotation, "podinfo"),
			HaveKeyWithValue(rollout.AnalysisRevisionAnnotation, "7c9f")))

		for _, v := range []evaluationv1alpha1.Verdict{"Inconclusive", "Failed", "Passed"} {
			judgeRun(t.namespace, runs[0].Name, v)
			Eventually(func(g Gomega) string {
				return verdictIn(g, analysis(t.key, strings.Replace(request, "%s", "7c9f", 1)))
			}).
				Should(Equal(string(v)), "the AnalysisTemplate maps it")
		}
		Expect(runsIn(t.namespace)).To(HaveLen(1), "one run per revision")
		Expect(analysis(t.key, strings.Replace(request, "%s", "8d0a", 1)).status).To(Equal(http.StatusConflict))
		Expect(runsIn(t.namespace)).To(HaveLen(2), "a new revision, a new run")
	})

	It("derives the release's SystemVersion from system, revision and version, and links the run to it", func(ctx SpecContext) {
		Expect(h.k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "podinfo-gate"},
			Data: map[string]string{"evaluationrun.yaml": gateTemplate}})).To(Succeed())
		Expect(h.k8s.Create(ctx, &evaluationv1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "podinfo"},
			Spec: evaluationv1alpha1.SystemSpec{ProjectID: "proj-1", Name: "podinfo", Config: apiextensionsv1.JSON{Raw: []byte(`{}`)}}})).
			To(Succeed())
		body := `{"name":"podinfo","revision":"7c9f","template":"podinfo-gate","system":"podinfo",` +
			`"version":{"image":"ghcr.io/stefanprodan/podinfo:6.1"}}`
		Eventually(func() int { return analysis(t.key, body).status }).Should(Equal(http.StatusConflict))
		Expect(codeOf(analysis(t.key, body))).To(Equal(rollout.CodeEvaluationPending))
		want, errs := gates.ReleaseOf("podinfo", "revision", "7c9f", map[string]string{"image": "ghcr.io/stefanprodan/podinfo:6.1"})
		Expect(errs).To(BeEmpty())
		versions := versionsIn(t.namespace)
		Expect(versions).To(ConsistOf(HaveField("Name", want.VersionName())))
		Expect(versions[0].Spec.Config.Raw).To(MatchJSON(`{"image":"ghcr.io/stefanprodan/podinfo:6.1","revision":"7c9f"}`))
		Expect(runsIn(t.namespace)).To(ConsistOf(HaveField("Spec.SystemVersionRef",
			Equal(&evaluationv1alpha1.ObjectRef{Name: want.VersionName()}))))
	})

	It("refuses a request that is not its own, and starts no run", func() {
		for _, c := range []struct{ body, field string }{
			{`{"name":"podinfo","revision":"a1","template":"podinfo-gate","namespace":"kube-system"}`, "body"},
			{`{"name":"podinfo","template":"podinfo-gate"}`, "revision"},
			{`{"name":"podinfo","revision":"a1"}`, "template"},
			{`{"name":"Pod Info","revision":"a1","template":"podinfo-gate"}`, "name"},
			{`{"name":"podinfo","revision":"` + strings.Repeat("r", 129) + `","template":"podinfo-gate"}`, "revision"},
			{`{"name":"podinfo","revision":"a1","template":"podinfo-gate","systemVersionId":"v 1"}`, "systemVersionId"},
			{`{"name":"podinfo","revision":"a1","template":"podinfo-gate","systemVersionId":"v1.4"}`, "systemVersionId"},
			{`{"name":"podinfo","revision":"a1","template":"podinfo-gate","version":{"image":"podinfo:6.1"}}`, "system"},
			{`{"name":"podinfo","revision":"a1","template":"podinfo-gate","system":"podinfo","version":{"revision":"a2"}}`, "version.revision"},
			{`{"name":"podinfo","revision":"a1","template":"podinfo-gate","system":"podinfo","version":{"image":"a\nb"}}`, "version.image"},
			{`{"name":"podinfo","revision":"a1","template":"podinfo-gate","system":"podinfo","version":{"image":1}}`, "body"},
			{`[`, "body"},
		} {
			rep := analysis(t.key, c.body)
			Expect(rep.status).To(Equal(http.StatusBadRequest), "%s: %s", c.body, rep.body)
			Expect(codeOf(rep)).To(Equal(evalapi.CodeValidation))
			Expect(string(rep.body)).To(ContainSubstring(`"field":"` + c.field + `"`))
		}
		Expect(analysis("ak_wrong_0000000000000000", `{"name":"podinfo","revision":"a1","template":"podinfo-gate"}`).status).
			To(Equal(http.StatusUnauthorized))
		Expect(runsIn(t.namespace)).To(BeEmpty())
	})
})
