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

package argocd

import "testing"

// TestHealthChecks runs every case of each kind's health_test.yaml, as
// Argo CD's own test of resource_customizations does.
func TestHealthChecks(t *testing.T) {
	for _, kind := range Kinds {
		cases, err := TestCases(kind)
		if err != nil {
			t.Fatal(err)
		}
		if len(cases) < 4 {
			t.Errorf("%s has %d health test cases; want at least pending, healthy, progressing and degraded", kind, len(cases))
		}
		for _, tc := range cases {
			t.Run(kind+"/"+tc.InputPath, func(t *testing.T) {
				obj, err := Input(kind, tc.InputPath)
				if err != nil {
					t.Fatal(err)
				}
				got, err := HealthOf(kind, obj)
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.HealthStatus {
					t.Errorf("health = %+v, want %+v", got, tc.HealthStatus)
				}
			})
		}
	}
}

// TestMissingStatus: an object whose status was never written (a CRD
// without the default, or a server that dropped it) is still progressing.
func TestMissingStatus(t *testing.T) {
	got, err := HealthOf("Metric", map[string]any{"metadata": map[string]any{"name": "m", "generation": int64(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != Progressing {
		t.Errorf("health = %+v, want Progressing", got)
	}
}
