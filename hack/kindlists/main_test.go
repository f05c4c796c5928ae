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

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/eval-operator/eval-operator/internal/kinds"
)

const root = "../.."

// The files on disk are what make manifests writes for kinds.All: a kind
// added to the registry without make manifests fails here.
func TestListsAreCurrent(t *testing.T) {
	files, err := render(root, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Errorf("%s: %v (run make manifests)", path, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s is not what internal/kinds makes of it: run make manifests", path)
		}
	}
	roles, err := filepath.Glob(filepath.Join(root, "config/rbac/*_e[dv]i*_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range roles {
		if _, ok := files[strings.TrimPrefix(filepath.ToSlash(role), root+"/")]; !ok {
			t.Errorf("%s is the role of no kind of internal/kinds: delete it", role)
		}
	}
}

// A new kind reaches every list without a hand edit: render it with one
// more kind and find it in each.
func TestEveryListNamesANewKind(t *testing.T) {
	widget := kinds.Info{Kind: "Widget", Resource: "widgets", Namespaced: true, TenantMax: 7,
		Summary: "A widget.", Footprint: "small"}
	files, err := render(root, append(slices.Clone(kinds.All), widget))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		crdKustomization:  {"- bases/evaluation.eval-operator.dev_widgets.yaml\n"},
		rbacKustomization: {"- widget_editor_role.yaml\n", "- widget_viewer_role.yaml\n"},
		"config/rbac/widget_editor_role.yaml": {"name: widget-editor-role\n", "  - widgets\n",
			"aggregate-to-edit"},
		"config/rbac/widget_viewer_role.yaml": {"name: widget-viewer-role\n", "  - widgets/status\n",
			"aggregate-to-view"},
		tenantQuota: {`count/widgets.evaluation.eval-operator.dev: "7"`},
		chartKinds:  {"- widgets\n", "- kind: Widget\n  resource: widgets\n  value: widgets\n"},
		chartValues: {"  # -- Widgets (small).\n  widgets: 7\n"},
		chartSchema: {`"testcaseDeletions", "widgets"]`, `"widgets": {"type": "integer", "minimum": 1}`},
		chartYAML:   {"- kind: Widget\n", "name: widgets.evaluation.eval-operator.dev\n", "description: A widget.\n"},
	}
	for path, parts := range want {
		for _, part := range parts {
			if !strings.Contains(string(files[path]), part) {
				t.Errorf("%s lacks %q:\n%s", path, part, files[path])
			}
		}
	}
}

// The chart's templates that list kinds name none: they range over
// files/kinds.yaml, so that the generated list is the only one.
func TestChartTemplatesListNoKind(t *testing.T) {
	for _, name := range []string{"user-roles.yaml", "tenant-quota.yaml", "_helpers.tpl"} {
		path := filepath.Join(root, "charts/eval-operator/templates", name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range derive(kinds.All) {
			for _, literal := range []*regexp.Regexp{
				regexp.MustCompile(`"` + k.Resource + `"`),
				regexp.MustCompile(`count/` + k.Resource + `\.`),
				regexp.MustCompile(`tenantQuota\.` + k.ValuesKey + `\b`),
				regexp.MustCompile(`rest-tenant-max-`),
			} {
				if loc := literal.FindIndex(data); loc != nil {
					t.Errorf("%s names %s by hand (%q): read it from files/kinds.yaml", path, k.Kind, data[loc[0]:loc[1]])
				}
			}
		}
	}
}
