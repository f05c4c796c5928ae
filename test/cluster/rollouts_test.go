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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
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
// ServiceAccount and Role, and Argo Rollouts' AnalysisTemplate, its image
// the node's.
func gateSamples() []byte {
	GinkgoHelper()
	var out []string
	for _, f := range []string{"evaluation-gate.yaml", "argo-rollouts.yaml"} {
		raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "samples", "gates", f))
		Expect(err).NotTo(HaveOccurred())
		for doc := range strings.SplitSeq(string(raw), "\n---\n") {
			var u unstructured.Unstructured
			Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
			switch u.GetKind() {
			case "ConfigMap", "Rollout": // the spec's own, below
				continue
			case "AnalysisTemplate":
				Expect(strings.Count(doc, "image: ")).To(Equal(1))
				doc = regexp.MustCompile(`image: \S+`).ReplaceAllLiteralString(doc, "image: "+img+"\n                imagePullPolicy: Never")
			}
			out = append(out, doc)
		}
	}
	return []byte(strings.Join(out, "\n---\n"))
}

// canaryObjects are what the application's repository holds besides the
// gate samples: the key, the Metric and Testset the runs judge on, the run
// template whose executor asks the canary's Service, the two Services and
// the Rollout, its pods answering as answers says.
func canaryObjects(key, answers, version string) []byte {
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
        minPassRate: 1
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
          templates:
          - templateName: evaluation-gate
          args:
          - name: system
            value: support-assistant
          - name: revision
            valueFrom:
              podTemplateHashValue: Latest
          - name: image
            valueFrom:
              fieldRef:
                fieldPath: spec.template.spec.containers[0].image
`, v1alpha1.APIKeyLabel, key, assistantImage, answers, version, img, executorShares))
}

// rolloutStatus is what Argo Rollouts reports of a Rollout: its phase,
// whether it was aborted, and the stable and current pod template hashes.
type rolloutStatus struct {
	Phase, Stable, Current string
	Aborted                bool
}

func rolloutOf(ctx context.Context, g Gomega, ns string) rolloutStatus {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(rolloutGVK)
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "support-assistant"}, u)).To(Succeed())
	s := rolloutStatus{}
	s.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	s.Stable, _, _ = unstructured.NestedString(u.Object, "status", "stableRS")
	s.Current, _, _ = unstructured.NestedString(u.Object, "status", "currentPodHash")
	s.Aborted, _, _ = unstructured.NestedBool(u.Object, "status", "abort")
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
		"-o", "yaml", "evaluationruns,analysisruns,jobs")
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
