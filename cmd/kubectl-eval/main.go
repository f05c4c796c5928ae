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

// Command kubectl-eval is a kubectl plugin for repositories that keep
// eval-operator's Metrics in Git: `kubectl eval import` turns a project's
// Metrics in the service into manifests, `kubectl eval export-ids` carries a
// cluster's remote ids to the repository so another cluster adopts instead
// of creating; `kubectl eval validate` and `kubectl eval plan` check
// manifests before they merge, as the API server would admit them;
// `kubectl eval gate` runs an evaluation and exits with its verdict.
// Installed on PATH, kubectl runs it as `kubectl eval`.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/buildinfo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := newRootCommand(os.Stdout, os.Stderr, os.Getenv).ExecuteContext(ctx)
	stop()
	os.Exit(exitCode(err))
}

// newRootCommand is the plugin with its subcommands, writing to stdout and
// stderr and reading the environment through getenv (tests pass their own).
func newRootCommand(stdout, stderr io.Writer, getenv func(string) string) *cobra.Command {
	root := &cobra.Command{
		Use:          "kubectl-eval",
		Short:        "Manage eval-operator Metric manifests",
		SilenceUsage: true,
		Annotations:  map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl eval"},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	kube := &kubeFlags{}
	kube.bind(root)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.AddCommand(newImportCommand(kube, getenv), newExportIDsCommand(kube),
		newValidateCommand(kube), newPlanCommand(kube), newGateCommand(kube), newExecCommand(getenv), newVersionCommand())
	return root
}

// newVersionCommand prints the plugin's release version, source revision
// and Go version; pin the plugin to the operator's version.
func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, to match it with the operator's",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := buildinfo.Get()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "kubectl-eval %s (revision %s, %s)\n", info.Version, info.Revision, info.GoVersion)
			return err
		},
	}
}

// kubeFlags are kubectl's connection flags, read with client-go's standard
// loading rules (KUBECONFIG, ~/.kube/config).
type kubeFlags struct {
	kubeconfig string
	context    string
	namespace  string
}

func (k *kubeFlags) bind(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&k.kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	f.StringVar(&k.context, "context", "", "the kubeconfig context to use")
	f.StringVarP(&k.namespace, "namespace", "n", "", "the namespace (default: the context's)")
}

func (k *kubeFlags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: k.context}
	overrides.Context.Namespace = k.namespace
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// client connects to the cluster and returns a client and the namespace to
// work in (-n, else the context's, else default).
func (k *kubeFlags) client() (client.Client, string, error) {
	cc := k.clientConfig()
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	scheme := k8sruntime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", fmt.Errorf("connecting to the cluster: %w", err)
	}
	return c, ns, nil
}
