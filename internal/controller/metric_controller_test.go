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
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	watchapi "k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// upstream is a fake service with the client the operator would use for it.
type upstream struct {
	*evalapitest.Server
	opts managerOptions
}

func newUpstream(opts ...evalapitest.Option) *upstream {
	GinkgoHelper()
	srv := evalapitest.New(append([]evalapitest.Option{evalapitest.WithKeys(testKey)}, opts...)...)
	DeferCleanup(srv.Close)
	c, err := evalapi.NewClient(evalapi.Options{BaseURL: srv.URL(), Timeout: 2 * time.Second})
	Expect(err).NotTo(HaveOccurred())
	return &upstream{Server: srv, opts: managerOptions{
		Options: controller.Options{RequestTimeout: 2 * time.Second, MaxConcurrentReconciles: 4,
			// Retries come quickly enough for a test to wait for them, and slowly
			// enough for it to see the state in between.
			Backoff:  200 * time.Millisecond,
			Defaults: remote.Defaults{Service: c, BulkDeleteBatchSize: 100}}}}
}

// testStart is the time a test's fake clock starts at.
var testStart = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

const (
	testKey    = "ak_test_0123456789abcdef"
	rotatedKey = "ak_rotated_fedcba9876543210"
	secretName = "eval-api-key"
)

func apiKeySecret(ns, key string) *corev1.Secret { return namedKeySecret(ns, secretName, key) }

func namedKeySecret(ns, name, key string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		StringData: map[string]string{v1alpha1.DefaultAPIKeySecretKey: key},
	}
}

func ref() *v1alpha1.SecretKeySelector { return &v1alpha1.SecretKeySelector{Name: secretName} }

// variant is a valid Metric spec of one of the nine variants, and the create
// request body the service must receive for it.
type variant struct {
	spec v1alpha1.MetricSpec
	body string
}

func variants() map[string]variant {
	tmpl := "Rate {{outputs.response}} for {{inputs.question}}"
	return map[string]variant{
		"ai-int": {v1alpha1.MetricSpec{EvalType: "ai", OutputType: "int", PromptTemplate: (*v1alpha1.Text)(&tmpl), PassingThreshold: ptr.To(3.0)},
			`{"name":"m","evalType":"ai","outputType":"int","promptTemplate":"` + tmpl + `","passingThreshold":3}`},
		"ai-float": {v1alpha1.MetricSpec{EvalType: "ai", OutputType: "float", PromptTemplate: (*v1alpha1.Text)(&tmpl), EvalModelName: ptr.To("gpt-4o-mini"), Temperature: ptr.To(0.5)},
			`{"name":"m","evalType":"ai","outputType":"float","promptTemplate":"` + tmpl + `","evalModelName":"gpt-4o-mini","temperature":0.5}`},
		"ai-boolean": {v1alpha1.MetricSpec{EvalType: "ai", OutputType: "boolean", PromptTemplate: (*v1alpha1.Text)(&tmpl), Description: ptr.To[v1alpha1.Text]("d")},
			`{"name":"m","description":"d","evalType":"ai","outputType":"boolean","promptTemplate":"` + tmpl + `"}`},
		"human-int": {v1alpha1.MetricSpec{EvalType: "human", OutputType: "int", Guidelines: ptr.To[v1alpha1.Text]("be kind")},
			`{"name":"m","evalType":"human","outputType":"int","guidelines":"be kind"}`},
		"human-float": {v1alpha1.MetricSpec{EvalType: "human", OutputType: "float", PassingThreshold: ptr.To(0.75)},
			`{"name":"m","evalType":"human","outputType":"float","passingThreshold":0.75}`},
		"human-boolean": {v1alpha1.MetricSpec{EvalType: "human", OutputType: "boolean"},
			`{"name":"m","evalType":"human","outputType":"boolean"}`},
		"heuristic-int": {v1alpha1.MetricSpec{EvalType: "heuristic", OutputType: "int", PassingThreshold: ptr.To(5.0)},
			`{"name":"m","evalType":"heuristic","outputType":"int","passingThreshold":5}`},
		"heuristic-float": {v1alpha1.MetricSpec{EvalType: "heuristic", OutputType: "float"},
			`{"name":"m","evalType":"heuristic","outputType":"float"}`},
		"heuristic-boolean": {v1alpha1.MetricSpec{EvalType: "heuristic", OutputType: "boolean", Guidelines: ptr.To[v1alpha1.Text]("exact match")},
			`{"name":"m","evalType":"heuristic","outputType":"boolean","guidelines":"exact match"}`},
	}
}

func newMetric(ns, name string, spec v1alpha1.MetricSpec) *v1alpha1.Metric {
	spec.ProjectID = "proj-1"
	spec.Name = "m"
	return &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

func humanBoolean(ns, name string) *v1alpha1.Metric {
	m := newMetric(ns, name, variants()["human-boolean"].spec)
	m.Spec.APIKeySecretRef = ref()
	return m
}

// readyCondition fetches obj and returns its Ready condition (nil if none).
func readyCondition(obj client.Object) func(Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		return meta.FindStatusCondition(*obj.(interface{ GetConditions() *[]metav1.Condition }).GetConditions(), v1alpha1.ConditionReady)
	}
}

func haveReason(status metav1.ConditionStatus, reason string) OmegaMatcher {
	return And(Not(BeNil()), HaveField("Status", status), HaveField("Reason", reason))
}

// newFixture gives a test its namespace, holding the key Secret, and its
// fake service accepting that key. The fake's ids are the test's own, as a
// real service's are unique: the Metrics other tests left in the cluster
// never record them.
func newFixture() (string, *upstream) {
	GinkgoHelper()
	ns := newNamespace()
	Expect(k8s.Create(rootCtx, apiKeySecret(ns, testKey))).To(Succeed())
	return ns, newUpstream(evalapitest.WithIDPrefix("met_" + ns + "_"))
}

var _ = Describe("Metric reconciler", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	It("creates every variant with the service's exact request body and reports the defaults", func() {
		startManager(up.opts)
		for name, v := range variants() {
			m := newMetric(ns, name, v.spec)
			m.Spec.APIKeySecretRef = ref()
			Expect(k8s.Create(rootCtx, m)).To(Succeed())
		}
		for name, v := range variants() {
			m := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated), name)
			Expect(m.Status.ID).NotTo(BeEmpty())
			Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, m.Status.ID))
			Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))

			created := createdByID(up, m.Status.ID)
			Expect(created.ProjectID).To(Equal("proj-1"))
			Expect(created.Body).To(MatchJSON(v.body), name)

			// Status holds the response form, defaults included.
			want := created.Metric
			Expect(m.Status.Description).To(Equal((*v1alpha1.Text)(want.Description)))
			Expect(m.Status.Guidelines).To(HaveValue(Equal(v1alpha1.Text(want.Guidelines))))
			Expect(m.Status.Temperature).To(Equal(want.Temperature))
			Expect(m.Status.PassingThreshold).To(Equal(want.PassingThreshold))
			if v.spec.EvalType == "ai" {
				Expect(m.Status.EvalModelName).To(Equal(*want.EvalModelName))
			}
		}
		Expect(up.Creates()).To(Equal(9))
		m := &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ai-int"}}
		Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		Expect(m.Status.EvalModelName).To(Equal("gpt-4o"))
		Expect(m.Status.Temperature).To(HaveValue(BeZero()))
		m = &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "heuristic-float"}}
		Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		Expect(m.Status.PassingThreshold).To(HaveValue(Equal(0.9)))
	})

	It("sends the whole of a prompt longer than the cache keeps, on create and on update", func() {
		mgr := startManager(up.opts)
		prompt := strings.Repeat("Rate {{outputs.response}}. ", 1000) // 27 KB
		m := newMetric(ns, "long", v1alpha1.MetricSpec{EvalType: "ai", OutputType: "int", PromptTemplate: (*v1alpha1.Text)(&prompt)})
		m.Spec.APIKeySecretRef = ref()
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		sent, _ := up.Metric(m.Status.ID)
		Expect(sent.PromptTemplate).To(HaveValue(Equal(prompt)))

		cached := &v1alpha1.Metric{}
		Expect(mgr.cache.Get(rootCtx, client.ObjectKeyFromObject(m), cached)).To(Succeed())
		Expect(trimcache.Trimmed(cached)).To(BeTrue(), "the cache keeps no long prompt")

		longer := prompt + "Be strict."
		editSpec(m, func(s *v1alpha1.MetricSpec) { s.PromptTemplate = (*v1alpha1.Text)(&longer) })
		Eventually(readyCondition(m)).Should(And(haveReason(metav1.ConditionTrue, v1alpha1.ReasonUpdated),
			HaveField("ObservedGeneration", m.Generation)))
		sent, _ = up.Metric(m.Status.ID)
		Expect(sent.PromptTemplate).To(HaveValue(Equal(longer)))
		Expect(up.Creates()).To(Equal(1))
	})

	It("waits on a 401 without retrying hot, and becomes Ready once the Secret is rotated", func() {
		up.SetKeys(rotatedKey)
		startManager(up.opts)
		m := humanBoolean(ns, "rotate")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonUnauthorized))
		Expect(meta.IsStatusConditionTrue(m.Status.Conditions, v1alpha1.ConditionStalled)).To(BeTrue())
		Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation), "a 401 created nothing")
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, 2*time.Second).Should(Equal(1))

		s := apiKeySecret(ns, rotatedKey)
		Expect(k8s.Update(rootCtx, s)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(up.Creates()).To(Equal(1))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(2))
	})

	It("retries 500s with backoff and creates exactly one remote Metric", func() {
		up.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Status500, evalapitest.Status500, evalapitest.Status500)
		startManager(up.opts)
		m := humanBoolean(ns, "flaky")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonUpstreamUnavailable))
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(4))
		Expect(up.Creates()).To(Equal(1))
	})

	It("stops at CreateOutcomeUnknown when the create was committed but no answer came back", func() {
		up.InjectFaults(evalapitest.OpCreateMetric, evalapitest.CommitThenReset)
		up.opts.Clock = clocktesting.NewFakePassiveClock(testStart)
		mgr := startManager(up.opts)
		m := humanBoolean(ns, "lost-answer")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))
		Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.CreatePendingAnnotation, "2026-11-21T10:00:00Z"))
		Eventually(warningEvents(ns, m.Name)).Should(ContainElement(v1alpha1.ReasonCreateOutcomeUnknown))

		// A restart must not try again.
		mgr.stop()
		startManager(up.opts)
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, 2*time.Second).Should(Equal(1))
		Expect(up.Creates()).To(Equal(1))
		Expect(readyCondition(m)(Default)).To(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))

		// A person adopts the id the service holds: Ready, still one create.
		id := up.CreatedMetrics()[0].Metric.ID
		editStored(m, func() { m.Annotations[v1alpha1.MetricIDAnnotation] = id })
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonAdopted))
		Expect(m.Status.ID).To(Equal(id))
		Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
		Expect(up.Creates()).To(Equal(1))
	})

	It("treats a create-pending annotation left by a crash as CreateOutcomeUnknown, and retries once it is removed", func() {
		m := humanBoolean(ns, "crashed")
		m.Annotations = map[string]string{v1alpha1.CreatePendingAnnotation: "2026-11-21T10:00:00Z"}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		// The crash was just now: the create may still be in flight.
		up.opts.Clock = clocktesting.NewFakePassiveClock(testStart)
		startManager(up.opts)
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, time.Second).Should(BeZero())

		editStored(m, func() { delete(m.Annotations, v1alpha1.CreatePendingAnnotation) })
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(up.Creates()).To(Equal(1))
	})

	It("adopts an existing remote Metric by annotation without creating one", func() {
		startManager(up.opts)
		m := newMetric(ns, "adopted", variants()["ai-float"].spec)
		existing, err := up.opts.Service.CreateMetric(rootCtx, testKey, "proj-1", convert.RequestFor(&m.Spec))
		Expect(err).NotTo(HaveOccurred())
		m.Spec.APIKeySecretRef = ref()
		m.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: existing.ID}
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonAdopted))
		Expect(m.Status.ID).To(Equal(existing.ID))
		Expect(m.Status.EvalModelName).To(Equal("gpt-4o-mini"))
		Expect(m.Status.PassingThreshold).To(HaveValue(Equal(0.9)))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(1), "the one create above, by the test")
	})

	It("costs nothing in steady state: no upstream call and no write across a restart", func() {
		mgr := startManager(up.opts)
		ms := make([]*v1alpha1.Metric, 0, 5)
		for i := range 5 {
			m := humanBoolean(ns, fmt.Sprintf("steady-%d", i))
			Expect(k8s.Create(rootCtx, m)).To(Succeed())
			ms = append(ms, m)
		}
		versions := map[string]string{}
		for _, m := range ms {
			Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		}
		// Let the reconciles triggered by the operator's own writes settle.
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, time.Second).Should(Equal(5))
		for _, m := range ms {
			Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			versions[m.Name] = m.ResourceVersion
		}

		mgr.stop()
		reconciled := metricReconciles()
		startManager(up.opts)
		// A Secret change re-triggers every Metric that uses it, too.
		s := apiKeySecret(ns, testKey)
		s.Labels = map[string]string{"touched": "yes"}
		Expect(k8s.Update(rootCtx, s)).To(Succeed())
		// The new manager has reconciled every Metric: what follows is its verdict.
		Eventually(metricReconciles).Should(BeNumerically(">=", reconciled+float64(len(ms))))
		Consistently(func(g Gomega) {
			g.Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(5))
			for _, m := range ms {
				g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
				g.Expect(m.ResourceVersion).To(Equal(versions[m.Name]), m.Name)
			}
		}, 3*time.Second).Should(Succeed())
	})

	It("is Stalled on a 4xx and retries only when the spec changes", func() {
		up.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Status(http.StatusBadRequest))
		startManager(up.opts)
		m := humanBoolean(ns, "rejected")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRejected))
		Expect(meta.IsStatusConditionTrue(m.Status.Conditions, v1alpha1.ConditionStalled)).To(BeTrue())
		Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation), "a 400 created nothing")

		// A Secret change re-triggers the Metric, but the same spec is not sent again.
		s := apiKeySecret(ns, testKey)
		s.Labels = map[string]string{"touched": "yes"}
		Expect(k8s.Update(rootCtx, s)).To(Succeed())
		Consistently(func() int { return up.Calls(evalapitest.OpCreateMetric) }, 2*time.Second).Should(Equal(1))

		// A new generation is tried again.
		Expect(k8s.Create(rootCtx, namedKeySecret(ns, "other-key", testKey))).To(Succeed())
		editSpec(m, func(s *v1alpha1.MetricSpec) { s.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "other-key"} })
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(up.Creates()).To(Equal(1))
	})

	It("reports a missing Secret and a key that breaks the key rules, and never sends the latter", func() {
		startManager(up.opts)
		missing := humanBoolean(ns, "no-secret")
		missing.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "absent"}
		Expect(k8s.Create(rootCtx, missing)).To(Succeed())
		Eventually(readyCondition(missing)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound))

		bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"},
			StringData: map[string]string{"token": "sk_not_an_api_key"}}
		Expect(k8s.Create(rootCtx, bad)).To(Succeed())
		wrong := humanBoolean(ns, "wrong-key")
		wrong.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "bad", Key: "token"}
		Expect(k8s.Create(rootCtx, wrong)).To(Succeed())
		Eventually(readyCondition(wrong)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonInvalidCredentials))
		// A valid key with the trailing newline of `kubectl create secret --from-file`.
		Expect(k8s.Create(rootCtx, namedKeySecret(ns, "newline", testKey+"\n"))).To(Succeed())
		newline := humanBoolean(ns, "newline-key")
		newline.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: "newline"}
		Expect(k8s.Create(rootCtx, newline)).To(Succeed())
		Eventually(readyCondition(newline)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonInvalidCredentials))
		Expect(readyCondition(newline)(Default).Message).NotTo(ContainSubstring(strings.TrimPrefix(testKey, "ak_")))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(BeZero())

		// Creating the missing Secret re-triggers the Metric through the Secret watch.
		Expect(k8s.Create(rootCtx, namedKeySecret(ns, "absent", testKey))).To(Succeed())
		Eventually(readyCondition(missing)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(fmt.Sprint(readyCondition(wrong)(Default).Message)).NotTo(ContainSubstring("sk_not_an_api_key"))
	})

	It("uses --default-api-key-secret for objects without apiKeySecretRef, and waits for it to exist", func() {
		opts := up.opts
		opts.DefaultAPIKeySecret = "team-default-key"
		startManager(opts)
		m := humanBoolean(ns, "defaulted")
		m.Spec.APIKeySecretRef = nil
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound))
		Expect(meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady).Message).To(ContainSubstring("team-default-key"))

		Expect(k8s.Create(rootCtx, namedKeySecret(ns, "team-default-key", testKey))).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(up.Creates()).To(Equal(1))
	})

	It("is Stalled without a key when there is neither apiKeySecretRef nor a default, and sends nothing", func() {
		startManager(up.opts)
		m := humanBoolean(ns, "keyless")
		m.Spec.APIKeySecretRef = nil
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound))
		Expect(meta.IsStatusConditionTrue(m.Status.Conditions, v1alpha1.ConditionStalled)).To(BeTrue())
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(BeZero())
	})

	It("never writes the API key to logs, events or status", func() {
		up.SetKeys(testKey, rotatedKey)
		up.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Status500, evalapitest.Status429("1"),
			evalapitest.Status401)
		startManager(up.opts)
		m := humanBoolean(ns, "hygiene")
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonUnauthorized))
		Expect(k8s.Update(rootCtx, apiKeySecret(ns, rotatedKey))).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(up.Calls(evalapitest.OpCreateMetric)).To(Equal(4))

		var events eventsv1.EventList
		Expect(k8s.List(rootCtx, &events, client.InNamespace(ns))).To(Succeed())
		Expect(events.Items).NotTo(BeEmpty())
		blob, err := json.Marshal(events)
		Expect(err).NotTo(HaveOccurred())
		status, err := json.Marshal(m.Status)
		Expect(err).NotTo(HaveOccurred())
		for _, text := range []string{logs.String(), string(blob), string(status)} {
			for _, key := range []string{testKey, rotatedKey} {
				Expect(text).NotTo(ContainSubstring(strings.TrimPrefix(key, "ak_")))
			}
		}
	})

	It("runs standalone with the cluster as the system of record", func() {
		startManager(managerOptions{})
		m := newMetric(ns, "local", variants()["ai-int"].spec)
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(m.Status.ID).NotTo(BeEmpty())
		Expect(m.Status.EvalModelName).To(Equal("gpt-4o"))
		Expect(m.Status.PassingThreshold).To(HaveValue(Equal(3.0)))
		Expect(m.Status.Service).To(Equal("Standalone"), "the manager's flags, without --api-url")
	})

	It("takes a standalone Metric recorded as ManagerFlags by an earlier build as it is, and says Standalone", func() {
		mgr := startManager(managerOptions{})
		m := newMetric(ns, "local", variants()["ai-int"].spec)
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		id := m.Status.ID
		mgr.stop()

		// What an earlier build wrote for the manager's flags, with or without --api-url.
		m.Status.Service = "ManagerFlags"
		Expect(k8s.Status().Update(rootCtx, m)).To(Succeed())
		startManager(managerOptions{})
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			return m.Status.Service
		}).Should(Equal("Standalone"))
		Expect(m.Status.ID).To(Equal(id), "the same Metric, not a new one")
		Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.ServiceAnnotation, remote.Standalone))
		Expect(meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady)).To(
			haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(warningEvents(ns, "local")(Default)).To(BeEmpty())
	})

	It("writes a standalone Metric twice, id and status, with no create-pending guard", func() {
		watch := watchWrites(ns, &v1alpha1.MetricList{})
		startManager(managerOptions{})
		m := newMetric(ns, "local", variants()["ai-int"].spec)
		Expect(k8s.Create(rootCtx, m)).To(Succeed())
		Eventually(readyCondition(m)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))

		writes := writesUntilReady(watch)
		Expect(writes).To(HaveLen(3), "create, id annotation, status")
		for _, v := range writes {
			Expect(v.GetAnnotations()).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
		}
		Expect(writes[1].GetAnnotations()).To(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, m.Status.ID))
		Expect(eventReasons(ns, "local", corev1.EventTypeNormal)(Default)).To(ConsistOf(v1alpha1.ReasonCreated))
	})
})

// watchWrites watches the objects of list's kind in ns, from now on.
func watchWrites(ns string, list client.ObjectList) watchapi.Interface {
	GinkgoHelper()
	w, err := client.NewWithWatch(cfg, client.Options{Scheme: k8s.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	watch, err := w.Watch(rootCtx, list, client.InNamespace(ns))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(watch.Stop)
	return watch
}

// writesUntilReady returns the object as of each write the watch sees, in
// order, up to the first that is Ready.
func writesUntilReady(watch watchapi.Interface) []v1alpha1.Object {
	GinkgoHelper()
	var writes []v1alpha1.Object
	for len(writes) == 0 || !meta.IsStatusConditionTrue(*writes[len(writes)-1].GetConditions(), v1alpha1.ConditionReady) {
		var ev watchapi.Event
		Eventually(watch.ResultChan()).Should(Receive(&ev))
		writes = append(writes, ev.Object.(v1alpha1.Object))
	}
	return writes
}

func createdByID(up *upstream, id string) evalapitest.CreatedMetric {
	GinkgoHelper()
	for _, c := range up.CreatedMetrics() {
		if c.Metric.ID == id {
			return c
		}
	}
	Fail("the service holds no Metric " + id)
	return evalapitest.CreatedMetric{}
}

// warningEvents lists the reasons of the Warning events about an object.
func warningEvents(ns, name string) func(Gomega) []string {
	return eventReasons(ns, name, corev1.EventTypeWarning)
}

// eventReasons lists the reasons of the events of eventType about an object.
func eventReasons(ns, name, eventType string) func(Gomega) []string {
	return func(g Gomega) []string {
		var events eventsv1.EventList
		g.Expect(k8s.List(rootCtx, &events, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range events.Items {
			if e.Regarding.Name == name && e.Type == eventType {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}
}
