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

package gates_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/internal/validate"
)

// The shipped Flagger and Keptn samples are admitted by their projects'
// own CRDs (testdata/crds, copied from fluxcd/flagger and
// keptn/lifecycle-toolkit; testdata/crds/README.md says from where), with
// the API server's validation code: a field those projects do not have, or
// a value of the wrong shape, fails here.
func TestSamplesMatchTheirProjectsCRDs(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "crds", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs in testdata/crds: %v", err)
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(paths))
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		crds = append(crds, c)
	}
	v, err := validate.NewForCRDs(crds)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, file := range []string{"flagger-metrics.yaml", "keptn.yaml"} {
		path := filepath.Join("..", "..", "config", "samples", "gates", file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := validate.Split(path, data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, d := range docs {
			if d.Object.GetNamespace() == "" {
				d.Object.SetNamespace("team-a")
			}
			if _, err := v.Create(context.Background(), d.Object); err != nil {
				t.Errorf("%s:%d: %s %s: %v", file, d.Line, d.Object.GetKind(), d.Object.GetName(), err)
			}
			seen[d.Object.GetKind()]++
		}
	}
	for kind, n := range map[string]int{"MetricTemplate": 2, "AnalysisValueTemplate": 2, "AnalysisDefinition": 1,
		"KeptnMetricsProvider": 1, "Analysis": 1} {
		if seen[kind] != n {
			t.Errorf("the samples hold %d %s, want %d", seen[kind], kind, n)
		}
	}
}
