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

package framework

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"os/exec"
)

// Run runs a command from the repository root with stdin and returns what
// it wrote to stdout and stderr.
func Run(ctx context.Context, stdin []byte, name string, args ...string) (stdout []byte, stderr string, err error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = RepoRoot()
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.String(), err
}

// Tool is the command the environment variable env names (the Makefile sets
// them: KUBECTL, HELM, KUSTOMIZE, ...), else def.
func Tool(env, def string) string { return cmp.Or(os.Getenv(env), def) }
