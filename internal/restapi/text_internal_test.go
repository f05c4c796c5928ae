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

package restapi

import (
	"testing"

	"k8s.io/utils/ptr"
)

func TestTextErrors(t *testing.T) {
	if errs := textErrors(ptr.To("Faithfulness"), ptr.To("a\nb\tc"), nil, ptr.To("{{x}}\r\n")); len(errs) != 0 {
		t.Errorf("valid text refused: %v", errs)
	}
	errs := textErrors(ptr.To("a\nb"), ptr.To("\x7f"), ptr.To("\uffff"), ptr.To("\u0085"))
	if len(errs) != 4 || errs[0].Field != "name" || errs[1].Field != "description" ||
		errs[2].Field != "guidelines" || errs[3].Field != "promptTemplate" {
		t.Errorf("errors = %v, want one per field", errs)
	}
}
