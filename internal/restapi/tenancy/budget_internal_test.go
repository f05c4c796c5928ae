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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/kinds"
)

var _ = Describe("A budget", func() {
	It("bounds every kind the registry budgets, at its default unless set", func() {
		b := Budget{"Metric": 2, "Testset": 0}.withDefaults()
		Expect(b).To(HaveLen(len(kinds.Budgeted())))
		for _, k := range kinds.Budgeted() {
			want := k.TenantMax
			if k.Kind == "Metric" {
				want = 2
			}
			Expect(b).To(HaveKeyWithValue(k.Kind, want), k.Kind)
		}
	})
})
