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

package tenancy

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

var _ = Describe("Admission", func() {
	It("budgets requests without a valid key in one bucket of their own, apart from every tenant's", func() {
		now := time.Unix(1_000_000, 0)
		a := NewAdmission(1000, Rate{0.01, 1}, Rate{0.01, 1}, func() time.Time { return now })
		for range unauthenticatedBudget.Burst {
			leave, refusal := a.Enter(context.Background(), "", false)
			Expect(refusal).NotTo(HaveOccurred())
			leave()
		}
		_, refusal := a.Enter(context.Background(), "", false)
		Expect(refusal).To(HaveOccurred())
		Expect(refusal.Status).To(Equal(http.StatusTooManyRequests))
		Expect(refusal.Details).To(HaveKeyWithValue("reason", RejectUnauthenticatedRate))
		_, refusal = a.Enter(context.Background(), "a", false)
		Expect(refusal).NotTo(HaveOccurred(), "a tenant with a valid key is not charged")
	})

	Describe("in flight", func() {
		It("refuses a request over the bound with Retry-After, and gives the tenant its token back", func() {
			now := time.Unix(1_000_000, 0)
			a := NewAdmission(2, Rate{0.01, 1}, Rate{0.01, 1}, func() time.Time { return now })
			leaveA, refusal := a.Enter(context.Background(), "a", false)
			Expect(refusal).NotTo(HaveOccurred())
			leaveB, refusal := a.Enter(context.Background(), "", false)
			Expect(refusal).NotTo(HaveOccurred())

			_, refusal = a.Enter(context.Background(), "c", false)
			Expect(refusal).To(HaveOccurred())
			Expect(refusal.Status).To(Equal(http.StatusTooManyRequests))
			Expect(refusal.Details).To(HaveKeyWithValue("reason", RejectInflight))
			Expect(refusal.Header.Get("Retry-After")).To(Equal("1"))

			leaveA()
			leaveC, refusal := a.Enter(context.Background(), "c", false)
			Expect(refusal).NotTo(HaveOccurred(), "c's token was given back when the server was full")
			leaveB()
			leaveC()
		})

		It("lets one tenant hold at most a sixteenth of the requests in flight, the rest waiting in its own line", func() {
			a := NewAdmission(2*tenantShare, Rate{1000, 1000}, Rate{1000, 1000}, time.Now)
			a.queueWait = 50 * time.Millisecond
			leave1, refusal := a.Enter(context.Background(), "a", false)
			Expect(refusal).NotTo(HaveOccurred())
			leave2, refusal := a.Enter(context.Background(), "a", false)
			Expect(refusal).NotTo(HaveOccurred())
			_, refusal = a.Enter(context.Background(), "a", false)
			Expect(refusal).To(HaveOccurred(), "no place came free while it waited")
			Expect(refusal.Details).To(HaveKeyWithValue("reason", RejectTenantInflight))
			leaveB, refusal := a.Enter(context.Background(), "b", false)
			Expect(refusal).NotTo(HaveOccurred(), "the rest is left to the others")

			a.queueWait = time.Minute
			admitted := make(chan func())
			go func() {
				defer GinkgoRecover()
				leave3, refusal := a.Enter(context.Background(), "a", false)
				Expect(refusal).NotTo(HaveOccurred())
				admitted <- leave3
			}()
			Consistently(admitted, 50*time.Millisecond).ShouldNot(Receive(), "it waits for a place")
			leave1()
			var leave3 func()
			Eventually(admitted).Should(Receive(&leave3), "and takes the place given back")

			ctx, cancel := context.WithCancel(context.Background())
			refused := make(chan *apierror.Error)
			go func() { _, refusal := a.Enter(ctx, "a", false); refused <- refusal }()
			cancel()
			var gone *apierror.Error
			Eventually(refused).Should(Receive(&gone), "a caller that hangs up leaves the line")
			Expect(gone).To(HaveOccurred())
			Expect(gone.Details).To(HaveKeyWithValue("reason", RejectTenantInflight))
			for _, leave := range []func(){leave2, leave3, leaveB} {
				leave()
			}
		})
	})
})
