//go:build cluster

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

package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/test/framework"
)

// assistantImage is the system under test of the canary
// (test/cluster/assistant), built here and imported into the node; the
// runs' executor is the operator's own image (kubectl eval exec).
const assistantImage = "localhost/eval-operator/assistant:test"

var rolloutGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}

// startArgoRollouts applies Argo Rollouts' CRDs and runs its controller
// beside the node, as the admin, until the spec ends; make test-cluster
// builds both into $ARGO_ROLLOUTS (hack/argo-rollouts).
func startArgoRollouts(ctx context.Context) {
	GinkgoHelper()
	dir := os.Getenv("ARGO_ROLLOUTS")
	Expect(dir).NotTo(BeEmpty(), "ARGO_ROLLOUTS names the directory make argo-rollouts builds")
	// Too large for client-side apply's annotation.
	kubectl(ctx, nil, "apply", "--server-side", "-f", filepath.Join(dir, "crds"))
	// kubectl wait fails, rather than waits, before a new CRD has any condition.
	Eventually(func() error {
		_, _, err := framework.Run(ctx, nil, framework.Tool("KUBECTL", "kubectl"), "--kubeconfig", kubeconfig,
			"wait", "--for=condition=Established", "--timeout=10s", "crd/rollouts.argoproj.io",
			"crd/analysisruns.argoproj.io", "crd/analysistemplates.argoproj.io")
		return err
	}).WithTimeout(time.Minute).Should(Succeed())

	logs, err := os.Create(filepath.Join(stateDir, "argo-rollouts.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(filepath.Join(dir, "rollouts-controller"), "--kubeconfig", kubeconfig, "--leader-elect=false",
		"--healthzPort", freePort(), "--metricsPort", freePort())
	cmd.Stdout, cmd.Stderr = logs, logs
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logs.Close()
	})
}

// freePort is a port nothing listens on now (framework.FreeAddr's).
func freePort() string {
	GinkgoHelper()
	addr, err := framework.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	_, port, err := net.SplitHostPort(addr)
	Expect(err).NotTo(HaveOccurred())
	return port
}

// gateSamples are the shipped samples of a rollout's gate that apply as
// they are: the System the releases are versions of, the gate's
// ServiceAccount and Role, and Argo Rollouts' AnalysisTemplate of file
// (argo-rollouts.yaml, the job provider, its image the node's;
// argo-rollouts-web.yaml, the web provider).
func gateSamples(file string) []byte {
	GinkgoHelper()
	var out []string
	for _, f := range []string{"evaluation-gate.yaml", file} {
		raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "samples", "gates", f))
		Expect(err).NotTo(HaveOccurred())
		for doc := range strings.SplitSeq(string(raw), "\n---\n") {
			var u unstructured.Unstructured
			Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
			switch u.GetKind() {
			case "ConfigMap", "Rollout": // the spec's own, below
				continue
			case "AnalysisTemplate":
				if strings.Contains(doc, "provider:\n      job:") {
					Expect(strings.Count(doc, "image: ")).To(Equal(1))
					doc = regexp.MustCompile(`image: \S+`).ReplaceAllLiteralString(doc, "image: "+img+"\n                imagePullPolicy: Never")
				}
			}
			out = append(out, doc)
		}
	}
	return []byte(strings.Join(out, "\n---\n"))
}

// canary is one release of the application's repository: the gate samples
// aside, the key, the Metric and Testset the runs judge on, the run
// template whose executor asks the canary's Service, the two Services and
// the Rollout, its pods answering as answers says, version its VERSION.
type canary struct {
	key, answers, version string
	// passCriteria is the run template's, as YAML lines under it.
	passCriteria []string
	// analysis is the Rollout's analysis step: the AnalysisTemplate's name
	// and its args, as YAML lines under analysis.
	analysis []string
}

// jobAnalysis is the analysis step of the shipped job provider template
// (argo-rollouts.yaml): kubectl eval gate, the revision its argument.
var jobAnalysis = []string{
	"templates:",
	"- templateName: evaluation-gate",
	"args:",
	"- name: system",
	"  value: support-assistant",
	"- name: revision",
	"  valueFrom:",
	"    podTemplateHashValue: Latest",
	"- name: image",
	"  valueFrom:",
	"    fieldRef:",
	"      fieldPath: spec.template.spec.containers[0].image",
}

// indent joins lines, each after n spaces.
func indent(n int, lines []string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.Join(lines, "\n"+pad)
}

func (c canary) objects() []byte {
	passCriteria := c.passCriteria
	if passCriteria == nil {
		passCriteria = []string{"minPassRate: 1"}
	}
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: evaluation-api-key
  labels:
    %[1]s: "true"
stringData:
  apiKey: %[2]s
---
apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: Metric
metadata:
  name: exact-answer
spec:
  projectId: proj_support-assistant
  name: Exact answer
  evalType: heuristic
  outputType: boolean
  apiKeySecretRef:
    name: evaluation-api-key
---
apiVersion: evaluation.eval-operator.dev/v1alpha1
kind: Testset
metadata:
  name: support-faq
spec:
  projectId: proj_support-assistant
  name: Support FAQ
  keyField: id
  fieldMapping:
    inputs: [question]
    expected: [answer]
  inline:
  - {id: reset, question: "how do I reset my password?", answer: "HOW DO I RESET MY PASSWORD?"}
  - {id: refund, question: "can I get a refund?", answer: "CAN I GET A REFUND?"}
  - {id: hours, question: "when are you open?", answer: "WHEN ARE YOU OPEN?"}
  apiKeySecretRef:
    name: evaluation-api-key
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: evaluation-gate
data:
  evaluationrun.yaml: |
    apiVersion: evaluation.eval-operator.dev/v1alpha1
    kind: EvaluationRun
    metadata:
      name: support-assistant
    spec:
      projectId: proj_support-assistant
      testsetRef:
        name: support-faq
      metricRefs:
      - name: exact-answer
      passCriteria:
%[8]s
      timeout: 5m
      apiKeySecretRef:
        name: evaluation-api-key
      executor:
        parallelism: %[7]d
        template:
          spec:
            containers:
            - name: executor
              image: %[6]s
              imagePullPolicy: Never
              command: [/kubectl-eval, exec]
              args:
              - --url=$(SYSTEM_URL)
              - '--body={"question": {{json .inputs.question}}}'
              - --output=answer
              - --check=exact-answer=exact:answer
              - --attempts=8
              env:
              - name: SYSTEM_URL
                value: http://$(SUPPORT_ASSISTANT_CANARY_SERVICE_HOST):$(SUPPORT_ASSISTANT_CANARY_SERVICE_PORT)/answer
---
apiVersion: v1
kind: Service
metadata:
  name: support-assistant-canary
spec:
  selector:
    app: support-assistant
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: support-assistant-stable
spec:
  selector:
    app: support-assistant
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: support-assistant
spec:
  replicas: 2
  selector:
    matchLabels:
      app: support-assistant
  template:
    metadata:
      labels:
        app: support-assistant
    spec:
      containers:
      - name: assistant
        image: %[3]s
        imagePullPolicy: Never
        args: [serve]
        env:
        - {name: ANSWERS, value: %[4]s}
        - {name: VERSION, value: "%[5]s"}
        ports:
        - containerPort: 8080
        readinessProbe:
          tcpSocket:
            port: 8080
  strategy:
    canary:
      canaryService: support-assistant-canary
      stableService: support-assistant-stable
      steps:
      - setWeight: 50
      - analysis:
%[9]s
`, v1alpha1.APIKeyLabel, c.key, assistantImage, c.answers, c.version, img, executorShares,
		indent(8, passCriteria), indent(10, c.analysis)))
}

// rolloutStatus is what Argo Rollouts reports of a Rollout: its phase,
// whether it was aborted, the stable and current pod template hashes, and
// why it is paused.
type rolloutStatus struct {
	Phase, Stable, Current string
	Aborted                bool
	PauseReasons           []string
}

// rolloutOf is the status of Rollout support-assistant, the name of the
// canary of every spec (and of examples/gitops' service).
func rolloutOf(ctx context.Context, g Gomega, ns string) rolloutStatus {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(rolloutGVK)
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support-assistant"}, u)).To(Succeed())
	s := rolloutStatus{}
	s.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	s.Stable, _, _ = unstructured.NestedString(u.Object, "status", "stableRS")
	s.Current, _, _ = unstructured.NestedString(u.Object, "status", "currentPodHash")
	s.Aborted, _, _ = unstructured.NestedBool(u.Object, "status", "abort")
	pauses, _, _ := unstructured.NestedSlice(u.Object, "status", "pauseConditions")
	for _, p := range pauses {
		if m, ok := p.(map[string]any); ok {
			s.PauseReasons = append(s.PauseReasons, fmt.Sprint(m["reason"]))
		}
	}
	return s
}

// runsOf is the namespace's EvaluationRuns by the revision the gate judged
// (their revision label).
func runsOf(ctx context.Context, g Gomega, ns string) map[string]v1alpha1.EvaluationRun {
	var list v1alpha1.EvaluationRunList
	g.Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	out := map[string]v1alpha1.EvaluationRun{}
	for _, e := range list.Items {
		out[e.Labels[v1alpha1.RevisionLabel]] = e
	}
	return out
}

// expectLinked checks that run names the SystemVersion the gate derived
// from its revision and sent that version's id.
func expectLinked(ctx context.Context, ns, revision string, run v1alpha1.EvaluationRun) {
	GinkgoHelper()
	Expect(run.Spec.SystemVersionRef).NotTo(BeNil(), "the gate links the run to the release's SystemVersion")
	v := &v1alpha1.SystemVersion{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: run.Spec.SystemVersionRef.Name}, v)).To(Succeed())
	Expect(v.Spec.SystemRef.Name).To(Equal("support-assistant"))
	Expect(v.Spec.Config.Raw).To(ContainSubstring(`"revision":"` + revision + `"`))
	Expect(run.Status.SystemVersionID).To(Equal(v.Status.ID))
	Expect(v1alpha1.ValidUUID(v.Status.ID)).To(BeTrue(), "the version's id: %q", v.Status.ID)
}

// executorShares is how many Pods share each run's Testset: the shipped
// executor (kubectl eval exec, the operator's image) in an Indexed Job.
const executorShares = 2

// expectExecutorsSucceeded checks that every share of every run's executor
// ran once, to the end.
func expectExecutorsSucceeded(ctx context.Context, ns string, runs map[string]v1alpha1.EvaluationRun) {
	GinkgoHelper()
	for _, e := range runs {
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(ns),
			client.MatchingLabels{"job-name": e.Status.ExecutorJob})).To(Succeed())
		Expect(pods.Items).To(HaveLen(executorShares), "run %s: one executor Pod a share", e.Name)
		for _, p := range pods.Items {
			Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), "run %s, Pod %s", e.Name, p.Name)
			// No service names an account: default, without a token, restricted.
			Expect(p.Spec.ServiceAccountName).To(Equal("default"), "run %s", e.Name)
			Expect(p.Spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()), "run %s", e.Name)
			Expect(p.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()), "run %s", e.Name)
		}
	}
}

// dumpNamespace writes what a person would look at after a failed canary:
// the runs, the analysis, and every pod's log.
func dumpNamespace(ctx context.Context, ns string) {
	out, _, _ := framework.Run(ctx, nil, framework.Tool("KUBECTL", "kubectl"), "--kubeconfig", kubeconfig, "get", "-n", ns,
		"-o", "yaml", "metrics,testsets,evaluationruns,rollouts,analysisruns,jobs")
	GinkgoWriter.Printf("%s\n", out)
	var pods corev1.PodList
	if k8s.List(ctx, &pods, client.InNamespace(ns)) != nil {
		return
	}
	for _, p := range pods.Items {
		logs, stderr, _ := framework.Run(ctx, nil, framework.Tool("KUBECTL", "kubectl"), "--kubeconfig", kubeconfig,
			"logs", "-n", ns, p.Name, "--all-containers")
		GinkgoWriter.Printf("--- pod %s\n%s%s\n", p.Name, logs, stderr)
	}
}

// canaries are the Argo Rollouts canaries gated on evaluation: each spec a
// namespace of its own, one Argo Rollouts controller and assistant image
// for all.
func canaries() {
	Describe("Argo Rollouts canaries", Ordered, func() {
		var api string // the REST server's address, host:port, through its Service

		BeforeAll(func() {
			ctx := ctxFor(6 * time.Minute)
			// No cluster DNS on this node: the executor and the web provider
			// are told the API Service's address instead of its name.
			var svc corev1.Service
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: helmNS, Name: release + "-api"}, &svc)).To(Succeed())
			api = net.JoinHostPort(svc.Spec.ClusterIP, "8082")
			helm(ctx, "upgrade", release, chartDir, "--namespace", helmNS, "--reuse-values", "--wait", "--timeout=4m",
				"--set", "serveApi.url=http://"+api+"/api/v2")
			importBinary(ctx, framework.RepoRoot(), "./test/cluster/assistant", "assistant", assistantImage)
			startArgoRollouts(ctx)
		})

		It("gates a canary on an EvaluationRun: promoted when it passes, aborted when it fails", func() {
			ctx := ctxFor(8 * time.Minute)
			ns := canaryNamespace(ctx, "shop")
			key := framework.NewKey("canary")
			release := func(answers, version string) canary {
				return canary{key: key, answers: answers, version: version, analysis: jobAnalysis}
			}
			kubectl(ctx, gateSamples("argo-rollouts.yaml"), "apply", "-n", ns, "-f", "-")
			startAtV1(ctx, ns, release("right", "1"))

			By("v2 answers right: its run Passes and the canary is promoted")
			v2 := promote(ctx, ns, release("right", "2"))
			passed := runsOf(ctx, Default, ns)[v2.Current]
			expectVerdict(passed, "Passed", "Passed")
			expectLinked(ctx, ns, v2.Current, passed)

			By("v3 answers wrong: its run Fails and the canary is aborted, v2 stays stable")
			v3 := abort(ctx, ns, v2, release("wrong", "3"))
			runs := runsOf(ctx, Default, ns)
			failed := runs[v3.Current]
			expectVerdict(failed, "Failed", "Failed")
			expectLinked(ctx, ns, v3.Current, failed)
			Expect(runs).To(HaveLen(2), "one run per revision judged")
			expectExecutorsSucceeded(ctx, ns, runs)
		})

		It("gates a canary on a run of the remote service, linked to the release's SystemVersion: promoted when it passes, aborted when it fails", func() {
			ctx := ctxFor(8 * time.Minute)
			key := framework.NewKey("canary-remote")
			fake.AddTenant(key)
			// The service scores nothing itself here: every score is the
			// executor's check, so a wrong answer can only fail by it.
			fake.SetScorer(nil)
			DeferCleanup(fake.SetScorer, evalapitest.Scorer(evalapitest.PassingScorer))
			ns := canaryNamespace(ctx, "shop-remote")
			Expect(k8s.Create(ctx, &v1alpha1.EvaluationService{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
				Spec: v1alpha1.EvaluationServiceSpec{ServiceConnection: v1alpha1.ServiceConnection{
					URL: v1alpha1.ServiceURL(fake.URL()),
				}},
			})).To(Succeed())
			// The gate derives each release's SystemVersion (--system, its
			// config the revision and the image) and the run names it; with
			// --promote a Passed run makes it the System's production version.
			samples := gateSamples("argo-rollouts.yaml")
			const canaryArg = "\n                - --canary={{args.canary}}"
			Expect(bytes.Count(samples, []byte(canaryArg))).To(Equal(1))
			samples = bytes.Replace(samples, []byte(canaryArg), []byte(canaryArg+"\n                - --promote"), 1)
			kubectl(ctx, samples, "apply", "-n", ns, "-f", "-")
			release := func(answers, version string) canary {
				return canary{key: key, answers: answers, version: version, analysis: jobAnalysis}
			}
			startAtV1(ctx, ns, release("right", "1"))

			By("v2 answers right: the executor's records and scores in the service make its run Pass, and the canary is promoted")
			v2 := promote(ctx, ns, release("right", "2"))
			passed := runsOf(ctx, Default, ns)[v2.Current]
			expectVerdict(passed, "Passed", "Passed")
			expectLinked(ctx, ns, v2.Current, passed)
			expectInService(passed)
			system := &v1alpha1.System{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support-assistant"}, system)).To(Succeed())
			expectProduction := func() {
				GinkgoHelper()
				held, ok := fake.System(system.Status.ID)
				Expect(ok).To(BeTrue(), "the service holds System %s", system.Status.ID)
				Expect(held.ProductionVersion).NotTo(BeNil())
				Expect(held.ProductionVersion.ID).To(Equal(passed.Status.SystemVersionID), "v2's version is in production")
				Expect(fake.Promotions(system.Status.ID)).To(Equal(1), "the production version is set once")
			}
			expectProduction()

			By("v3 answers wrong: its run Fails and the canary is aborted, v2 stays stable")
			v3 := abort(ctx, ns, v2, release("wrong", "3"))
			runs := runsOf(ctx, Default, ns)
			failed := runs[v3.Current]
			expectVerdict(failed, "Failed", "Failed")
			expectLinked(ctx, ns, v3.Current, failed)
			expectInService(failed)
			Expect(runs).To(HaveLen(2), "one run per revision judged")
			expectExecutorsSucceeded(ctx, ns, runs)
			expectProduction() // a Failed run promotes nothing
		})

		It("pauses a canary gated through the web provider when its run is Inconclusive, rather than abort it", func() {
			ctx := ctxFor(8 * time.Minute)
			ns := canaryNamespace(ctx, "shop-web")
			key, gateKey := framework.NewKey("canary-web"), framework.NewKey("canary-web-gate")
			// The web provider calls the REST server from beside the node:
			// its Service's address, not its cluster DNS name.
			samples := gateSamples("argo-rollouts-web.yaml")
			const url = "http://eval-operator-api.eval-operator-system.svc:8082"
			Expect(bytes.Count(samples, []byte(url))).To(Equal(1))
			kubectl(ctx, bytes.Replace(samples, []byte(url), []byte("http://"+api), 1), "apply", "-n", ns, "-f", "-")
			Expect(k8s.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evaluation-gate-key", Labels: map[string]string{
					v1alpha1.APIKeyLabel: "true", tenancy.KeyScopeLabel: tenancy.KeyScopeGates}},
				StringData: map[string]string{"apiKey": gateKey},
			})).To(Succeed())
			// Three records, all passing, cannot show a pass rate of 0.9 at
			// a level of 0.95 (its lower bound is 0.53): Inconclusive.
			release := func(version string) canary {
				return canary{key: key, answers: "right", version: version,
					passCriteria: []string{"minPassRate: 0.9", "confidence: 0.95"},
					analysis: []string{
						"templates:",
						"- templateName: evaluation-web",
						"args:",
						"- name: release",
						"  value: support-assistant",
						"- name: revision",
						"  valueFrom:",
						"    podTemplateHashValue: Latest",
						"- name: system",
						"  value: support-assistant",
						"- name: image",
						"  valueFrom:",
						"    fieldRef:",
						"      fieldPath: spec.template.spec.containers[0].image",
					}}
			}
			v1 := startAtV1(ctx, ns, release("1"))

			By("v2's run is Inconclusive: the Rollout pauses for a person, v1 stays stable")
			kubectl(ctx, release("2").objects(), "apply", "-n", ns, "-f", "-")
			var v2 rolloutStatus
			Eventually(func(g Gomega) {
				v2 = rolloutOf(ctx, g, ns)
				switch {
				case v2.Aborted:
					StopTrying("the canary of v2 was aborted").Now()
				case v2.Current != v1.Current && v2.Stable == v2.Current:
					StopTrying("the canary of v2 was promoted").Now()
				}
				g.Expect(v2.Current).NotTo(Equal(v1.Current))
				g.Expect(v2.Phase).To(Equal("Paused"))
				g.Expect(v2.PauseReasons).To(ContainElement("InconclusiveAnalysisRun"))
			}).WithTimeout(5 * time.Minute).Should(Succeed())
			Expect(v2.Stable).To(Equal(v1.Current), "the stable revision is still v1")
			runs := runsOf(ctx, Default, ns)
			Expect(runs).To(HaveKey(v2.Current))
			expectVerdict(runs[v2.Current], "Inconclusive", "Passed")
			// Paused stays paused: the analysis is not measured into an abort.
			Consistently(func(g Gomega) rolloutStatus { return rolloutOf(ctx, g, ns) }).
				WithTimeout(10 * time.Second).WithPolling(2 * time.Second).Should(And(
				HaveField("Phase", "Paused"), HaveField("Aborted", BeFalse())))
			Expect(runs).To(HaveLen(1), "one run for the revision, however often it was measured")
			expectExecutorsSucceeded(ctx, ns, runs)
		})

		gitopsLoop()
	})
}

// expectVerdict checks run's verdict, and that its one Metric, exact-answer,
// counted the 3 testcases as counted (Passed or Failed).
func expectVerdict(run v1alpha1.EvaluationRun, verdict, counted string) {
	GinkgoHelper()
	Expect(run.Status.Verdict).To(BeEquivalentTo(verdict))
	Expect(run.Status.Metrics).To(ConsistOf(And(HaveField("Name", "exact-answer"), HaveField(counted, BeEquivalentTo(3)))))
}

// expectInService checks that the service holds run, judged, linked to
// the version the run sent, with one record and one score (the executor's)
// per testcase.
func expectInService(run v1alpha1.EvaluationRun) {
	GinkgoHelper()
	remote, ok := fake.Run(run.Status.RunID)
	Expect(ok).To(BeTrue(), "the service holds run %s", run.Status.RunID)
	Expect(remote.SystemVersionID).To(HaveValue(Equal(run.Status.SystemVersionID)))
	Expect(remote.SystemID).To(HaveValue(Equal(run.Status.SystemID)))
	Expect(fake.SystemVersions()).To(ContainElement(And(HaveField("ID", run.Status.SystemVersionID),
		HaveField("SystemID", run.Status.SystemID))), "the version the gate upserted, in the service")
	Expect(remote.NumRecords).To(Equal(3))
	Expect(remote.NumScores).To(Equal(3))
}

// canaryNamespace makes an application's namespace for a canary; a failed
// spec shows what is in it.
func canaryNamespace(ctx context.Context, prefix string) string {
	GinkgoHelper()
	ns, err := framework.NewNamespace(ctx, k8s, prefix, framework.NewKey("unused"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpNamespace(ctx, ns)
		}
		deleteNamespace(ctx, ns)
	})
	return ns
}

// deleteNamespace deletes an application's namespace, its evaluation
// objects first: deleted with the namespace, they could lose their key
// Secret before they delete their remote objects, and keep the namespace
// Terminating.
func deleteNamespace(ctx context.Context, ns string) {
	GinkgoHelper()
	kubectl(ctx, nil, "delete", "-n", ns, "--ignore-not-found", "--timeout=2m",
		"evaluationruns,metrics,testsets,systemversions,systems", "--all")
	kubectl(ctx, nil, "delete", "--ignore-not-found", "namespace", ns, "--wait=false")
}

// startAtV1 applies the first release and waits until its Rollout is
// Healthy, with its Metric and Testset Ready.
func startAtV1(ctx context.Context, ns string, c canary) rolloutStatus {
	GinkgoHelper()
	kubectl(ctx, c.objects(), "apply", "-n", ns, "-f", "-")
	kubectl(ctx, nil, "wait", "-n", ns, "--for=condition=Ready", "--timeout=2m", "metric/exact-answer", "testset/support-faq", "system/support-assistant")
	var v1 rolloutStatus
	Eventually(func(g Gomega) {
		v1 = rolloutOf(ctx, g, ns)
		g.Expect(v1.Phase).To(Equal("Healthy"))
	}).Should(Succeed())
	return v1
}

// promote applies release c and waits until its revision is stable, judged
// by a run.
func promote(ctx context.Context, ns string, c canary) rolloutStatus {
	GinkgoHelper()
	kubectl(ctx, c.objects(), "apply", "-n", ns, "-f", "-")
	var s rolloutStatus
	Eventually(func(g Gomega) {
		s = rolloutOf(ctx, g, ns)
		if s.Aborted {
			StopTrying("the canary of v" + c.version + " was aborted").Now()
		}
		g.Expect(s.Phase).To(Equal("Healthy"))
		g.Expect(s.Stable).To(Equal(s.Current))
		g.Expect(runsOf(ctx, g, ns)).To(HaveKey(s.Current))
	}).WithTimeout(6 * time.Minute).Should(Succeed())
	return s
}

// abort applies release c and waits until its canary is aborted, judged by
// a run, with stable still stable.
func abort(ctx context.Context, ns string, stable rolloutStatus, c canary) rolloutStatus {
	GinkgoHelper()
	kubectl(ctx, c.objects(), "apply", "-n", ns, "-f", "-")
	var s rolloutStatus
	Eventually(func(g Gomega) {
		s = rolloutOf(ctx, g, ns)
		g.Expect(s.Current).NotTo(Equal(stable.Current))
		g.Expect(s.Aborted).To(BeTrue())
		g.Expect(runsOf(ctx, g, ns)).To(HaveKey(s.Current))
	}).WithTimeout(6 * time.Minute).Should(Succeed())
	Expect(s.Stable).To(Equal(stable.Current), "the stable revision is still the one before")
	return s
}
