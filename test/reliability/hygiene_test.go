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

package reliability

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("Secret hygiene", func() {
	It("shows no key, accepted, refused or malformed, in logs of any verbosity, events, status or metrics, REST server included", func(ctx SpecContext) {
		f := newFixture(ctx)
		f.logLevel = fullLogs
		refused := f.addKeySecret(ctx, "refused-key", framework.NewKey("rel")) // an ak_ key the service answers 401 to
		malformed := f.addKeySecret(ctx, "malformed-key", "sk_live_"+framework.RandomHex(12))

		good := framework.NewMetric(f.ns, "good", 0)
		unauthorized := framework.NewMetric(f.ns, "unauthorized", 1)
		unauthorized.Spec.APIKeySecretRef.Name = refused
		invalid := framework.NewMetric(f.ns, "invalid", 2)
		invalid.Spec.APIKeySecretRef.Name = malformed
		deletion := &v1alpha1.TestsetDeletion{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "unauthorized"},
			Spec: v1alpha1.TestsetDeletionSpec{
				TestsetID: "ts-1", APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: refused},
			},
		}
		for _, obj := range []client.Object{good, unauthorized, invalid, deletion} {
			Expect(k8s.Create(ctx, obj)).To(Succeed())
		}
		rest, err := framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		f.start("--serve-api=" + rest)
		// The REST server reads the same keys: one it accepts, one it does not know.
		Eventually(postMetric).WithArguments(ctx, rest, f.secrets[0]).WithTimeout(30 * time.Second).
			Should(Equal(http.StatusCreated))
		Expect(postMetric(ctx, rest, f.secrets[1])).To(Equal(http.StatusUnauthorized))

		expectReason(ctx, good, v1alpha1.ReasonCreated)
		expectReason(ctx, unauthorized, v1alpha1.ReasonUnauthorized)
		expectReason(ctx, invalid, v1alpha1.ReasonInvalidCredentials)
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(deletion), deletion)).To(Succeed())
			g.Expect(deletion.Status.Conditions).To(ContainElement(HaveField("Reason", v1alpha1.ReasonUnauthorized)))
		}).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			page, err := f.procs[0].ScrapeText(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(page).To(ContainSubstring(`code="401"`), "the scrape must see the refused calls")
		}).WithContext(ctx).Should(Succeed())
		f.expectNoSecrets(ctx)
	}, SpecTimeout(2*time.Minute))
})

// addKeySecret adds a Secret holding key to the namespace, unlabelled so the
// REST server does not accept the key, records key as one that must never be
// shown, and returns the Secret's name.
func (f *fixture) addKeySecret(ctx context.Context, name, key string) string {
	GinkgoHelper()
	secret := framework.KeySecret(f.ns, name, key)
	secret.Labels = nil
	Expect(k8s.Create(ctx, secret)).To(Succeed())
	f.secrets = append(f.secrets, key)
	return name
}

// expectReason waits until m's Ready condition has reason.
func expectReason(ctx context.Context, m *v1alpha1.Metric, reason string) {
	GinkgoHelper()
	Eventually(func(g Gomega) string {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		_, r := framework.Ready(m)
		return r
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Equal(reason), "Metric %s", m.Name)
}

// postMetric sends POST metric to the REST server at addr with key and
// returns the status code.
func postMetric(ctx context.Context, addr, key string) (int, error) {
	body := `{"name":"rest-hygiene","evalType":"human","outputType":"boolean"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		"http://"+addr+"/api/v2/projects/proj-testbed/metrics", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = res.Body.Close() }()
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}
