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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/gates"
	"github.com/eval-operator/eval-operator/internal/restapi/rollout"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/test/framework"
)

// gateTemplate is a run template; paused, so that the reconciler leaves
// its status to the test.
const gateTemplate = `apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: EvaluationRun
metadata:
  name: podinfo
  annotations: {evaluation.eval-operator.dev/paused: "true"}
spec:
  projectId: proj-1
  testsetId: tst_1
  metricIds: [met_1]
`

// flagger calls the gate webhook at path as Flagger does: the key in the
// URL's user info, so as Basic authentication.
func flagger(path, key, canaryNamespace, checksum string) reply {
	GinkgoHelper()
	return flaggerWith(path, key, canaryNamespace, checksum, map[string]string{"template": "podinfo-gate"})
}

// flaggerWith is flagger with the webhook's metadata.
func flaggerWith(path, key, canaryNamespace, checksum string, metadata map[string]string) reply {
	GinkgoHelper()
	body, err := json.Marshal(rollout.FlaggerPayload{Name: "podinfo", Namespace: canaryNamespace, Phase: "Progressing",
		Checksum: checksum, Metadata: metadata})
	Expect(err).NotTo(HaveOccurred())
	rep, err := h.do(context.Background(), h.url, request{method: http.MethodPost, path: path, body: string(body),
		header: map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("gate:"+key))}})
	Expect(err).NotTo(HaveOccurred())
	Expect(string(rep.body)).NotTo(ContainSubstring(key))
	if rep.status != http.StatusOK {
		Expect(spec.Components.Schemas["ApiError"].Value.VisitJSON(decodeAny(rep.body))).To(Succeed(), "body: %s", rep.body)
	}
	return rep
}

func codeOf(rep reply) string {
	GinkgoHelper()
	var e evalapi.APIError
	Expect(json.Unmarshal(rep.body, &e)).To(Succeed())
	return e.Code
}

func versionsIn(namespace string) []evaluationv1alpha1.SystemVersion {
	GinkgoHelper()
	var l evaluationv1alpha1.SystemVersionList
	Expect(h.k8s.List(context.Background(), &l, client.InNamespace(namespace))).To(Succeed())
	return l.Items
}

func runsIn(namespace string) []evaluationv1alpha1.EvaluationRun {
	GinkgoHelper()
	var l evaluationv1alpha1.EvaluationRunList
	Expect(h.k8s.List(context.Background(), &l, client.InNamespace(namespace))).To(Succeed())
	return l.Items
}

// judgeRun sets the verdict of namespace's run name, as the reconciler would.
func judgeRun(namespace, name string, verdict evaluationv1alpha1.Verdict) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		e := &evaluationv1alpha1.EvaluationRun{}
		g.Expect(h.k8s.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, e)).To(Succeed())
		e.Status.Verdict = verdict
		meta.SetStatusCondition(&e.Status.Conditions, metav1.Condition{Type: evaluationv1alpha1.ConditionPassed,
			Status: metav1.ConditionFalse, Reason: string(verdict), Message: "Metric exact is below its minimum pass rate"})
		g.Expect(h.k8s.Status().Update(context.Background(), e)).To(Succeed())
	}).Should(Succeed())
}

var _ = Describe("The Flagger gate", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	It("makes one run per canary revision from the template and answers with its verdict", func(ctx SpecContext) {
		By("without the template ConfigMap: a 409 naming it, and no run")
		rep := flagger(rollout.RouteFlagger, t.key, t.namespace, "a1b2c3")
		Expect(rep.status).To(Equal(http.StatusConflict), "body: %s", rep.body)
		Expect(string(rep.body)).To(ContainSubstring("podinfo-gate does not exist"))
		Expect(runsIn(t.namespace)).To(BeEmpty())

		Expect(h.k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "podinfo-gate"},
			Data: map[string]string{"evaluationrun.yaml": gateTemplate}})).To(Succeed())
		By("the first call creates the revision's run; the answer is not yet")
		rep = flagger(rollout.RouteFlagger, t.key, t.namespace, "a1b2c3")
		Expect(rep.status).To(Equal(http.StatusConflict), "body: %s", rep.body)
		Expect(codeOf(rep)).To(Equal(rollout.CodeEvaluationPending))
		runs := runsIn(t.namespace)
		Expect(runs).To(HaveLen(1))
		run := runs[0]
		Expect(run.Name).To(HavePrefix("podinfo-"))
		Expect(run.Annotations).To(HaveKeyWithValue(rollout.FlaggerChecksumAnnotation, "a1b2c3"))
		// The release, for the run gauges.
		Expect(run.Labels).To(And(HaveKeyWithValue(evaluationv1alpha1.CanaryLabel, "podinfo"),
			HaveKeyWithValue(evaluationv1alpha1.RevisionLabel, "a1b2c3")))
		Expect(run.Spec.MetricIDs).To(Equal([]evaluationv1alpha1.ResourceID{"met_1"}))

		By("the rollback hook on the same revision: no rollback yet, and still one run")
		rep = flagger(rollout.RouteFlaggerRollback, t.key, t.namespace, "a1b2c3")
		Expect(rep.status).To(Equal(http.StatusConflict))
		Expect(runsIn(t.namespace)).To(HaveLen(1))

		By("Failed: the promotion gate refuses, the rollback hook answers 200")
		judgeRun(t.namespace, run.Name, "Failed")
		Eventually(func() int { return flagger(rollout.RouteFlagger, t.key, t.namespace, "a1b2c3").status }).
			Should(Equal(http.StatusPreconditionFailed))
		rep = flagger(rollout.RouteFlagger, t.key, t.namespace, "a1b2c3")
		Expect(codeOf(rep)).To(Equal(rollout.CodeEvaluationNotPassed))
		Expect(string(rep.body)).To(ContainSubstring("is Failed: Metric exact is below its minimum pass rate"))
		Expect(flagger(rollout.RouteFlaggerRollback, t.key, t.namespace, "a1b2c3").status).To(Equal(http.StatusOK))

		By("a new revision gets its own run; Passed opens the gate")
		Expect(flagger(rollout.RouteFlagger, t.key, t.namespace, "d4e5f6").status).To(Equal(http.StatusConflict))
		Expect(runsIn(t.namespace)).To(HaveLen(2))
		second := rollout.FlaggerRunName(rollout.FlaggerPayload{Name: "podinfo", Checksum: "d4e5f6"})
		judgeRun(t.namespace, second, "Passed")
		Eventually(func() int { return flagger(rollout.RouteFlagger, t.key, t.namespace, "d4e5f6").status }).
			Should(Equal(http.StatusOK))
		Expect(flagger(rollout.RouteFlaggerRollback, t.key, t.namespace, "d4e5f6").status).To(Equal(http.StatusConflict))
	})

	It("refuses a canary of another namespace, a payload without a template, and a missing key", func() {
		other := newTenant()
		rep := flagger(rollout.RouteFlagger, other.key, t.namespace, "a1b2c3")
		Expect(rep.status).To(Equal(http.StatusForbidden))
		Expect(string(rep.body)).To(ContainSubstring(fmt.Sprintf("This key is namespace %s's; the canary is in %s",
			other.namespace, t.namespace)))

		rep, err := h.do(context.Background(), h.url, request{method: http.MethodPost, path: rollout.RouteFlagger, key: t.key,
			body: `{"name":"podinfo","namespace":"` + t.namespace + `","checksum":"x"}`})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.status).To(Equal(http.StatusBadRequest), "a bearer key works too; the template is missing")
		Expect(string(rep.body)).To(ContainSubstring("metadata.template"))

		Expect(flagger(rollout.RouteFlagger, "ak_wrong_0000000000000000", t.namespace, "a1b2c3").status).To(Equal(http.StatusUnauthorized))
		Expect(runsIn(t.namespace)).To(BeEmpty())
	})

	It("bounds every field it keeps or logs: a 400 naming the field, no run, and the checksum never logged whole", func(ctx SpecContext) {
		Expect(h.k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "podinfo-gate"},
			Data: map[string]string{"evaluationrun.yaml": gateTemplate}})).To(Succeed())
		post := func(p rollout.FlaggerPayload) reply {
			GinkgoHelper()
			body, err := json.Marshal(p)
			Expect(err).NotTo(HaveOccurred())
			rep, err := h.do(ctx, h.url, request{method: http.MethodPost, path: rollout.RouteFlagger, key: t.key, body: string(body)})
			Expect(err).NotTo(HaveOccurred())
			return rep
		}
		valid := func() rollout.FlaggerPayload {
			return rollout.FlaggerPayload{Name: "podinfo", Namespace: t.namespace, Phase: "Progressing", Checksum: "a1b2c3",
				Metadata: map[string]string{"template": "podinfo-gate", "systemVersionId": "0b9c3f7e-4d2a-4c1e-9f3b-2a6d8e1c5b70"}}
		}
		for _, c := range []struct {
			field string
			edit  func(*rollout.FlaggerPayload)
		}{
			{"checksum", func(p *rollout.FlaggerPayload) { p.Checksum = strings.Repeat("c", 129) }},
			{"checksum", func(p *rollout.FlaggerPayload) { p.Checksum = "a1b2\n" }},
			{"phase", func(p *rollout.FlaggerPayload) { p.Phase = strings.Repeat("P", 65) }},
			{"phase", func(p *rollout.FlaggerPayload) { p.Phase = "Progressing\x1b[2J" }},
			{"metadata.systemVersionId", func(p *rollout.FlaggerPayload) { p.Metadata["systemVersionId"] = strings.Repeat("v", 129) }},
			{"metadata.systemVersionId", func(p *rollout.FlaggerPayload) { p.Metadata["systemVersionId"] = "v1.4" }},
			{"metadata.systemVersionId", func(p *rollout.FlaggerPayload) { p.Metadata["system"] = "podinfo" }},
			{"metadata.system", func(p *rollout.FlaggerPayload) { p.Metadata["version.image"] = "podinfo:6.1" }},
			{"metadata.system", func(p *rollout.FlaggerPayload) {
				delete(p.Metadata, "systemVersionId")
				p.Metadata["system"] = "Pod Info"
			}},
			{"metadata.version.image", func(p *rollout.FlaggerPayload) {
				delete(p.Metadata, "systemVersionId")
				p.Metadata["system"], p.Metadata["version.image"] = "podinfo", strings.Repeat("i", 513)
			}},
			{"metadata.version.checksum", func(p *rollout.FlaggerPayload) {
				delete(p.Metadata, "systemVersionId")
				p.Metadata["system"], p.Metadata["version.checksum"] = "podinfo", "other"
			}},
			{"metadata.version", func(p *rollout.FlaggerPayload) {
				delete(p.Metadata, "systemVersionId")
				p.Metadata["system"] = "podinfo"
				for i := range 20 {
					p.Metadata[fmt.Sprintf("version.k%d", i)] = "v"
				}
			}},
		} {
			p := valid()
			c.edit(&p)
			rep := post(p)
			Expect(rep.status).To(Equal(http.StatusBadRequest), "%s: %s", c.field, rep.body)
			Expect(codeOf(rep)).To(Equal(evalapi.CodeValidation))
			Expect(string(rep.body)).To(ContainSubstring(`"field":"` + c.field + `"`))
			Expect(spec.Components.Schemas["ApiError"].Value.VisitJSON(decodeAny(rep.body))).To(Succeed())
		}
		Expect(runsIn(t.namespace)).To(BeEmpty())

		longest := valid()
		longest.Checksum = strings.Repeat("9", 128)
		Expect(post(longest).status).To(Equal(http.StatusConflict), "accepted: pending")
		Expect(runsIn(t.namespace)).To(ConsistOf(HaveField("ObjectMeta.Annotations",
			HaveKeyWithValue(rollout.FlaggerChecksumAnnotation, longest.Checksum))))
		Eventually(logs.String).Should(ContainSubstring("Created the EvaluationRun of a Flagger canary"))
		Expect(logs.String()).NotTo(ContainSubstring(longest.Checksum), "the log quotes a prefix")
	})

	It("derives the release's SystemVersion from metadata.system, the checksum and metadata.version.*, and links the run to it",
		func(ctx SpecContext) {
			Expect(h.k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: "podinfo-gate"},
				Data: map[string]string{"evaluationrun.yaml": gateTemplate}})).To(Succeed())
			metadata := map[string]string{"template": "podinfo-gate", "system": "podinfo", "version.image": "ghcr.io/stefanprodan/podinfo:6.1"}
			system := func(namespace string) *evaluationv1alpha1.System {
				return &evaluationv1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "podinfo"},
					Spec: evaluationv1alpha1.SystemSpec{ProjectID: "proj-1", Name: evaluationv1alpha1.LineText("podinfo " + namespace),
						Config: apiextensionsv1.JSON{Raw: []byte(`{}`)}}}
			}

			By("a System of that name in another namespace is not the canary's: a 409, and nothing created")
			Expect(h.k8s.Create(ctx, system(newTenant().namespace))).To(Succeed())
			rep := flaggerWith(rollout.RouteFlagger, t.key, t.namespace, "a1b2c3", metadata)
			Expect(rep.status).To(Equal(http.StatusConflict), "body: %s", rep.body)
			Expect(string(rep.body)).To(ContainSubstring("System podinfo does not exist in " + t.namespace))
			Expect(runsIn(t.namespace)).To(BeEmpty())
			Expect(versionsIn(t.namespace)).To(BeEmpty())

			By("with the canary's System: its version, named by the release, and the run naming it")
			sys := system(t.namespace)
			Expect(h.k8s.Create(ctx, sys)).To(Succeed())
			Eventually(func() int { return flaggerWith(rollout.RouteFlagger, t.key, t.namespace, "a1b2c3", metadata).status }).
				Should(Equal(http.StatusConflict))
			Expect(codeOf(flaggerWith(rollout.RouteFlagger, t.key, t.namespace, "a1b2c3", metadata))).To(Equal(rollout.CodeEvaluationPending))
			want, errs := gates.ReleaseOf("podinfo", "checksum", "a1b2c3", map[string]string{"image": "ghcr.io/stefanprodan/podinfo:6.1"})
			Expect(errs).To(BeEmpty())
			versions := versionsIn(t.namespace)
			Expect(versions).To(HaveLen(1))
			v := versions[0]
			Expect(v.Name).To(Equal(want.VersionName()))
			Expect(v.Spec.SystemRef.Name).To(Equal("podinfo"))
			Expect(v.Spec.Config.Raw).To(MatchJSON(`{"checksum":"a1b2c3","image":"ghcr.io/stefanprodan/podinfo:6.1"}`))
			Expect(v.OwnerReferences).To(ConsistOf(HaveField("UID", sys.UID)))
			runs := runsIn(t.namespace)
			Expect(runs).To(HaveLen(1))
			Expect(runs[0].Spec.SystemVersionRef).To(Equal(&evaluationv1alpha1.ObjectRef{Name: v.Name}))
			Eventually(func(g Gomega) {
				got := &evaluationv1alpha1.SystemVersion{}
				g.Expect(h.k8s.Get(ctx, client.ObjectKeyFromObject(&v), got)).To(Succeed())
				g.Expect(evaluationv1alpha1.ValidUUID(got.Status.ID)).To(BeTrue(), "the version's id: %q", got.Status.ID)
			}).Should(Succeed())

			By("the rollback hook on the same revision: the same version and run")
			Expect(flaggerWith(rollout.RouteFlaggerRollback, t.key, t.namespace, "a1b2c3", metadata).status).To(Equal(http.StatusConflict))
			Expect(versionsIn(t.namespace)).To(HaveLen(1))
			Expect(runsIn(t.namespace)).To(HaveLen(1))

			By("a new revision: a new version, and its run names it")
			Expect(flaggerWith(rollout.RouteFlagger, t.key, t.namespace, "d4e5f6", metadata).status).To(Equal(http.StatusConflict))
			Expect(versionsIn(t.namespace)).To(HaveLen(2))
			second := &evaluationv1alpha1.EvaluationRun{}
			Expect(h.k8s.Get(ctx, client.ObjectKey{Namespace: t.namespace,
				Name: rollout.FlaggerRunName(rollout.FlaggerPayload{Name: "podinfo", Checksum: "d4e5f6"})}, second)).To(Succeed())
			Expect(second.Spec.SystemVersionRef).NotTo(BeNil())
			Expect(second.Spec.SystemVersionRef.Name).NotTo(Equal(v.Name))
		})

	It("accepts a gates-only key on the gates and nowhere else", func(ctx SpecContext) {
		key := framework.NewKey("restapi")
		secret := framework.KeySecret(t.namespace, "gate-key", key)
		secret.Labels[tenancy.KeyScopeLabel] = tenancy.KeyScopeGates
		Expect(h.k8s.Create(ctx, secret)).To(Succeed())
		Expect(h.waitKey(ctx, key, true)).To(Succeed())
		Expect(flagger(rollout.RouteFlagger, key, t.namespace, "a1b2c3").status).To(Equal(http.StatusConflict),
			"accepted: the template is missing")
		rep := send(request{method: http.MethodGet, path: routeProjects, key: key})
		Expect(rep.status).To(Equal(http.StatusUnauthorized))
		Expect(send(request{method: http.MethodGet, path: routeProjects, key: t.key}).status).To(Equal(http.StatusOK))
	})
})
