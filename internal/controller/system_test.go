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
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

const uuidPattern = `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`

func newSystem(ns, name string) *v1alpha1.System {
	return &v1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.SystemSpec{ProjectID: "proj-1", Name: v1alpha1.LineText("System " + name),
			Config: apiextensionsv1.JSON{Raw: []byte(`{"model":"gpt-4o"}`)}, APIKeySecretRef: ref()}}
}

func newSystemVersion(ns, name, system, config string) *v1alpha1.SystemVersion {
	return &v1alpha1.SystemVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.SystemVersionSpec{SystemRef: v1alpha1.ObjectRef{Name: system},
			Config: apiextensionsv1.JSON{Raw: []byte(config)}}}
}

// writeCounter counts the manager's writes to the API server.
type writeCounter struct{ n atomic.Int64 }

func (w *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.n.Add(1)
		}
		return rt.RoundTrip(req)
	})
}

// beReady matches a Ready condition that is True, whatever its reason.
var beReady = And(Not(BeNil()), HaveField("Status", metav1.ConditionTrue))

var _ = Describe("System and SystemVersion reconcilers", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	upserts := func() int {
		return up.Calls(evalapitest.OpUpsertSystem) + up.Calls(evalapitest.OpUpsertSystemVersion) +
			up.Calls(evalapitest.OpUpdateSystem) + up.Calls(evalapitest.OpDeleteSystem)
	}

	// readySystem starts the manager, drift read every 500ms, and returns
	// System bot once it is Ready.
	readySystem := func() *v1alpha1.System {
		GinkgoHelper()
		opts := up.opts
		opts.DriftInterval = 500 * time.Millisecond
		startManager(opts)
		s := newSystem(ns, "bot")
		Expect(k8s.Create(rootCtx, s)).To(Succeed())
		Eventually(readyCondition(s)).Should(beReady)
		return s
	}

	It("upserts a System and its versions, the same config is the same version, and an unchanged one costs no write", func() {
		mgr := startManager(up.opts)
		s := newSystem(ns, "bot")
		Expect(k8s.Create(rootCtx, s)).To(Succeed())
		Eventually(readyCondition(s)).Should(beReady)
		Expect(s.Status.ID).To(MatchRegexp(uuidPattern))
		Expect(s.Annotations).To(HaveKeyWithValue(v1alpha1.SystemIDAnnotation, s.Status.ID))
		held, ok := up.System(s.Status.ID)
		Expect(ok).To(BeTrue())
		Expect(held.Name).To(Equal("System bot"))
		Expect(s.Status.ProductionVersionID).To(Equal(held.ProductionVersion.ID))

		v := newSystemVersion(ns, "bot-canary", "bot", `{"image":"sha256:ab","model":"gpt-4o"}`)
		v.Spec.Name = ptr.To[v1alpha1.LineText]("canary")
		Expect(k8s.Create(rootCtx, v)).To(Succeed())
		Eventually(readyCondition(v)).Should(beReady)
		Expect(v.Status.ID).To(MatchRegexp(uuidPattern))
		Expect(v.Status.SystemID).To(Equal(s.Status.ID))
		Expect(v.Status.Name).To(Equal("canary"))
		Expect(v.Annotations).To(HaveKeyWithValue(v1alpha1.SystemVersionIDAnnotation, v.Status.ID))

		By("another object with the same config, keys in another order: the same version")
		same := newSystemVersion(ns, "bot-canary-copy", "bot", `{"model":"gpt-4o", "image":"sha256:ab"}`)
		Expect(k8s.Create(rootCtx, same)).To(Succeed())
		Eventually(readyCondition(same)).Should(beReady)
		Expect(same.Status.ID).To(Equal(v.Status.ID))
		Expect(up.SystemVersions()).To(HaveLen(2), "the System's first config and the canary's")

		By("a restart with nothing changed: reads at most, no write to the service or the API server")
		mgr.stop()
		before := upserts()
		writes := &writeCounter{}
		opts := up.opts
		opts.wrap = writes.wrap
		startManager(opts)
		Eventually(func() int { return up.Calls(evalapitest.OpGetSystemVersion) }).Should(BeNumerically(">=", 2))
		Consistently(upserts, 2*time.Second).Should(Equal(before))
		Expect(writes.n.Load()).To(BeZero())
	})

	It("puts back a name changed in the service, and deletes the remote System (not its versions) with the object", func() {
		s := readySystem()
		id, first := s.Status.ID, s.Status.ProductionVersionID

		_, err := serviceClient(up).UpdateSystem(rootCtx, testKey, id, evalapi.SystemUpdate{Name: ptr.To("renamed")})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() string { got, _ := up.System(id); return got.Name }).Should(Equal("System bot"))
		Expect(up.Systems("proj-1")).To(HaveLen(1), "however the rename fell among the operator's requests")
		Expect(up.Calls(evalapitest.OpUpsertSystem)).To(Equal(1))

		Expect(k8s.Delete(rootCtx, s)).To(Succeed())
		Eventually(func() error { return k8s.Get(rootCtx, client.ObjectKeyFromObject(s), s) }).Should(Satisfy(apierrors.IsNotFound))
		_, ok := up.System(id)
		Expect(ok).To(BeFalse())
		Expect(up.SystemVersions()).To(ContainElement(HaveField("ID", first)))
	})

	It("sends a changed spec to the recorded System by its id: a rename in the service meanwhile makes no second System", func() {
		s := readySystem()
		id := s.Status.ID

		By("a person renames the System in the service right after the operator's PATCH is answered")
		up.InjectFaults(evalapitest.OpUpdateSystem, evalapitest.Then(func() {
			up.EditSystem(id, func(name, _ *string) { *name = "renamed by hand" })
		}))
		Expect(k8s.Patch(rootCtx, s, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"config":{"model":"gpt-4o-mini"}}}`)))).To(Succeed())
		configOf := func(v evalapi.SystemVersion) string { return string(v.Config) }
		Eventually(up.SystemVersions).Should(ContainElement(And(HaveField("SystemID", id),
			WithTransform(configOf, MatchJSON(`{"model":"gpt-4o-mini"}`)))), "the new config, a version of the recorded System")
		Eventually(func() string { got, _ := up.System(id); return got.Name }).Should(Equal("System bot"))
		Consistently(func(g Gomega) {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			g.Expect(s.Status.ID).To(Equal(id))
			g.Expect(up.Systems("proj-1")).To(HaveLen(1))
		}, 2*time.Second).Should(Succeed())
		Expect(up.Calls(evalapitest.OpUpsertSystem)).To(Equal(1), "only the first upsert, by name, when no id was recorded")
	})

	It("waits for its System, and stops a second System of the same name in the project", func() {
		startManager(up.opts)
		v := newSystemVersion(ns, "early", "later", `{"model":"gpt-4o"}`)
		Expect(k8s.Create(rootCtx, v)).To(Succeed())
		Eventually(readyCondition(v)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonSystemNotReady))
		Expect(up.Calls(evalapitest.OpUpsertSystemVersion)).To(BeZero())

		s := newSystem(ns, "later")
		Expect(k8s.Create(rootCtx, s)).To(Succeed())
		Eventually(readyCondition(v)).Should(beReady)

		dup := newSystem(ns, "dup")
		dup.Spec.Name = s.Spec.Name
		Expect(k8s.Create(rootCtx, dup)).To(Succeed())
		Eventually(stalledReason(dup)).Should(Equal(v1alpha1.ReasonSystemIDClaimed))
		Expect(dup.Status.ID).To(BeEmpty())
	})

	It("links a run to the version it names, created once the version is Ready, and stops a run whose version id is no UUID", func() {
		startManager(up.opts)
		Expect(k8s.Create(rootCtx, newTestset(ns, "qa", inline(`{"id":"a","question":"q0"}`)))).To(Succeed())
		Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		e := newRun(ns, "canary", "exact")
		e.Spec.SystemVersionRef = &v1alpha1.ObjectRef{Name: "bot-canary"}
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		Eventually(readyCondition(e)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonReferencesNotReady),
			HaveField("Message", ContainSubstring("SystemVersion bot-canary not found"))))

		s := newSystem(ns, "bot")
		Expect(k8s.Create(rootCtx, s)).To(Succeed())
		v := newSystemVersion(ns, "bot-canary", "bot", `{"image":"sha256:ab"}`)
		Expect(k8s.Create(rootCtx, v)).To(Succeed())
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(e), e)).To(Succeed())
			return e.Status.RunID
		}).ShouldNot(BeEmpty())
		Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(v), v)).To(Succeed())
		Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		Expect(e.Status.SystemVersionID).To(Equal(v.Status.ID))
		Expect(e.Status.SystemID).To(Equal(s.Status.ID))
		run, ok := up.Run(e.Status.RunID)
		Expect(ok).To(BeTrue())
		Expect(run.SystemVersionID).To(HaveValue(Equal(v.Status.ID)))
		Expect(run.SystemID).To(HaveValue(Equal(s.Status.ID)))

		bad := newRun(ns, "revision", "exact")
		bad.Spec.SystemVersionID = "rev-abc123"
		Expect(k8s.Create(rootCtx, bad)).To(Succeed())
		Eventually(stalledReason(bad)).Should(Equal(v1alpha1.ReasonInvalidSystemVersionID))
		Expect(up.Runs()).To(HaveLen(1))
	})

	It("assigns UUIDs on a standalone service, the same config the same version", func() {
		up.opts.Service = nil
		startManager(up.opts)
		s := newSystem(ns, "bot")
		Expect(k8s.Create(rootCtx, s)).To(Succeed())
		Eventually(readyCondition(s)).Should(beReady)
		Expect(s.Status.ID).To(MatchRegexp(uuidPattern))
		Expect(s.Finalizers).To(BeEmpty(), "nothing remote to delete")

		v := newSystemVersion(ns, "v1", "bot", `{"image":"sha256:ab"}`)
		Expect(k8s.Create(rootCtx, v)).To(Succeed())
		Eventually(readyCondition(v)).Should(beReady)
		same := newSystemVersion(ns, "v1-copy", "bot", `{ "image": "sha256:ab" }`)
		Expect(k8s.Create(rootCtx, same)).To(Succeed())
		Eventually(readyCondition(same)).Should(beReady)
		Expect(same.Status.ID).To(Equal(v.Status.ID))
		Expect(v.Status.ID).To(MatchRegexp(uuidPattern))
		Expect(v.Status.SystemID).To(Equal(s.Status.ID))
	})
})
