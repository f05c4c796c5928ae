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
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/eval-operator/eval-operator/internal/kinds"
)

// KubectlGetYAML runs `kubectl get <kind> -A -o yaml` for every kind, as a
// cluster admin does, against the API server of kubeconfig, and fails
// unless each prints its list: a value a tenant stored that YAML cannot
// carry would blind that view of every namespace. kubectl is $KUBECTL, or
// the one on PATH.
func KubectlGetYAML(ctx context.Context, kubeconfig string) error {
	for _, kind := range kinds.Resources() {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, cmp.Or(os.Getenv("KUBECTL"), "kubectl"), //nolint:gosec // the kubectl the caller chose
			"--kubeconfig", kubeconfig, "get", kind, "-A", "-o", "yaml")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("kubectl get %s -A -o yaml: %w: %s", kind, err, strings.TrimSpace(stderr.String()))
		}
		if !bytes.Contains(stdout.Bytes(), []byte("kind: List")) {
			return fmt.Errorf("kubectl get %s -A -o yaml printed no list: %q", kind, stdout.String())
		}
	}
	return nil
}
