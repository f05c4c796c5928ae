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

package controller_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/eval-operator/eval-operator/"

// The import rules of docs/development.md ("Code map"): the families of
// reconcilers share only the kit, the kit knows no family, and the REST
// server and the seam know no reconciler, and the reconcilers know the
// service only through the seam. A forbidden path ending in /...
// is a whole subtree; any other is one package.
func TestImportRules(t *testing.T) {
	families := []string{"internal/controller", "internal/controller/metric", "internal/controller/testset",
		"internal/controller/oneshot", "internal/controller/connection", "internal/controller/evalrun",
		"internal/controller/system", "internal/controller/scoring"}
	rules := []struct {
		dir    string
		forbid []string
	}{
		{"internal/controller/kit", families},
		{"internal/controller/metric", without(families, "internal/controller/metric")},
		{"internal/controller/testset", without(families, "internal/controller/testset")},
		{"internal/controller/oneshot", without(families, "internal/controller/oneshot")},
		{"internal/controller/connection", without(families, "internal/controller/connection")},
		{"internal/controller/evalrun", without(families, "internal/controller/evalrun")},
		{"internal/controller/system", without(families, "internal/controller/system")},
		{"internal/controller/scoring", without(families, "internal/controller/scoring")},
		// The reconcilers speak the seam's terms, never the service's wire.
		{"internal/controller", []string{"internal/restapi/...", "cmd/...", "internal/evalapi/...", "internal/convert"}},
		{"internal/restapi", []string{"internal/controller/..."}},
		// The REST server's parts below its assembly: the answers know no
		// other part, the tenancy knows neither the server nor its gates, and
		// the gates do not know the server.
		{"internal/restapi/apierror", []string{"internal/restapi", "internal/restapi/tenancy", "internal/restapi/rollout",
			"internal/remote"}},
		{"internal/restapi/tenancy", []string{"internal/restapi", "internal/restapi/rollout", "internal/remote"}},
		{"internal/restapi/rollout", []string{"internal/restapi", "internal/remote"}},
		{"internal/remote", []string{"internal/controller/...", "internal/restapi/..."}},
		{"internal/convert", []string{"internal/remote", "internal/controller/...", "internal/restapi/..."}},
		// The judge's client knows the chat-completions wire, not the cluster
		// or the service: the seam hands it its transport and key.
		{"internal/judge", []string{"internal/...", "api/...", "cmd/..."}},
		// The verdict is pure: counts in, a verdict out, nothing of the project.
		{"internal/verdict", []string{"internal/...", "api/...", "cmd/..."}},
		// The executor runs in a Pod with only the service's API: it speaks the wire, never the cluster.
		{"internal/execute", []string{"api/...", "internal/controller/...", "internal/restapi/...", "internal/remote", "cmd/..."}},
	}
	for _, r := range rules {
		for file, imports := range productImports(t, filepath.Join("..", "..", r.dir)) {
			for _, imp := range imports {
				for _, f := range r.forbid {
					tree, isTree := strings.CutSuffix(f, "/...")
					if imp == tree || (isTree && strings.HasPrefix(imp, tree+"/")) {
						t.Errorf("%s imports %s: %s may not import %s", file, imp, r.dir, f)
					}
				}
			}
		}
	}
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// productImports are the project's packages each product file under dir
// imports (tests excluded), relative to the module, by file.
func productImports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			if rel, ok := strings.CutPrefix(p, module); ok {
				out[path] = append(out[path], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
