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

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

// jsonLines are testcases keys from..to-1 as JSON Lines, each keyed by "id".
func jsonLines(from, to int, answer string) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "{\"id\":\"case-%04d\",\"question\":\"what is %d?\",\"answer\":%q}\n", i, i, answer)
	}
	return b.String()
}

func testcasesConfigMap(ns, name, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data: map[string]string{"testcases.jsonl": data}}
}

func newTestset(ns, name string, source func(*v1alpha1.TestsetSpec)) *v1alpha1.Testset {
	t := &v1alpha1.Testset{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.TestsetSpec{ProjectID: "proj-1", Name: v1alpha1.LineText("set " + name), KeyField: "id",
			FieldMapping:    v1alpha1.TestsetFieldMapping{Inputs: []v1alpha1.FieldName{"question"}, Expected: []v1alpha1.FieldName{"answer"}},
			APIKeySecretRef: ref()},
	}
	source(&t.Spec)
	return t
}

func fromConfigMap(name string) func(*v1alpha1.TestsetSpec) {
	return func(s *v1alpha1.TestsetSpec) { s.ConfigMapRef = &v1alpha1.ConfigMapTestcases{Name: name} }
}

func inline(items ...string) func(*v1alpha1.TestsetSpec) {
	return func(s *v1alpha1.TestsetSpec) {
		for _, it := range items {
			s.Inline = append(s.Inline, runtime.RawExtension{Raw: []byte(it)})
		}
	}
}

// remoteAnswers are the answers of the remote testcases of testset id, by key.
func remoteAnswers(up *upstream, id string) map[string]string {
	out := map[string]string{}
	for _, tc := range up.Testcases(id) {
		var data struct{ ID, Answer string }
		Expect(json.Unmarshal(tc.JSONData, &data)).To(Succeed())
		out[data.ID] = data.Answer
	}
	return out
}

// syncedCondition reads obj's Synced condition.
func syncedCondition(obj client.Object) func(Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		return meta.FindStatusCondition(*obj.(interface{ GetConditions() *[]metav1.Condition }).GetConditions(), v1alpha1.ConditionSynced)
	}
}

// serviceClient is a client of up, as someone changing the service outside the cluster.
func serviceClient(up *upstream) *evalapi.Client {
	GinkgoHelper()
	c, err := evalapi.NewClient(evalapi.Options{BaseURL: up.URL(), Timeout: 2 * time.Second})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// touch calls for a reconcile of obj, as a person's retry would.
func touch(obj client.Object) {
	GinkgoHelper()
	setAnnotation(obj, v1alpha1.RetryAnnotation, ptrTo(time.Now().Format(time.RFC3339Nano)))
}

// publish serves files as revision's artifact of repo on a.
func publish(a *framework.ArtifactServer, repo *sourcev1.GitRepository, revision string, files map[string]string) *fluxmeta.Artifact {
	GinkgoHelper()
	artifact, err := a.Publish(repo.Namespace, repo.Name, revision, files)
	Expect(err).NotTo(HaveOccurred())
	return artifact
}

// setArtifact sets repo's status as source-controller does for a new revision.
func setArtifact(repo *sourcev1.GitRepository, a *fluxmeta.Artifact) {
	GinkgoHelper()
	Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(repo), repo)).To(Succeed())
	repo.Status.Artifact = a
	meta.SetStatusCondition(&repo.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue,
		Reason: "Succeeded", Message: "stored artifact for revision " + a.Revision, ObservedGeneration: repo.Generation})
	Expect(k8s.Status().Update(rootCtx, repo)).To(Succeed())
}

var _ = Describe("Testset reconciler", func() {
	var (
		ns string
		up *upstream
	)
	BeforeEach(func() { ns, up = newFixture() })

	calls := func(ops ...string) map[string]int {
		out := map[string]int{}
		for _, op := range ops {
			out[op] = up.Calls(op)
		}
		return out
	}
	writes := []string{evalapitest.OpCreateTestset, evalapitest.OpUpdateTestset, evalapitest.OpCreateTestcases,
		evalapitest.OpUpdateTestcase, evalapitest.OpBulkDeleteTestcases, evalapitest.OpDeleteTestset}
	allOps := append([]string{evalapitest.OpGetTestset, evalapitest.OpListTestcases, evalapitest.OpListTestsets}, writes...)

	It("syncs a ConfigMap's testcases in creates of 100, edits, shrinks and deletes the set, and an unchanged source costs no call", func() {
		mgr := startManager(up.opts)
		Expect(k8s.Create(rootCtx, testcasesConfigMap(ns, "cases", jsonLines(0, 250, "a")))).To(Succeed())
		t := newTestset(ns, "qa", fromConfigMap("cases"))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		id := t.Status.ID
		Expect(t.Annotations).To(HaveKeyWithValue(v1alpha1.TestsetIDAnnotation, id))
		Expect(t.Status.Testcases).To(BeEquivalentTo(250))
		Expect(t.Status.Digest).To(HavePrefix("sha256:"))
		Expect(remoteAnswers(up, id)).To(HaveLen(250))
		held, ok := up.Testset(id)
		Expect(ok).To(BeTrue())
		Expect(held.Name).To(Equal("set qa"))
		Expect(held.FieldMapping.Inputs).To(Equal([]string{"question"}))
		Expect(calls(evalapitest.OpCreateTestset, evalapitest.OpCreateTestcases)).To(Equal(map[string]int{
			evalapitest.OpCreateTestset: 1, evalapitest.OpCreateTestcases: 3}))

		By("a restart with the source unchanged: no call at all")
		mgr.stop()
		before := calls(allOps...)
		startManager(up.opts)
		Consistently(func() map[string]int { return calls(allOps...) }, 2*time.Second).Should(Equal(before))

		By("one testcase edited: one sweep and one update")
		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(rootCtx, client.ObjectKey{Namespace: ns, Name: "cases"}, cm)).To(Succeed())
		cm.Data["testcases.jsonl"] = jsonLines(0, 7, "a") + jsonLines(7, 8, "b") + jsonLines(8, 250, "a")
		Expect(k8s.Update(rootCtx, cm)).To(Succeed())
		Eventually(func() string { return remoteAnswers(up, id)["case-0007"] }).Should(Equal("b"))
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(t), t)).To(Succeed())
			return t.Status.Digest
		}).ShouldNot(Equal(before))
		after := calls(allOps...)
		Expect(after[evalapitest.OpUpdateTestcase] - before[evalapitest.OpUpdateTestcase]).To(Equal(1))
		Expect(after[evalapitest.OpListTestcases] - before[evalapitest.OpListTestcases]).To(Equal(3)) // one sweep of 250
		Expect(after[evalapitest.OpCreateTestcases]).To(Equal(before[evalapitest.OpCreateTestcases]))
		Expect(after[evalapitest.OpCreateTestset]).To(Equal(1))
		Eventually(readyCondition(t)).Should(HaveField("Message", HaveSuffix("; this sync: 1 updated")))
		Eventually(func() []string { return eventNotes(ns) }).Should(ContainElement(HaveSuffix("; this sync: 1 updated")))

		By("the source shrinks and grows: removed keys bulk-deleted, new ones created")
		Expect(k8s.Get(rootCtx, client.ObjectKey{Namespace: ns, Name: "cases"}, cm)).To(Succeed())
		cm.Data["testcases.jsonl"] = jsonLines(100, 260, "a")
		Expect(k8s.Update(rootCtx, cm)).To(Succeed())
		Eventually(func() int { return len(remoteAnswers(up, id)) }).Should(Equal(160))
		Eventually(func(g Gomega) int32 {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(t), t)).To(Succeed())
			return t.Status.Testcases
		}).Should(BeEquivalentTo(160))
		Expect(remoteAnswers(up, id)).To(HaveKey("case-0259"))
		Expect(remoteAnswers(up, id)).NotTo(HaveKey("case-0099"))
		Expect(up.DeletedTestcases()).To(HaveLen(100))
		Expect(up.Calls(evalapitest.OpCreateTestset)).To(Equal(1))
		// Ready keeps its reason; the sync still has its event.
		Eventually(func() []string { return eventNotes(ns) }).Should(ContainElement(HaveSuffix("; this sync: 10 added, 100 removed")))

		By("deleting the Testset deletes the remote Testset")
		Expect(k8s.Delete(rootCtx, t)).To(Succeed())
		Eventually(func() error { return k8s.Get(rootCtx, client.ObjectKeyFromObject(t), t) }).Should(Satisfy(apierrors.IsNotFound))
		Expect(up.DeletedTestsets()).To(Equal([]string{id}))
		_, held2 := up.Testset(id)
		Expect(held2).To(BeFalse())
	})

	It("refuses a second Testset recording the same remote id: it sends nothing and deletes nothing", func() {
		startManager(up.opts)
		holder := newTestset(ns, "holder", inline(`{"id":"a","answer":"1"}`))
		Expect(k8s.Create(rootCtx, holder)).To(Succeed())
		Eventually(readyCondition(holder)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		id := holder.Status.ID
		before := calls(allOps...)

		By("a copy of the manifest with its testset-id annotation and other testcases")
		copied := newTestset(ns, "copied", inline(`{"id":"z","answer":"26"}`))
		copied.Annotations = map[string]string{v1alpha1.TestsetIDAnnotation: id}
		Expect(k8s.Create(rootCtx, copied)).To(Succeed())
		Eventually(readyCondition(copied)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonTestsetIDClaimed),
			HaveField("Message", ContainSubstring("Testset holder of this namespace already holds remote id "+id))))
		Expect(calls(allOps...)).To(Equal(before), "the copy called nothing")
		Expect(remoteAnswers(up, id)).To(Equal(map[string]string{"a": "1"}))

		By("deleting the copy leaves the holder's remote Testset")
		Expect(k8s.Delete(rootCtx, copied)).To(Succeed())
		Eventually(func() error { return k8s.Get(rootCtx, client.ObjectKeyFromObject(copied), copied) }).Should(Satisfy(apierrors.IsNotFound))
		Expect(up.DeletedTestsets()).To(BeEmpty())
		_, held := up.Testset(id)
		Expect(held).To(BeTrue())

		By("an invalid id is refused before anything is looked up")
		invalid := newTestset(ns, "invalid", inline(`{"id":"a"}`))
		invalid.Annotations = map[string]string{v1alpha1.TestsetIDAnnotation: "bad id"}
		Expect(k8s.Create(rootCtx, invalid)).To(Succeed())
		Eventually(readyCondition(invalid)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonInvalidTestsetID))
		Expect(calls(allOps...)).To(Equal(before))
	})

	It("sends nothing while the source holds bad data, and names the lines", func() {
		startManager(up.opts)
		Expect(k8s.Create(rootCtx, testcasesConfigMap(ns, "bad", jsonLines(0, 5, "a")+jsonLines(3, 4, "b")))).To(Succeed())
		t := newTestset(ns, "bad", fromConfigMap("bad"))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonDuplicateKey),
			HaveField("Message", ContainSubstring("line 4 and 6 have the same id \"case-0003\""))))
		Expect(calls(allOps...)).To(HaveEach(0))

		By("a missing ConfigMap is waited for; a line that is not JSON is named")
		missing := newTestset(ns, "missing", fromConfigMap("later"))
		Expect(k8s.Create(rootCtx, missing)).To(Succeed())
		Eventually(readyCondition(missing)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonSourceNotReady))
		Expect(k8s.Create(rootCtx, testcasesConfigMap(ns, "later", jsonLines(0, 2, "a")+"{\"id\": \"x\",\n"))).To(Succeed())
		Eventually(readyCondition(missing)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonInvalidTestcases),
			HaveField("Message", ContainSubstring("line 3 is not a JSON object"))))
		Expect(calls(allOps...)).To(HaveEach(0))

		By("fixed, the whole set is sent")
		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(rootCtx, client.ObjectKey{Namespace: ns, Name: "bad"}, cm)).To(Succeed())
		cm.Data["testcases.jsonl"] = jsonLines(0, 5, "a")
		Expect(k8s.Update(rootCtx, cm)).To(Succeed())
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(remoteAnswers(up, t.Status.ID)).To(HaveLen(5))
	})

	It("restores testcases changed outside the cluster, and with only Observe reports the difference and sends nothing", func() {
		clock := clocktesting.NewFakePassiveClock(testStart)
		up.opts.Clock = clock
		up.opts.DriftInterval = time.Minute
		startManager(up.opts)
		t := newTestset(ns, "inline", inline(`{"id":"a","answer":"1"}`, `{"id":"b","answer":"2"}`))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		id := t.Status.ID
		Expect(remoteAnswers(up, id)).To(Equal(map[string]string{"a": "1", "b": "2"}))

		By("someone edits a testcase and adds one in the service; the drift check restores the source's")
		_, err := serviceClient(up).CreateTestcases(rootCtx, testKey, id, []json.RawMessage{json.RawMessage(`{"id":"c","answer":"3"}`)})
		Expect(err).NotTo(HaveOccurred())
		for _, tc := range up.Testcases(id) {
			if strings.Contains(string(tc.JSONData), `"a"`) {
				_, err := serviceClient(up).UpdateTestcase(rootCtx, testKey, tc.ID, json.RawMessage(`{"id":"a","answer":"changed"}`))
				Expect(err).NotTo(HaveOccurred())
			}
		}
		clock.SetTime(testStart.Add(2 * time.Minute))
		touch(t)
		Eventually(func() map[string]string { return remoteAnswers(up, id) }).Should(Equal(map[string]string{"a": "1", "b": "2"}))

		By("with only Observe, an edit of the source is reported and not sent")
		before := calls(writes...)
		editStored(t, func() {
			t.Spec.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementObserve}
			t.Spec.Inline = []runtime.RawExtension{{Raw: []byte(`{"id":"a","answer":"1"}`)}, {Raw: []byte(`{"id":"z","answer":"26"}`)}}
		})
		Eventually(syncedCondition(t)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonDrifted),
			HaveField("Message", ContainSubstring("1 to create, 0 to update, 1 to delete"))))
		Expect(readyCondition(t)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonObserved))
		Expect(calls(writes...)).To(Equal(before))
	})

	It("settles a create whose answer was lost from the service's list, never creating twice", func() {
		clock := clocktesting.NewFakePassiveClock(testStart)
		up.opts.Clock = clock
		up.InjectFaults(evalapitest.OpCreateTestset, evalapitest.CommitThenReset)
		startManager(up.opts)
		t := newTestset(ns, "lost", inline(`{"id":"a","answer":"1"}`))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))
		Expect(t.Annotations).To(HaveKey(v1alpha1.CreatePendingAnnotation))

		clock.SetTime(testStart.Add(time.Minute))
		touch(t)
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		Expect(up.Calls(evalapitest.OpCreateTestset)).To(Equal(1))
		Expect(up.Calls(evalapitest.OpListTestsets)).To(Equal(1))
		Expect(t.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
		Expect(remoteAnswers(up, t.Status.ID)).To(Equal(map[string]string{"a": "1"}))
		Expect(eventReasons(ns, t.Name, corev1.EventTypeNormal)(Default)).To(ContainElement(v1alpha1.ReasonRecovered))
	})

	It("deletes the Testset a lost create made when the object is deleted meanwhile", func() {
		clock := clocktesting.NewFakePassiveClock(testStart)
		up.opts.Clock = clock
		up.InjectFaults(evalapitest.OpCreateTestset, evalapitest.CommitThenReset)
		startManager(up.opts)
		t := newTestset(ns, "gone", inline(`{"id":"a"}`))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))
		Expect(k8s.Delete(rootCtx, t)).To(Succeed())
		Consistently(func() error { return k8s.Get(rootCtx, client.ObjectKeyFromObject(t), t) }, time.Second).Should(Succeed())

		clock.SetTime(testStart.Add(time.Minute))
		touch(t)
		Eventually(func() error { return k8s.Get(rootCtx, client.ObjectKeyFromObject(t), t) }).Should(Satisfy(apierrors.IsNotFound))
		Expect(up.DeletedTestsets()).To(HaveLen(1))
		_, held := up.Testset(up.DeletedTestsets()[0])
		Expect(held).To(BeFalse())
	})

	It("sweeps again when a testcase it updates was deleted meanwhile, instead of taking the Testset for gone", func() {
		startManager(up.opts)
		t := newTestset(ns, "raced", inline(`{"id":"a","answer":"1"}`, `{"id":"b","answer":"2"}`))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))

		up.InjectFaults(evalapitest.OpUpdateTestcase, evalapitest.Status(http.StatusNotFound))
		editStored(t, func() { t.Spec.Inline[0] = runtime.RawExtension{Raw: []byte(`{"id":"a","answer":"one"}`)} })
		Eventually(func() map[string]string { return remoteAnswers(up, t.Status.ID) }).Should(HaveKeyWithValue("a", "one"))
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonSynced))
		Expect(up.Calls(evalapitest.OpUpdateTestcase)).To(Equal(2))
		Expect(up.Calls(evalapitest.OpCreateTestset)).To(Equal(1))
	})

	It("retries a failed testcase create and finishes the set without duplicates", func() {
		up.InjectFaults(evalapitest.OpCreateTestcases, evalapitest.Status500)
		startManager(up.opts)
		Expect(k8s.Create(rootCtx, testcasesConfigMap(ns, "cases", jsonLines(0, 150, "a")))).To(Succeed())
		t := newTestset(ns, "retry", fromConfigMap("cases"))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		// The remote Testset was created by the first attempt; the retry syncs it.
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonSynced))
		Expect(up.Testcases(t.Status.ID)).To(HaveLen(150))
		Expect(up.Calls(evalapitest.OpCreateTestset)).To(Equal(1))
	})

	It("syncs a Flux GitRepository's file, follows its new revisions and refuses an artifact that does not match its digest", func() {
		artifacts := framework.NewArtifactServer()
		DeferCleanup(artifacts.Close)
		up.opts.Artifacts.Hosts = artifactHosts(artifacts.Server)
		startManager(up.opts)
		repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evals"},
			Spec: sourcev1.GitRepositorySpec{URL: "https://git.example.com/evals.git", Interval: metav1.Duration{Duration: time.Minute}}}
		Expect(k8s.Create(rootCtx, repo)).To(Succeed())
		t := newTestset(ns, "git", func(s *v1alpha1.TestsetSpec) {
			s.SourceRef = &v1alpha1.FluxSourceTestcases{Kind: "GitRepository", Name: "evals", Path: "evals/qa.jsonl"}
		})
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonSourceNotReady),
			HaveField("Message", ContainSubstring("no artifact yet"))))

		setArtifact(repo, publish(artifacts, repo, "main@sha1:1111", map[string]string{
			"README.md": "prompts and evals", "evals/qa.jsonl": jsonLines(0, 120, "a")}))
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCreated))
		id := t.Status.ID
		Expect(remoteAnswers(up, id)).To(HaveLen(120))

		By("a new revision with one testcase changed and one removed")
		setArtifact(repo, publish(artifacts, repo, "main@sha1:2222", map[string]string{
			"evals/qa.jsonl": jsonLines(0, 5, "a") + jsonLines(5, 6, "b") + jsonLines(6, 119, "a")}))
		Eventually(func() map[string]string { return remoteAnswers(up, id) }).Should(And(HaveLen(119), HaveKeyWithValue("case-0005", "b")))

		By("an artifact whose bytes are not those its digest names: nothing is sent")
		before := calls(writes...)
		bad := publish(artifacts, repo, "main@sha1:3333", map[string]string{"evals/qa.jsonl": jsonLines(0, 3, "c")})
		bad.Digest = "sha256:" + strings.Repeat("0", 64)
		setArtifact(repo, bad)
		Eventually(readyCondition(t)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonSourceNotReady),
			HaveField("Message", ContainSubstring("the artifact's sha256 is"))))
		Expect(calls(writes...)).To(Equal(before))

		By("a revision without the file")
		setArtifact(repo, publish(artifacts, repo, "main@sha1:4444", map[string]string{"README.md": "moved"}))
		Eventually(readyCondition(t)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonSourceNotReady),
			HaveField("Message", ContainSubstring("the artifact has no file evals/qa.jsonl"))))
		Expect(calls(writes...)).To(Equal(before))
		Expect(remoteAnswers(up, id)).To(HaveLen(119))
	})

	It("takes a standalone Testset's id from the cluster and calls nothing", func() {
		up.opts.Service = nil
		startManager(up.opts)
		t := newTestset(ns, "local", inline(`{"id":"a"}`))
		Expect(k8s.Create(rootCtx, t)).To(Succeed())
		Eventually(readyCondition(t)).Should(haveReason(metav1.ConditionTrue, v1alpha1.ReasonSynced))
		Expect(t.Status.ID).To(HavePrefix("tst_"))
		Expect(t.Annotations).To(HaveKeyWithValue(v1alpha1.TestsetIDAnnotation, t.Status.ID))
		Expect(t.Status.Testcases).To(BeEquivalentTo(1))
		Expect(t.Finalizers).To(BeEmpty())

		By("an edit: the status and an event say what changed, as the cluster is the record")
		Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(t), t)).To(Succeed())
		t.Spec.Inline = nil
		inline(`{"id":"a","q":"edited"}`, `{"id":"b"}`)(&t.Spec)
		Expect(k8s.Update(rootCtx, t)).To(Succeed())
		want := "2 testcases validated (1 added, 1 updated); the cluster is their record (standalone service)"
		Eventually(readyCondition(t)).Should(HaveField("Message", want))
		Eventually(func() []string { return eventNotes(ns) }).Should(ContainElement(want))
		Expect(calls(allOps...)).To(HaveEach(0))
	})
})

// eventNotes are the notes of the events in namespace ns.
func eventNotes(ns string) []string {
	GinkgoHelper()
	var events eventsv1.EventList
	Expect(k8s.List(rootCtx, &events, client.InNamespace(ns))).To(Succeed())
	notes := make([]string, len(events.Items))
	for i, e := range events.Items {
		notes[i] = e.Note
	}
	return notes
}
