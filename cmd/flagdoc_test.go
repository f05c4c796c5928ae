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
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// flagReference is the generated flag reference; `make docs` rewrites it by
// running this test with UPDATE_DOCS=1, and `make test` fails while it is stale.
var flagReference = filepath.Join("..", "docs", "reference", "flags.md")

func TestFlagReferenceIsCurrent(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseFlags(fs, nil, func(string) (string, bool) { return "", false }, &zap.Options{}); err != nil {
		t.Fatalf("defaults must be valid: %v", err)
	}
	want := renderFlagReference(fs)
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.WriteFile(flagReference, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(flagReference)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: run make docs and commit the result", flagReference)
	}
}

// renderFlagReference writes one table row per flag, as `manager --help`
// knows it, with its environment variable.
func renderFlagReference(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString(`# Manager flags

<!-- Generated from the manager's flag set by make docs; do not edit. -->

For operators who set the manager's flags, directly or through the Helm chart's values.
Every flag but --version can also be set by the environment variable in the second column;
a flag on the command line wins. A bad value stops the manager at start with a message naming the flag.

| flag | environment variable | default | meaning |
|---|---|---|---|
`)
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		name := "`--" + f.Name
		if typ != "" {
			name += " " + typ
		}
		name += "`"
		def := ""
		if f.DefValue != "" {
			def = "`" + f.DefValue + "`"
		}
		env := "`" + envPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")) + "`"
		if f.Name == versionFlag {
			env = "" // applyEnv reads none for it
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, env, def, escapeCell(usage))
	})
	return b.String()
}

// escapeCell keeps a usage text inside one Markdown table cell.
func escapeCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
