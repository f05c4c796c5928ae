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
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/internal/executorpolicy"
	"github.com/eval-operator/eval-operator/internal/gates"
	"github.com/eval-operator/eval-operator/test/framework"
)

type webhook struct {
	Type, URL string
	Metadata  map[string]string
}

// The gate samples are what users copy: each template they hold makes a
// run, and each Flagger webhook names a template they hold and a gate path
// the REST server serves.
func TestGateSamples(t *testing.T) {
	templates, hooks := readGateSamples(t)
	want := map[string]string{"confirm-promotion": "/gates/v1/flagger", "rollback": "/gates/v1/flagger/rollback"}
	if len(hooks) != len(want) {
		t.Fatalf("the Flagger sample has %d webhooks, want %d", len(hooks), len(want))
	}
	for _, h := range hooks {
		u, err := url.Parse(strings.ReplaceAll(h.URL, "${GATE_KEY}", "ak_x"))
		if err != nil || u.Path != want[h.Type] || u.User.Username() != "gate" {
			t.Errorf("webhook %s: URL %s (%v), want the path %s and the key as the password", h.Type, h.URL, err, want[h.Type])
		}
		if !templates[h.Metadata["template"]] {
			t.Errorf("webhook %s names template %q, which no sample ConfigMap holds", h.Type, h.Metadata["template"])
		}
	}
}

// Every sample gate links its run to the release's SystemVersion: it names
// a System the samples hold, and no sample puts a revision where a
// version's id belongs.
func TestGateSamplesNameTheirSystem(t *testing.T) {
	_, hooks := readGateSamples(t)
	paths, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "config", "samples", "gates", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	systems, named := map[string]bool{}, map[string]string{}
	for _, h := range hooks {
		named["Flagger webhook "+h.Type] = h.Metadata["system"]
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, banned := range []string{"--system-version-id", "systemVersionId"} {
			if bytes.Contains(data, []byte(banned)) {
				t.Errorf("%s passes %s: a gate derives the release's SystemVersion (--system, metadata.system)", path, banned)
			}
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if obj["kind"] == "System" {
				systems[obj["metadata"].(map[string]any)["name"].(string)] = true
			}
			// The analysis args that name the System (a Rollout's, a Kargo Stage's).
			walk(obj, func(m map[string]any) {
				if m["name"] == "system" && m["value"] != nil {
					named[fmt.Sprintf("%s: %v %v's system arg", filepath.Base(path), obj["kind"], obj["metadata"])] = fmt.Sprint(m["value"])
				}
			})
		}
	}
	if len(named) < 5 {
		t.Errorf("only %d gates name a System: %v", len(named), named)
	}
	for where, system := range named {
		if !systems[system] {
			t.Errorf("%s names System %q, which no sample holds (%v)", where, system, systems)
		}
	}
}

// walk calls f on every map within v.
func walk(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for _, x := range v {
			walk(x, f)
		}
	case []any:
		for _, x := range v {
			walk(x, f)
		}
	}
}

// readGateSamples returns the names of the sample ConfigMaps holding a valid
// template, and the sample Canaries' webhooks.
func readGateSamples(t *testing.T) (map[string]bool, []webhook) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "config", "samples", "gates", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no gate samples: %v", err)
	}
	templates := map[string]bool{}
	var hooks []webhook
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			var obj struct {
				Kind     string
				Metadata struct{ Name string }
				Data     map[string]string
				Spec     struct {
					Analysis struct{ Webhooks []webhook }
				}
			}
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if text, ok := obj.Data[gates.TemplateKey]; ok && obj.Kind == "ConfigMap" {
				run, err := gates.FromTemplate([]byte(text), "team-a")
				if err != nil {
					t.Errorf("%s: ConfigMap %s: %v", path, obj.Metadata.Name, err)
				} else if run.Spec.Executor != nil {
					// A sample's executor starts under the namespace's defaults.
					tmpl := run.Spec.Executor.Template.DeepCopy()
					if errs := executorpolicy.Apply(tmpl, executorpolicy.Grant{KeySecret: "evaluation-api-key"},
						field.NewPath("spec", "executor", "template")); len(errs) > 0 {
						t.Errorf("%s: ConfigMap %s: the executor is refused: %v", path, obj.Metadata.Name, errs)
					}
				}
				templates[obj.Metadata.Name] = true
			}
			if obj.Kind == "Canary" {
				hooks = append(hooks, obj.Spec.Analysis.Webhooks...)
			}
		}
	}
	return templates, hooks
}
