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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// runMetric is a Metric of project proj-1, the project of the runs' Testsets.
func runMetric(ns, name, evalType, outputType string) *v1alpha1.Metric {
	spec := v1alpha1.MetricSpec{ProjectID: "proj-1", Name: v1alpha1.LineText(name),
		EvalType: v1alpha1.EvalType(evalType), OutputType: v1alpha1.OutputType(outputType), APIKeySecretRef: ref()}
	if evalType == evalapi.EvalTypeAI {
		spec.PromptTemplate = ptr.To[v1alpha1.Text]("Rate {{outputs.response}}")
	}
	return &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

func newRun(ns, name string, metrics ...string) *v1alpha1.EvaluationRun {
	e := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.EvaluationRunSpec{ProjectID: "proj-1", TestsetRef: &v1alpha1.ObjectRef{Name: "qa"},
			APIKeySecretRef: ref()}}
	for _, m := range metrics {
		e.Spec.MetricRefs = append(e.Spec.MetricRefs, v1alpha1.ObjectRef{Name: m})
	}
	return e
}

// execute creates one record per testcase of run id (the two of Testset
// qa), as an executor does.
func execute(up *upstream, runID string) {
	GinkgoHelper()
	for i := range 2 {
		_, err := serviceClient(up).CreateRecord(rootCtx, testKey, runID, evalapi.RecordRequest{
			Inputs: json.RawMessage(fmt.Sprintf(`{"question":"q%d"}`, i)), Expected: json.RawMessage(`{}`),
			Outputs: json.RawMessage(fmt.Sprintf(`{"answer":"a%d"}`, i))})
		Expect(err).NotTo(HaveOccurred())
	}
}

// runID waits for e's remote run id.
func runID(e *v1alpha1.EvaluationRun) string {
	GinkgoHelper()
	Eventually(func(g Gomega) string {
		g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(e), e)).To(Succeed())
		return e.RecordedID()
	}).ShouldNot(BeEmpty())
	return e.RecordedID()
}

// judged waits for e's verdict.
func judged(e *v1alpha1.EvaluationRun) v1alpha1.Verdict {
	GinkgoHelper()
	Eventually(func(g Gomega) v1alpha1.Verdict {
		g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(e), e)).To(Succeed())
		return e.Status.Verdict
	}, 20*time.Second).ShouldNot(BeEmpty())
	return e.Status.Verdict
}

func passedCondition(e *v1alpha1.EvaluationRun) *metav1.Condition {
	return meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionPassed)
}

var _ = Describe("EvaluationRun reconciler", func() {
	var (
		ns  string
		up  *upstream
		mgr *manager
	)
	BeforeEach(func() {
		ns, up = newFixture()
		up.opts.AllowPrivateServiceAddresses = true // a namespace's service names the fake on loopback
		mgr = startManager(up.opts)
		Expect(k8s.Create(rootCtx, newTestset(ns, "qa", inline(`{"id":"a","question":"q0"}`, `{"id":"b","question":"q1"}`)))).To(Succeed())
	})

	It("creates the run once when its Testset and Metrics are Ready, follows it, and judges it Passed", func() {
		e := newRun(ns, "release-42", "exact", "quality")
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		Eventually(readyCondition(e)).Should(And(haveReason(metav1.ConditionFalse, v1alpha1.ReasonReferencesNotReady),
			HaveField("Message", And(ContainSubstring("Metric exact not found"), ContainSubstring("Metric quality not found")))),
			"every unmet reference is named at once")
		Expect(up.Calls(evalapitest.OpCreateRun)).To(BeZero(), "nothing is called until the references are Ready")

		Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		Expect(k8s.Create(rootCtx, runMetric(ns, "quality", "ai", "int"))).To(Succeed())
		id := runID(e)
		Eventually(readyCondition(e)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonRunning))
		Expect(e.Status.ExpectedRecords).To(HaveValue(BeEquivalentTo(2)))

		execute(up, id)
		Expect(judged(e)).To(Equal(v1alpha1.Verdict("Passed")))
		Expect(readyCondition(e)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted))
		Expect(passedCondition(e)).To(haveReason(metav1.ConditionTrue, "Passed"))
		Expect(e.Status.Phase).To(Equal(evalapi.RunCompleted))
		Expect(e.Status.Records).To(BeEquivalentTo(2))
		Expect(e.Status.Metrics).To(HaveLen(2))
		for _, m := range e.Status.Metrics {
			Expect(m.Passed).To(BeEquivalentTo(2), m.Name)
			Expect(m.Failed).To(BeZero(), m.Name)
			Expect(m.PassRate).To(HaveValue(BeEquivalentTo(1.0)))
		}
		Expect(up.Calls(evalapitest.OpCreateRun)).To(Equal(1))
		run, ok := up.Run(id)
		Expect(ok).To(BeTrue())
		Expect(run.TestsetID).To(HaveValue(Equal(testsetIDOf(ns, "qa"))))
	})

	It("fails a run below its minimum pass rate, and leaves a human Metric out of the verdict", func() {
		up.SetScorer(func(_ evalapi.Metric, r evalapi.Record) json.RawMessage {
			return json.RawMessage(fmt.Sprintf(`{"binaryScore":%t}`, string(r.Inputs) == `{"question":"q0"}`))
		})
		Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		Expect(k8s.Create(rootCtx, runMetric(ns, "tone", "human", "boolean"))).To(Succeed())
		e := newRun(ns, "half", "exact", "tone")
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		execute(up, runID(e))
		Expect(judged(e)).To(Equal(v1alpha1.Verdict("Failed")))
		Expect(passedCondition(e)).To(And(haveReason(metav1.ConditionFalse, "Failed"),
			HaveField("Message", ContainSubstring("Metric exact is below its minimum pass rate"))))
		Expect(e.Status.Phase).To(Equal(evalapi.RunAwaitingHumanScoring), "judged without the human scores")
		Expect(e.Status.Metrics[0]).To(And(HaveField("Passed", BeEquivalentTo(1)), HaveField("Failed", BeEquivalentTo(1)),
			HaveField("Judged", BeTrue())))
		Expect(e.Status.Metrics[1]).To(And(HaveField("Unscored", BeEquivalentTo(2)), HaveField("Judged", BeFalse())))

		By("a pass rate of 0.5 is enough for the same scores")
		lenient := newRun(ns, "lenient", "exact", "tone")
		lenient.Spec.PassCriteria.Metrics = []v1alpha1.MetricPassCriteria{{Name: "exact", MinPassRate: 0.5}}
		Expect(k8s.Create(rootCtx, lenient)).To(Succeed())
		execute(up, runID(lenient))
		Expect(judged(lenient)).To(Equal(v1alpha1.Verdict("Passed")))
	})

	It("judges a run whose scores never come Inconclusive at its timeout", func() {
		up.SetScorer(nil)
		Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		e := newRun(ns, "stuck", "exact")
		e.Spec.Timeout = &metav1.Duration{Duration: 3 * time.Second}
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		execute(up, runID(e))
		Expect(judged(e)).To(Equal(v1alpha1.Verdict("Inconclusive")))
		Expect(e.Status.Phase).To(Equal(evalapi.RunRunningScoring))
		Expect(passedCondition(e)).To(haveReason(metav1.ConditionUnknown, "Inconclusive"))
		Expect(readyCondition(e)(Default)).To(haveReason(metav1.ConditionTrue, v1alpha1.ReasonCompleted),
			"a finished run is Ready whatever its verdict")
	})

	It("never creates a run twice: a create whose answer was lost waits for a person", func() {
		Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		up.InjectFaults(evalapitest.OpCreateRun, evalapitest.CommitThenReset)
		e := newRun(ns, "lost", "exact")
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		Eventually(readyCondition(e)).Should(haveReason(metav1.ConditionFalse, v1alpha1.ReasonCreateOutcomeUnknown))
		touch(e)
		Consistently(func() int { return up.Calls(evalapitest.OpCreateRun) }, 2*time.Second).Should(Equal(1))
		Expect(up.Runs()).To(HaveLen(1))

		By("a person records the run's id: it is followed from there")
		setAnnotation(e, v1alpha1.RunIDAnnotation, ptrTo(up.Runs()[0].ID))
		execute(up, up.Runs()[0].ID)
		Expect(judged(e)).To(Equal(v1alpha1.Verdict("Passed")))
		Expect(up.Calls(evalapitest.OpCreateRun)).To(Equal(1))
	})

	Context("with an executor", func() {
		executor := func(e *v1alpha1.EvaluationRun) *v1alpha1.EvaluationRun {
			e.Spec.Executor = &v1alpha1.Executor{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "system", Image: "example.com/support-assistant:1.4",
					Env: []corev1.EnvVar{{Name: "EVAL_RUN_ID", Value: "set-by-hand"}, {Name: "MODEL", Value: "m-2"}}}}}}}
			return e
		}
		executorJob := func(e *v1alpha1.EvaluationRun) *batchv1.Job {
			GinkgoHelper()
			job := &batchv1.Job{}
			Eventually(func() error { return k8s.Get(rootCtx, client.ObjectKeyFromObject(e), job) }).Should(Succeed())
			return job
		}

		// failJob writes job's status as the Job controller does when it
		// gives up: started, then FailureTarget and Failed for reason.
		failJob := func(job *batchv1.Job, reason, message string) {
			GinkgoHelper()
			now := metav1.Now()
			job.Status.StartTime = &now
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message,
					LastTransitionTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message,
					LastTransitionTime: now},
			}
			Expect(k8s.Status().Update(rootCtx, job)).To(Succeed())
		}

		It("starts one Job once the run exists, with the run's ids and the key by reference, and judges a failed one at once", func() {
			Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
			e := executor(newRun(ns, "nightly", "exact"))
			e.Spec.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			id := runID(e)
			job := executorJob(e)
			Expect(metav1.IsControlledBy(job, e)).To(BeTrue(), "deleting the run deletes its Job")
			Expect(job.Spec.BackoffLimit).To(HaveValue(BeZero()), "a second attempt would write the records twice")
			Expect(job.Spec.ActiveDeadlineSeconds).To(HaveValue(BeEquivalentTo(600)))
			Expect(job.Spec.Template.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
			Expect(job.Spec.Template.Spec.ServiceAccountName).To(Equal("default"), "no service names an account")
			Expect(job.Spec.Template.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()), "nor grants a token")
			env := job.Spec.Template.Spec.Containers[0].Env
			Expect(env).To(ConsistOf(
				corev1.EnvVar{Name: "MODEL", Value: "m-2"},
				corev1.EnvVar{Name: "EVAL_API_URL", Value: up.URL()},
				corev1.EnvVar{Name: "EVAL_API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: secretName}, Key: v1alpha1.DefaultAPIKeySecretKey}}},
				corev1.EnvVar{Name: "EVAL_RUN_ID", Value: id},
				corev1.EnvVar{Name: "EVAL_PROJECT_ID", Value: "proj-1"},
				corev1.EnvVar{Name: "EVAL_TESTSET_ID", Value: testsetIDOf(ns, "qa")},
			))
			raw, err := json.Marshal(job)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(raw)).NotTo(ContainSubstring(testKey), "the key stays in its Secret")
			Eventually(func(g Gomega) string {
				g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(e), e)).To(Succeed())
				return e.Status.ExecutorJob
			}).Should(Equal(job.Name))

			By("touching the run starts no second Job and no second run")
			touch(e)
			Consistently(func(g Gomega) int {
				var jobs batchv1.JobList
				g.Expect(k8s.List(rootCtx, &jobs, client.InNamespace(ns))).To(Succeed())
				return len(jobs.Items)
			}, time.Second).Should(Equal(1))
			Expect(up.Calls(evalapitest.OpCreateRun)).To(Equal(1))

			By("the Job fails before the scores: the run is judged at once, Inconclusive")
			up.SetScorer(nil)
			execute(up, id)
			job.Status.Failed = 1
			failJob(job, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
			Expect(judged(e)).To(Equal(v1alpha1.Verdict("Inconclusive")))
			Expect(passedCondition(e).Message).To(ContainSubstring("the executor Job nightly failed (BackoffLimitExceeded"))
		})

		It("spreads a run over an Indexed Job's Pods, and names a failed share in the verdict", func() {
			Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
			e := executor(newRun(ns, "spread", "exact"))
			e.Spec.Executor.Parallelism = ptr.To[int32](4)
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			id := runID(e)
			job := executorJob(e)
			Expect(job.Spec.CompletionMode).To(HaveValue(Equal(batchv1.IndexedCompletion)))
			Expect(job.Spec.Completions).To(HaveValue(BeEquivalentTo(4)))
			Expect(job.Spec.Parallelism).To(HaveValue(BeEquivalentTo(4)))
			Expect(job.Spec.BackoffLimitPerIndex).To(HaveValue(BeZero()), "a share tried again could write twice")
			Expect(job.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "EVAL_SHARES", Value: "4"}))

			By("share 2 fails, the others end: the run is judged, naming the share")
			up.SetScorer(nil)
			execute(up, id)
			job.Status.Failed, job.Status.Succeeded = 1, 3
			job.Status.CompletedIndexes, job.Status.FailedIndexes = "0,1,3", ptr.To("2")
			failJob(job, "FailedIndexes", "Job has failed indexes")
			Expect(judged(e)).To(Equal(v1alpha1.Verdict("Inconclusive")))
			Expect(passedCondition(e).Message).To(ContainSubstring("the executor Job spread failed (FailedIndexes: " +
				"Job has failed indexes); share(s) 2 of 4 failed"))
		})

		// noJobs checks that no Job exists in ns, and no run was created.
		noJobs := func() {
			GinkgoHelper()
			Expect(up.Calls(evalapitest.OpCreateRun)).To(BeZero())
			var jobs batchv1.JobList
			Expect(k8s.List(rootCtx, &jobs, client.InNamespace(ns))).To(Succeed())
			Expect(jobs.Items).To(BeEmpty())
		}

		// Run with the old code (every field of the template copied into the
		// Job), the hostile template made Job escalate.
		It("refuses a hostile tenant's template before the run or any Job exists, naming each field", func() {
			Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
			e := newRun(ns, "escalate", "exact")
			e.Spec.Executor = &v1alpha1.Executor{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				ServiceAccountName: "deployer", HostNetwork: true, HostPID: true, NodeName: "node-1",
				Containers: []corev1.Container{{Name: "shell", Image: "busybox", Command: []string{"sh", "-c", "sleep 3600"},
					SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true), RunAsUser: ptr.To[int64](0)},
					Env: []corev1.EnvVar{{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "db-password"}, Key: "password"}}}},
					VolumeMounts: []corev1.VolumeMount{{Name: "host", MountPath: "/host"}}}},
				Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
			}}}
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			Eventually(stalledReason(e)).Should(Equal(v1alpha1.ReasonExecutorNotAllowed))
			msg := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionStalled).Message
			for _, f := range []string{"serviceAccountName", "hostNetwork", "hostPID", "nodeName", "volumes[0].hostPath",
				"containers[0].env[0].valueFrom.secretKeyRef.name"} {
				Expect(msg).To(ContainSubstring("spec.executor.template.spec."+f+": Forbidden"), f)
			}
			Expect(msg).To(ContainSubstring(`spec.executor.template.spec.containers[0]: Forbidden: the restricted Pod ` +
				`Security profile forbids privileged (container "shell" must not set securityContext.privileged=true)`))
			Expect(msg).To(ContainSubstring("runAsUser=0"))
			Expect(readyCondition(e)(Default)).To(haveReason(metav1.ConditionFalse, v1alpha1.ReasonExecutorNotAllowed))
			touch(e)
			Consistently(func() int { return up.Calls(evalapitest.OpCreateRun) }, time.Second).Should(BeZero())
			noJobs()
		})

		It("runs an ordinary template as the ServiceAccount its service names, with the restricted defaults", func() {
			defaultService(ns, v1alpha1.ServiceConnection{URL: v1alpha1.ServiceURL(up.URL()),
				Executor: &v1alpha1.ExecutorGrant{ServiceAccountName: "evaluator", Secrets: []string{"system-token"}}})
			Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
			e := newRun(ns, "ordinary", "exact")
			e.Spec.Executor = &v1alpha1.Executor{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "system", Image: "example.com/support-assistant:1.4",
					Command: []string{"/assistant", "execute"},
					Env: []corev1.EnvVar{{Name: "MODEL", Value: "m-2"}, {Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{
						SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{
							Name: "system-token"}, Key: "token"}}}}}}}}}
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			runID(e)
			pod := executorJob(e).Spec.Template.Spec
			Expect(e.Status.Service).To(Equal("EvaluationService/default"))
			Expect(pod.ServiceAccountName).To(Equal("evaluator"))
			Expect(pod.AutomountServiceAccountToken).To(BeNil(), "the account's own setting holds")
			Expect(pod.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
			Expect(pod.SecurityContext.SeccompProfile).To(HaveValue(HaveField("Type", corev1.SeccompProfileTypeRuntimeDefault)))
			c := pod.Containers[0]
			Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
			Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
			Expect(c.Command).To(Equal([]string{"/assistant", "execute"}))
			Expect(c.Env).To(ContainElement(HaveField("ValueFrom.SecretKeyRef.Name", "system-token")))

			By("a Secret the service does not list stops the next run before it is created")
			other := newRun(ns, "other-secret", "exact")
			other.Spec.Executor = e.Spec.Executor.DeepCopy()
			other.Spec.Executor.Template.Spec.Containers[0].Env[1].ValueFrom.SecretKeyRef.Name = "db-password"
			Expect(k8s.Create(rootCtx, other)).To(Succeed())
			Eventually(stalledReason(other)).Should(Equal(v1alpha1.ReasonExecutorNotAllowed))
			Expect(meta.FindStatusCondition(other.Status.Conditions, v1alpha1.ConditionStalled).Message).To(ContainSubstring(
				`spec.executor.template.spec.containers[0].env[1].valueFrom.secretKeyRef.name: Forbidden: Secret ` +
					`"db-password" is not one an executor may use: allow it in spec.executor.secrets of EvaluationService/default`))
			Expect(up.Calls(evalapitest.OpCreateRun)).To(Equal(1))
		})

		// Run with the old code (the whole run cached), the cached run held
		// its template; without the template read before the check and the
		// create guard's write, the run never started.
		It("caches the run without its template, and still runs the template's containers intact", func() {
			Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
			e := executor(newRun(ns, "uncached", "exact"))
			e.Spec.Executor.Template.Labels = map[string]string{"app": "assistant"}
			e.Spec.Executor.Template.Spec.Containers[0].Args = []string{"--cases=all", "--parallel=4"}
			e.Spec.Executor.Template.Spec.Containers = append(e.Spec.Executor.Template.Spec.Containers,
				corev1.Container{Name: "judge", Image: "example.com/judge:2.0", Command: []string{"/judge"}})
			want := e.Spec.Executor.Template.DeepCopy()
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			runID(e)

			pod := executorJob(e).Spec.Template
			Expect(pod.Labels).To(HaveKeyWithValue("app", "assistant"))
			Expect(pod.Spec.Containers).To(HaveLen(2))
			for i, c := range want.Spec.Containers {
				Expect(pod.Spec.Containers[i]).To(And(HaveField("Name", c.Name), HaveField("Image", c.Image),
					HaveField("Command", c.Command), HaveField("Args", c.Args)))
			}
			Expect(pod.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "MODEL", Value: "m-2"}))

			stored := &v1alpha1.EvaluationRun{}
			Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(e), stored)).To(Succeed())
			Expect(stored.Spec.Executor.Template).To(Equal(*want), "the create guard's write kept the template")
			Expect(stored.Annotations).NotTo(HaveKey(trimcache.TrimmedAnnotation), "the mark is never written")

			cached := &v1alpha1.EvaluationRun{}
			Expect(mgr.cache.Get(rootCtx, client.ObjectKeyFromObject(e), cached)).To(Succeed())
			Expect(cached.Spec.Executor).NotTo(BeNil(), "the cache still says the run has an executor")
			Expect(cached.Spec.Executor.Template).To(BeZero())
		})

		It("refuses a template over 32 KiB before creating the run", func() {
			Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
			e := executor(newRun(ns, "large", "exact"))
			e.Spec.Executor.Template.Spec.Containers[0].Args = []string{strings.Repeat("x", 40<<10)}
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			Eventually(stalledReason(e)).Should(Equal(v1alpha1.ReasonInvalidExecutor))
			Expect(meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionStalled).Message).To(
				ContainSubstring("spec.executor.template: Forbidden: the template is"))
			noJobs()
		})

		It("refuses a Job the API server would refuse before creating the run", func() {
			Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
			e := executor(newRun(ns, "no-image", "exact"))
			e.Spec.Executor.Template.Spec.Containers[0].Image = ""
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			Eventually(stalledReason(e)).Should(Equal(v1alpha1.ReasonInvalidExecutor))
			Expect(meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionStalled).Message).To(
				ContainSubstring("spec.template.spec.containers[0].image"))
			Expect(up.Calls(evalapitest.OpCreateRun)).To(BeZero())
			var jobs batchv1.JobList
			Expect(k8s.List(rootCtx, &jobs, client.InNamespace(ns))).To(Succeed())
			Expect(jobs.Items).To(BeEmpty())
		})
	})
})

var _ = Describe("EvaluationRun on a standalone service", func() {
	// restURL is the REST server's URL as Pods reach it (--serve-api-url).
	const restURL = "http://eval-operator-api.eval-operator-system.svc:8082/api/v2"
	var ns string
	BeforeEach(func() {
		var up *upstream
		ns, up = newFixture()
		up.opts.Service = nil
		up.opts.StandaloneURL = restURL
		startManager(up.opts)
		Expect(k8s.Create(rootCtx, newTestset(ns, "qa", inline(`{"id":"a","question":"q0"}`, `{"id":"b","question":"q1"}`)))).To(Succeed())
		Expect(k8s.Create(rootCtx, runMetric(ns, "exact", "heuristic", "boolean"))).To(Succeed())
		Expect(k8s.Create(rootCtx, runMetric(ns, "tone", "human", "boolean"))).To(Succeed())
	})

	// count writes what the REST server counts into e's status: records,
	// and exact's passed and failed scores.
	count := func(e *v1alpha1.EvaluationRun, records, passed, failed int32) {
		GinkgoHelper()
		exact := &v1alpha1.Metric{}
		Expect(k8s.Get(rootCtx, client.ObjectKey{Namespace: ns, Name: "exact"}, exact)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(e), e)).To(Succeed())
			e.Status.Records, e.Status.Scores = records, passed+failed
			e.Status.Metrics = []v1alpha1.MetricResult{{ID: exact.Status.ID, Name: "exact", Passed: passed, Failed: failed,
				MinPassRate: 1, Judged: true}}
			g.Expect(k8s.Status().Update(rootCtx, e)).To(Succeed())
		}).Should(Succeed())
	}

	It("gives the run an id in the cluster, follows the counts written to it and judges them", func() {
		e := newRun(ns, "local", "exact", "tone")
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		Expect(runID(e)).To(HavePrefix("run_"))
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(e), e)).To(Succeed())
			return e.Status.Phase
		}).Should(Equal(evalapi.RunAwaitingExecution))
		Expect(e.Status.ExpectedRecords).To(HaveValue(BeEquivalentTo(2)), "the Testset's testcases")

		count(e, 1, 1, 0)
		Eventually(func(g Gomega) string {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(e), e)).To(Succeed())
			return e.Status.Phase
		}, 10*time.Second).Should(Equal(evalapi.RunRunningExecution))
		Expect(e.Status.Verdict).To(BeEmpty())

		count(e, 2, 2, 0)
		Expect(judged(e)).To(Equal(v1alpha1.Verdict("Passed")))
		Expect(e.Status.Phase).To(Equal(evalapi.RunAwaitingHumanScoring), "the human Metric is left out")
		Expect(e.Status.Metrics).To(ContainElement(And(HaveField("Name", "exact"), HaveField("Passed", BeEquivalentTo(2)))))
	})

	It("judges a run whose scores fail, and one nobody executes at its timeout", func() {
		e := newRun(ns, "failing", "exact")
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		runID(e)
		count(e, 2, 1, 1)
		Expect(judged(e)).To(Equal(v1alpha1.Verdict("Failed")))

		idle := newRun(ns, "idle", "exact")
		idle.Spec.Timeout = &metav1.Duration{Duration: 3 * time.Second}
		Expect(k8s.Create(rootCtx, idle)).To(Succeed())
		Expect(judged(idle)).To(Equal(v1alpha1.Verdict("Inconclusive")))
		Expect(idle.Status.Phase).To(Equal(evalapi.RunAwaitingExecution))
	})

	It("starts the executor with the REST server's URL and the run's key by reference", func() {
		e := newRun(ns, "executed", "exact")
		e.Spec.Executor = &v1alpha1.Executor{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "system", Image: "example.com/support-assistant:1.4"}}}}}
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		id := runID(e)
		job := &batchv1.Job{}
		Eventually(func() error { return k8s.Get(rootCtx, client.ObjectKeyFromObject(e), job) }).Should(Succeed())
		Expect(job.Spec.Template.Spec.Containers[0].Env).To(ContainElements(
			corev1.EnvVar{Name: "EVAL_API_URL", Value: restURL},
			corev1.EnvVar{Name: "EVAL_RUN_ID", Value: id},
			HaveField("ValueFrom.SecretKeyRef.Name", secretName)))
	})

	It("promotes a Passed run's version in the System's annotation, which the System reports, once", func() {
		s := newSystem(ns, "bot")
		Expect(k8s.Create(rootCtx, s)).To(Succeed())
		v := newSystemVersion(ns, "bot-canary", "bot", `{"image":"sha256:ab"}`)
		Expect(k8s.Create(rootCtx, v)).To(Succeed())
		Eventually(readyCondition(v)).Should(beReady)
		Expect(productionOf(s)(Default)).To(BeEmpty(), "a standalone System has no production version until one is promoted")

		// promoting runs a promoting run of bot-canary whose 2 records
		// passed and failed as told, and says what it promoted.
		promoting := func(name string, passed, failed int32) string {
			GinkgoHelper()
			e := versionRun(ns, name, "bot-canary")
			e.Spec.Promote = ptr.To(true)
			Expect(k8s.Create(rootCtx, e)).To(Succeed())
			runID(e)
			count(e, passed+failed, passed, failed)
			return promotedCondition(e).Reason
		}
		Expect(promoting("failed", 1, 1)).To(Equal(v1alpha1.ReasonNotPassed))
		Expect(promoting("passed", 2, 0)).To(Equal(v1alpha1.ReasonPromoted))
		Eventually(productionOf(s)).Should(Equal(v.Status.ID))
		Expect(s.Annotations).To(HaveKeyWithValue(v1alpha1.ProductionVersionAnnotation, v.Status.ID))
		Expect(s.Spec.Config.Raw).To(MatchJSON(`{"model":"gpt-4o"}`), "the spec, which GitOps keeps, is not written")

		By("the System's reconciles keep the production version: it is not drift")
		Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		s.Spec.Description = ptr.To[v1alpha1.Text]("a new description")
		Expect(k8s.Update(rootCtx, s)).To(Succeed())
		Eventually(func(g Gomega) int64 {
			g.Expect(k8s.Get(rootCtx, client.ObjectKeyFromObject(s), s)).To(Succeed())
			return s.Status.ObservedGeneration
		}).Should(Equal(s.Generation))
		Expect(s.Status.ProductionVersionID).To(Equal(v.Status.ID))

		By("an annotation that is no version id records none")
		Expect(k8s.Patch(rootCtx, s, client.RawPatch(types.MergePatchType, []byte(
			`{"metadata":{"annotations":{"`+v1alpha1.ProductionVersionAnnotation+`":"`+strings.Repeat("x", 4096)+`"}}}`)))).To(Succeed())
		Eventually(productionOf(s)).Should(BeEmpty())
	})

	It("stops a run naming metricIds, which only a real service resolves", func() {
		e := newRun(ns, "by-id")
		e.Spec.MetricIDs = []v1alpha1.ResourceID{"met_1"}
		Expect(k8s.Create(rootCtx, e)).To(Succeed())
		Eventually(stalledReason(e)).Should(Equal(v1alpha1.ReasonStandaloneUnsupported))
		Expect(e.RecordedID()).To(BeEmpty())
	})
})

// testsetIDOf is the remote id of Testset name, once it has one.
func testsetIDOf(ns, name string) string {
	GinkgoHelper()
	t := &v1alpha1.Testset{}
	Expect(k8s.Get(rootCtx, client.ObjectKey{Namespace: ns, Name: name}, t)).To(Succeed())
	return t.RecordedID()
}
