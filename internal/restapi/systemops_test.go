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
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
)

const systemsPath = BasePath + "/projects/proj-1/systems"

func systemOf(rep reply) evalapi.System {
	GinkgoHelper()
	Expect(rep.status).To(BeElementOf(http.StatusOK, http.StatusCreated), "body: %s", rep.body)
	var s evalapi.System
	Expect(json.Unmarshal(rep.body, &s)).To(Succeed())
	return s
}

func versionOf(rep reply) evalapi.SystemVersion {
	GinkgoHelper()
	Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
	var v evalapi.SystemVersion
	Expect(json.Unmarshal(rep.body, &v)).To(Succeed())
	return v
}

func upsertSystem(url string, t tenant, body string) reply {
	GinkgoHelper()
	return sendTo(url, request{method: http.MethodPost, path: systemsPath, key: t.key, body: body})
}

func upsertVersion(t tenant, systemID, body string) reply {
	GinkgoHelper()
	return send(request{method: http.MethodPost, path: BasePath + "/systems/" + systemID + "/versions", key: t.key, body: body})
}

func systemsIn(namespace string) []evaluationv1alpha1.System {
	GinkgoHelper()
	var l evaluationv1alpha1.SystemList
	Expect(h.k8s.List(context.Background(), &l, client.InNamespace(namespace))).To(Succeed())
	return l.Items
}

var _ = Describe("Systems and versions on a standalone service", func() {
	var t tenant
	BeforeEach(func() { t = newTenant() })

	It("upserts a System by name, its config its first and production version, and a version by config", func() {
		sys := systemOf(upsertSystem(h.url, t, `{"name":"Bot","description":"the bot","config":{"model":"gpt-4o","temperature":0.2}}`))
		Expect(evaluationv1alpha1.ValidUUID(sys.ID)).To(BeTrue(), "id %q", sys.ID)
		Expect(sys.Name).To(Equal("Bot"))
		Expect(sys.ProductionVersion).NotTo(BeNil())
		Expect(sys.ProductionVersion.Config).To(MatchJSON(`{"model":"gpt-4o","temperature":0.2}`))
		Expect(sys.ProductionVersion.SystemID).To(Equal(sys.ID))
		Expect(sys.Versions).To(Equal([]evalapi.VersionRef{{ID: sys.ProductionVersion.ID, Name: "Version 1"}}))
		first := sys.ProductionVersion.ID

		By("the same name again: the same System, its new config a new version, the production version kept")
		again := systemOf(upsertSystem(h.url, t, `{"name":"Bot","config":{"model":"gpt-4.1"}}`))
		Expect(again.ID).To(Equal(sys.ID))
		Expect(again.Description).To(Equal("the bot"), "a description not sent is kept")
		Expect(again.ProductionVersion.ID).To(Equal(first))
		Expect(again.Versions).To(HaveLen(2))
		Expect(systemsIn(t.namespace)).To(HaveLen(1))

		By("a version upserted by config: the same config, however written, is the same version")
		v := versionOf(upsertVersion(t, sys.ID, `{"config":{"temperature":0.2,  "model":"gpt-4o"}}`))
		Expect(v.ID).To(Equal(first))
		Expect(v.Name).To(Equal("Version 1"))
		renamed := versionOf(upsertVersion(t, sys.ID, `{"name":"low temperature","config":{"model":"gpt-4o","temperature":0.2}}`))
		Expect(renamed.ID).To(Equal(first))
		Expect(renamed.Name).To(Equal("low temperature"))
		third := versionOf(upsertVersion(t, sys.ID, `{"config":{"model":"o3"}}`))
		Expect(third.ID).NotTo(BeElementOf(first, again.Versions[0].ID))
		Expect(third.Name).To(Equal("Version 3"))
		Expect(third.SystemID).To(Equal(sys.ID))
		Expect(versionsIn(t.namespace)).To(HaveLen(3))

		got := versionOf(send(request{method: http.MethodGet, path: BasePath + "/systems/versions/" + third.ID, key: t.key}))
		Expect(got).To(Equal(third))

		By("listed and read back")
		list := send(request{method: http.MethodGet, path: systemsPath, key: t.key})
		Expect(list.status).To(Equal(http.StatusOK), "body: %s", list.body)
		var page evalapi.SystemPage
		Expect(json.Unmarshal(list.body, &page)).To(Succeed())
		Expect(page.Data).To(HaveLen(1))
		Expect(page.Data[0].ID).To(Equal(sys.ID))
		Expect(page.Data[0].Versions).To(HaveLen(3))
		Expect(send(request{method: http.MethodGet, path: BasePath + "/projects/proj-2/systems", key: t.key}).body).
			To(ContainSubstring(`"data":[]`), "another project's Systems are not listed")
		Expect(systemOf(send(request{method: http.MethodGet, path: BasePath + "/systems/" + sys.ID, key: t.key})).Versions).
			To(HaveLen(3))
	})

	It("sets the production version on PATCH and keeps it through the operator's reconciles", func(ctx SpecContext) {
		sys := systemOf(upsertSystem(h.url, t, `{"name":"Bot","config":{"model":"gpt-4o"}}`))
		next := versionOf(upsertVersion(t, sys.ID, `{"config":{"model":"gpt-4.1"}}`))
		path := BasePath + "/systems/" + sys.ID
		patched := systemOf(send(request{method: http.MethodPatch, path: path, key: t.key,
			body: `{"productionVersionId":"` + next.ID + `","name":"Bot 2","description":"promoted"}`}))
		Expect(patched.ProductionVersion.ID).To(Equal(next.ID))
		Expect(patched.ProductionVersion.Config).To(MatchJSON(`{"model":"gpt-4.1"}`))
		Expect(patched.Name).To(Equal("Bot 2"))
		Expect(patched.Description).To(Equal("promoted"))

		obj := &evaluationv1alpha1.System{}
		Eventually(func(g Gomega) {
			l := systemsIn(t.namespace)
			g.Expect(l).To(HaveLen(1))
			*obj = l[0]
			g.Expect(obj.Status.ObservedGeneration).To(Equal(obj.Generation), "the operator reconciled the rename")
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Consistently(func() string {
			Expect(h.k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			return obj.Status.ProductionVersionID
		}).WithTimeout(2*time.Second).Should(Equal(next.ID), "the cluster is the record of the production version")
		Expect(systemOf(send(request{method: http.MethodGet, path: path, key: t.key})).ProductionVersion.ID).To(Equal(next.ID))

		By("a version of another System, an id that is not a UUID, a name the project holds: refused, nothing changed")
		other := systemOf(upsertSystem(h.url, t, `{"name":"Other","config":{"model":"x"}}`))
		for body, field := range map[string]string{
			`{"productionVersionId":"` + other.ProductionVersion.ID + `"}`: "productionVersionId",
			`{"productionVersionId":"v42"}`:                                "productionVersionId",
			`{"name":"Other"}`:                                             "name",
			`{"name":""}`:                                                  "name",
			`{"description":"bell\u0007"}`:                                 "description",
			`{"productionVersionId":null,"extra":1}`:                       "extra",
		} {
			expectValidationError(send(request{method: http.MethodPatch, path: path, key: t.key, body: body}), field)
		}
		got := systemOf(send(request{method: http.MethodGet, path: path, key: t.key}))
		Expect(got.ProductionVersion.ID).To(Equal(next.ID))
		Expect(got.Name).To(Equal("Bot 2"))
	})

	It("deletes a System and keeps its versions, which earlier runs name", func() {
		sys := systemOf(upsertSystem(h.url, t, `{"name":"Bot","config":{"model":"gpt-4o"}}`))
		path := BasePath + "/systems/" + sys.ID
		Eventually(func(g Gomega) {
			l := systemsIn(t.namespace)
			g.Expect(l).To(HaveLen(1))
			g.Expect(meta.IsStatusConditionTrue(l[0].Status.Conditions, evaluationv1alpha1.ConditionReady)).To(BeTrue())
		}).WithTimeout(30*time.Second).Should(Succeed(), "a Ready System is deleted as one the operator has yet to see")
		rep := send(request{method: http.MethodDelete, path: path, key: t.key})
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(systemsIn(t.namespace)).To(BeEmpty())
		expectNotFound(send(request{method: http.MethodGet, path: path, key: t.key}))
		expectNotFound(send(request{method: http.MethodDelete, path: path, key: t.key}))
		Expect(versionOf(send(request{method: http.MethodGet, path: BasePath + "/systems/versions/" + sys.ProductionVersion.ID,
			key: t.key})).ID).To(Equal(sys.ProductionVersion.ID))
	})

	It("hides another namespace's System and versions, and changes nothing of them", func() {
		sys := systemOf(upsertSystem(h.url, t, `{"name":"Bot","config":{"model":"gpt-4o"}}`))
		other := newTenant()
		path := BasePath + "/systems/" + sys.ID
		expectNotFound(send(request{method: http.MethodGet, path: path, key: other.key}))
		expectNotFound(send(request{method: http.MethodPatch, path: path, key: other.key, body: `{"name":"mine"}`}))
		expectNotFound(send(request{method: http.MethodDelete, path: path, key: other.key}))
		expectNotFound(upsertVersion(other, sys.ID, `{"config":{"model":"o3"}}`))
		expectNotFound(send(request{method: http.MethodGet, path: BasePath + "/systems/versions/" + sys.ProductionVersion.ID,
			key: other.key}))
		Expect(send(request{method: http.MethodGet, path: systemsPath, key: other.key}).body).To(ContainSubstring(`"data":[]`))

		By("the same name in another namespace is another System")
		mine := systemOf(upsertSystem(h.url, other, `{"name":"Bot","config":{"model":"gpt-4o"}}`))
		Expect(mine.ID).NotTo(Equal(sys.ID))
		Expect(mine.ProductionVersion.ID).NotTo(Equal(sys.ProductionVersion.ID))
		Eventually(func(g Gomega) {
			l := systemsIn(other.namespace)
			g.Expect(l).To(HaveLen(1))
			g.Expect(meta.IsStatusConditionTrue(l[0].Status.Conditions, evaluationv1alpha1.ConditionReady)).To(BeTrue(),
				"not held back by the first tenant's System: %v", l[0].Status.Conditions)
		}).WithTimeout(30 * time.Second).Should(Succeed())

		got := systemOf(send(request{method: http.MethodGet, path: path, key: t.key}))
		Expect(got.Name).To(Equal("Bot"))
		Expect(got.Versions).To(HaveLen(1))
		Expect(systemsIn(t.namespace)).To(HaveLen(1))
		Expect(versionsIn(t.namespace)).To(HaveLen(1))
	})

	It("refuses a huge or malformed config with an ApiError naming it, and stores nothing", func() {
		keys := make([]string, 65)
		for i := range keys {
			keys[i] = fmt.Sprintf(`"k%d":%d`, i, i)
		}
		huge := `{"blob":"` + strings.Repeat("x", evaluationv1alpha1.SystemConfigMaxBytes) + `"}`
		for _, config := range []string{huge, "{" + strings.Join(keys, ",") + "}", `[1,2]`, `"model"`, `null`, `{"a":1} {}`} {
			rep := upsertSystem(h.url, t, `{"name":"Bot","config":`+config+`}`)
			Expect(rep.status).To(Equal(http.StatusBadRequest), "config %.40s: %s", config, rep.body)
			Expect(apiErrorOf(rep)["code"]).To(Equal(evalapi.CodeValidation))
		}
		expectValidationError(upsertSystem(h.url, t, `{"name":"Bot"}`), "config")
		expectValidationError(upsertSystem(h.url, t, `{"name":"`+strings.Repeat("n", 257)+`","config":{}}`), "name")
		expectValidationError(upsertSystem(h.url, t, `{"name":"a\nb","config":{}}`), "name")
		rep := upsertSystem(h.url, t, `{"config":{"blob":"`+strings.Repeat("x", int(DefaultMaxBodyBytes))+`"}}`)
		Expect(rep.status).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(systemsIn(t.namespace)).To(BeEmpty())

		sys := systemOf(upsertSystem(h.url, t, `{"config":{"model":"gpt-4o"}}`))
		Expect(sys.Name).To(Equal(defaultSystemName))
		for _, body := range []string{`{"config":` + huge + `}`, `{"config":[]}`, `{}`, `{"name":"a\tb","config":{"a":1}}`} {
			rep := upsertVersion(t, sys.ID, body)
			Expect(rep.status).To(Equal(http.StatusBadRequest), "body %.40s: %s", body, rep.body)
		}
		Expect(versionsIn(t.namespace)).To(HaveLen(1), "only the System's first version")
	})

	It("holds each kind's budget: no System or version past it is written", func() {
		_, url, err := addServer(h.mgr, 30*time.Second, ctrl.Log, unlimited, func(o *Options) {
			o.Budget = tenancy.Budget{"System": 1, "SystemVersion": 2}
		})
		Expect(err).NotTo(HaveOccurred())
		sys := systemOf(upsertSystem(url, t, `{"name":"Bot","config":{"model":"a"}}`))
		Eventually(func() (int, error) { return cachedLen(t.namespace, &evaluationv1alpha1.SystemList{}) }).Should(Equal(1))
		expectQuotaRefusal(upsertSystem(url, t, `{"name":"Other","config":{"model":"a"}}`))
		Expect(systemOf(upsertSystem(url, t, `{"name":"Bot","config":{"model":"b"}}`)).Versions).To(HaveLen(2),
			"an upsert of the System held is no create")
		Eventually(func() (int, error) { return cachedLen(t.namespace, &evaluationv1alpha1.SystemVersionList{}) }).Should(Equal(2))
		expectQuotaRefusal(sendTo(url, request{method: http.MethodPost, path: BasePath + "/systems/" + sys.ID + "/versions",
			key: t.key, body: `{"config":{"model":"c"}}`}))
		Expect(versionOf(sendTo(url, request{method: http.MethodPost, path: BasePath + "/systems/" + sys.ID + "/versions",
			key: t.key, body: `{"config":{"model":"b"}}`})).Name).To(Equal("Version 2"), "a config held is no create")
		Expect(systemsIn(t.namespace)).To(HaveLen(1))
		Expect(versionsIn(t.namespace)).To(HaveLen(2))
	})

	It("leaves the writes to a namespace's real Evaluation Service, answering 409", func() {
		fake := evalapitest.New()
		DeferCleanup(fake.Close)
		svc, err := evalapi.NewClient(evalapi.Options{BaseURL: fake.URL()})
		Expect(err).NotTo(HaveOccurred())
		srv, url := runServer(Options{Connector: remote.NewConnector(h.mgr.GetAPIReader(), remote.Defaults{Service: svc})})
		Eventually(func() bool { _, ok, _ := srv.keys.Lookup(t.key); return ok }).Should(BeTrue())
		rep := upsertSystem(url, t, `{"name":"Bot","config":{"model":"a"}}`)
		Expect(rep.status).To(Equal(http.StatusConflict), "body: %s", rep.body)
		Expect(apiErrorOf(rep)["message"]).To(ContainSubstring("Systems and versions are kept by its Evaluation Service"))
		Expect(systemsIn(t.namespace)).To(BeEmpty())
	})
})

var _ = Describe("The SDKs' run-and-evaluate helpers with a system version id", func() {
	It("make their calls in their order, to a finished run linked to the version", func() {
		t := newTenant()
		metricID := createdID(t, "heuristic", "boolean")
		testset := postTestset(t).ID
		Expect(postTestcases(t, testset, `{"items":[{"jsonData":{"question":"2+2","answer":"4"}},{"jsonData":{"question":"3+3","answer":"6"}}]}`).status).
			To(Equal(http.StatusCreated))
		sys := systemOf(upsertSystem(h.url, t, `{"name":"Calculator","config":{"model":"gpt-4o"}}`))
		version := versionOf(upsertVersion(t, sys.ID, `{"name":"low temperature","config":{"model":"gpt-4o","temperature":0.1}}`))

		By("run_and_evaluate(system_version_id=...): the testcases, the run, the version, a record per testcase")
		rep := send(request{method: http.MethodGet, path: testsetPath(testset) + "/testcases", key: t.key})
		Expect(rep.status).To(Equal(http.StatusOK))
		cases := testcasesOf(rep)
		Expect(cases).To(HaveLen(2))
		rep = send(request{method: http.MethodPost, path: runsPath, key: t.key,
			body: `{"testsetId":"` + testset + `","metricIds":["` + metricID + `"],"systemVersionId":"` + version.ID + `"}`})
		Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		run := runOf(rep)
		Expect(run.SystemVersionID).To(HaveValue(Equal(version.ID)))
		got := versionOf(send(request{method: http.MethodGet, path: BasePath + "/systems/versions/" + version.ID, key: t.key}))
		Expect(got).To(Equal(version))
		Expect(got.Config).To(MatchJSON(`{"model":"gpt-4o","temperature":0.1}`))
		records := make([]string, 0, len(cases))
		for _, tc := range cases {
			body, err := json.Marshal(map[string]any{"testcaseId": tc.ID, "inputs": tc.Inputs, "expected": tc.Expected,
				"outputs": map[string]any{"answer": "4"}, "otelLinkId": "6f1c6a8e-0d1b-4c1e-9d7a-1f2e3d4c5b6a"})
			Expect(err).NotTo(HaveOccurred())
			rep := send(request{method: http.MethodPost, path: BasePath + "/runs/" + run.ID + "/records", key: t.key, body: string(body)})
			Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
			records = append(records, idOf(rep))
		}

		By("the caller scores the records and reads the run until it is completed")
		for _, id := range records {
			Expect(putScore(t, id, metricID, `{"value":true}`).status).To(Equal(http.StatusOK))
		}
		Eventually(func() evalapi.Run {
			return runOf(send(request{method: http.MethodGet, path: BasePath + "/runs/" + run.ID, key: t.key}))
		}).WithTimeout(30 * time.Second).Should(And(HaveField("Status", "completed"), HaveField("NumRecords", 2),
			HaveField("NumScores", 2), HaveField("SystemVersionID", HaveValue(Equal(version.ID)))))
	})
})
