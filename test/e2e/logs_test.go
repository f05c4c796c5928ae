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
	"io"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var _ = Describe("The manager's log", func() {
	It("says a failed call to the service in one line, without a stack trace, and each remote write in one", func(ctx SpecContext) {
		ns := newNamespace(ctx, "logs")
		createKeySecret(ctx, ns, framework.KeySecretName, evalapitest.DefaultKey, false)
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		upstream.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Status(503), evalapitest.Status(503))

		var out framework.Buffer
		probeAddr, err := framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
		m, err := framework.StartManagerWithEnv(managerBinary, controlPlane.Kubeconfig, probeAddr, nil,
			io.MultiWriter(&out, &prefixed{name: "manager"}), "--metrics-bind-address=0", "--api-url="+upstream.URL())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = m.Stop(stopGrace, nil) })
		Expect(m.WaitReady(ctx)).To(Succeed())

		metric := framework.NewMetric(ns, "logged", 0)
		Expect(k8s.Create(ctx, metric)).To(Succeed())
		Eventually(out.String).Should(ContainSubstring(`"msg":"Created remote Metric"`))
		log := out.String()
		Expect(strings.Count(log, `"msg":"Reconciler error"`)).To(BeNumerically(">=", 2), "a line for each 503")
		// A retried failure of the service is its incident, not the operator's:
		// info. (The control plane is shared: other specs' objects may log errors.)
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, `"Metric":{"name":"logged","namespace":"`+ns+`"}`) {
				Expect(line).NotTo(ContainSubstring(`"level":"error"`))
			}
		}
		Expect(log).NotTo(Or(ContainSubstring("stacktrace"), ContainSubstring("goroutine ")))
	})
})
