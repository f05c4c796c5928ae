//go:build e2e

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

package e2e

import (
	"net/http"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
	"github.com/eval-operator/eval-operator/test/framework/argocd"
)

// writeTestdataEnv, when set, makes the spec below write the objects it
// judged to config/argocd's testdata: the health tests Argo CD users read
// then hold objects the real manager produced.
const writeTestdataEnv = "ARGOCD_WRITE_TESTDATA"

var _ = Describe("Argo CD health checks", func() {
	It("judge the objects the manager produces in each state", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		ns := newNamespace(ctx, "argocd-health")
		createKeySecret(ctx, ns, "good-key", evalapitest.DefaultKey, false)
		createKeySecret(ctx, ns, "refused-key", framework.NewKey("e2e"), false)

		expect := func(obj client.Object, file, status, message string) {
			GinkgoHelper()
			gvk, err := apiutil.GVKForObject(obj, k8s.Scheme())
			Expect(err).NotTo(HaveOccurred())
			kind := gvk.Kind
			var live map[string]any
			Eventually(func(g Gomega) {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvk)
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), u)).To(Succeed())
				got, err := argocd.HealthOf(kind, u.Object)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(got.Status).To(Equal(status))
				g.Expect(got.Message).To(HavePrefix(message))
				live = u.Object
			}).Should(Succeed(), "%s %s", kind, obj.GetName())
			if os.Getenv(writeTestdataEnv) != "" {
				writeTestdata(kind, file, live)
			}
		}

		// Before any manager runs: the CRD's default status.
		pending := metric(ns, "pending", "good-key")
		Expect(k8s.Create(ctx, pending)).To(Succeed())
		expect(pending, "pending", argocd.Progressing, "Waiting for the operator")
		pendingTestset := testsetDeletion(ns, "pending", "good-key")
		Expect(k8s.Create(ctx, pendingTestset)).To(Succeed())
		expect(pendingTestset, "pending", argocd.Progressing, "Waiting for the operator")
		pendingTestcases := testcaseDeletion(ns, "pending", "good-key")
		Expect(k8s.Create(ctx, pendingTestcases)).To(Succeed())
		expect(pendingTestcases, "pending", argocd.Progressing, "Waiting for the operator")

		startManager(ctx, "manager", "--api-url="+upstream.URL())
		expect(pending, "healthy", argocd.Healthy, "Created: created remote Metric")
		expect(pendingTestset, "healthy", argocd.Healthy, "Completed: deleted testset")
		expect(pendingTestcases, "healthy", argocd.Healthy, "Completed: deleted 2 testcases")

		// A read-only mirror of a Metric made elsewhere: Healthy while it
		// equals the spec, Degraded once the spec differs and its policy keeps
		// the operator from sending it.
		svc, err := evalapi.NewClient(evalapi.Options{BaseURL: upstream.URL()})
		Expect(err).NotTo(HaveOccurred())
		elsewhere, err := svc.CreateMetric(ctx, evalapitest.DefaultKey, "proj_argocd",
			evalapi.MetricRequest{Name: "Exact match", EvalType: "heuristic", OutputType: "boolean"})
		Expect(err).NotTo(HaveOccurred())
		mirror := metric(ns, "mirror", "good-key")
		mirror.Annotations = map[string]string{v1alpha1.MetricIDAnnotation: elsewhere.ID}
		mirror.Spec.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementObserve}
		Expect(k8s.Create(ctx, mirror)).To(Succeed())
		expect(mirror, "healthy-observed", argocd.Healthy, "Observed: read remote Metric "+elsewhere.ID)
		edited := mirror.DeepCopy()
		edited.Spec.Description = ptr.To[v1alpha1.Text]("edited in Git")
		Expect(k8s.Patch(ctx, edited, client.MergeFrom(mirror))).To(Succeed())
		expect(edited, "degraded-drifted", argocd.Degraded, "Drifted: the remote Metric differs from the spec in description")

		// Paused: the Ready Metric stays Ready, the deletions created paused
		// wait; Argo CD shows each Suspended.
		pausedMetric := pending.DeepCopy()
		pausedMetric.Annotations = map[string]string{v1alpha1.PausedAnnotation: "true"}
		Expect(k8s.Patch(ctx, pausedMetric, client.MergeFrom(pending))).To(Succeed())
		expect(pausedMetric, "suspended-paused", argocd.Suspended, "Paused: paused by annotation")
		for _, obj := range []client.Object{
			testsetDeletion(ns, "paused", "good-key"),
			testcaseDeletion(ns, "paused", "good-key"),
		} {
			obj.SetAnnotations(map[string]string{v1alpha1.PausedAnnotation: "true"})
			Expect(k8s.Create(ctx, obj)).To(Succeed())
			expect(obj, "suspended-paused", argocd.Suspended, "Paused: paused by annotation")
		}

		for _, obj := range []client.Object{
			metric(ns, "no-secret", "missing"),
			testsetDeletion(ns, "no-secret", "missing"),
			testcaseDeletion(ns, "no-secret", "missing"),
		} {
			Expect(k8s.Create(ctx, obj)).To(Succeed())
			expect(obj, "degraded-secret-not-found", argocd.Degraded, `SecretNotFound: Secret "missing" not found`)
		}
		refused := metric(ns, "refused", "refused-key")
		Expect(k8s.Create(ctx, refused)).To(Succeed())
		expect(refused, "degraded-unauthorized", argocd.Degraded, "Unauthorized: the service refused the API key")

		upstream.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Status(http.StatusBadRequest))
		rejected := metric(ns, "rejected", "good-key")
		Expect(k8s.Create(ctx, rejected)).To(Succeed())
		expect(rejected, "degraded-rejected", argocd.Degraded, "Rejected: the service rejected the request")

		upstream.InjectFaults(evalapitest.OpCreateMetric, evalapitest.CommitThenReset)
		unknown := metric(ns, "unknown", "good-key")
		Expect(k8s.Create(ctx, unknown)).To(Succeed())
		expect(unknown, "degraded-create-outcome-unknown", argocd.Degraded, "CreateOutcomeUnknown: ")

		// The service fails until the end of the spec: the manager retries by itself.
		upstream.FailRandomly(1, 1, evalapitest.Status(http.StatusServiceUnavailable))
		for _, obj := range []client.Object{
			metric(ns, "retrying", "good-key"),
			testsetDeletion(ns, "retrying", "good-key"),
			testcaseDeletion(ns, "retrying", "good-key"),
		} {
			Expect(k8s.Create(ctx, obj)).To(Succeed())
			expect(obj, "progressing-upstream-unavailable", argocd.Progressing, "UpstreamUnavailable: ")
		}
	})
})

func metric(ns, name, secret string) *v1alpha1.Metric {
	m := &v1alpha1.Metric{Spec: v1alpha1.MetricSpec{
		ProjectID: "proj_argocd", Name: "Exact match", EvalType: "heuristic", OutputType: "boolean",
		APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: secret},
	}}
	m.Name, m.Namespace = name, ns
	return m
}

func testsetDeletion(ns, name, secret string) *v1alpha1.TestsetDeletion {
	d := &v1alpha1.TestsetDeletion{Spec: v1alpha1.TestsetDeletionSpec{
		TestsetID: "ts_" + v1alpha1.ResourceID(name), APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: secret},
		TTLSecondsAfterFinished: ptr.To[int32](3600),
	}}
	d.Name, d.Namespace = name, ns
	return d
}

func testcaseDeletion(ns, name, secret string) *v1alpha1.TestcaseDeletion {
	d := &v1alpha1.TestcaseDeletion{Spec: v1alpha1.TestcaseDeletionSpec{
		TestcaseIDs:     []v1alpha1.ResourceID{"tc_" + v1alpha1.ResourceID(name) + "_1", "tc_" + v1alpha1.ResourceID(name) + "_2"},
		APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: secret},
	}}
	d.Name, d.Namespace = name, ns
	return d
}

// writeTestdata writes obj as kind's testdata/<file>.yaml, without the fields
// that differ from run to run and mean nothing to a health check.
func writeTestdata(kind, file string, obj map[string]any) {
	GinkgoHelper()
	u := &unstructured.Unstructured{Object: obj}
	u = u.DeepCopy()
	u.SetManagedFields(nil)
	u.SetUID("")
	u.SetResourceVersion("")
	u.SetCreationTimestamp(metav1.Time{})
	u.SetNamespace("default")
	data, err := yaml.Marshal(u.Object)
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(argocd.Dir(kind), "testdata")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, file+".yaml"), data, 0o644)).To(Succeed()) //nolint:gosec // testdata
}
