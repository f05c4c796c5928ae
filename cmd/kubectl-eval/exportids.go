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
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/manifests"
)

type exportIDsOptions struct {
	kube          *kubeFlags
	allNamespaces bool
	output        string
	write         []string
}

func newExportIDsCommand(kube *kubeFlags) *cobra.Command {
	o := &exportIDsOptions{kube: kube}
	cmd := &cobra.Command{
		Use:   "export-ids [-n NS | -A] [-o FILE | --write PATHS]",
		Short: "Carry the cluster's remote Metric ids to the repository, so another cluster adopts",
		Long: `Reads the Metrics of the cluster and writes, for every one that has a remote id
(its metric-id annotation or status.id), a patch that sets the metric-id annotation.
Committed next to the manifests, it makes any new cluster adopt the remote Metrics
instead of creating them again.

By default the patches form a kustomize Component: write it to
<dir>/kustomization.yaml and add <dir> to the kustomization's components. With
--write, the matching Metric manifests in the given files or directories are
annotated in place instead (matched by namespace and name; a manifest without a
namespace by name alone).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "export the Metrics of every namespace")
	f.StringVarP(&o.output, "output", "o", "-", "the file to write the kustomize Component to, or - for stdout")
	f.StringSliceVar(&o.write, "write", nil, "annotate the Metric manifests in these files or directories in place")
	cmd.MarkFlagsMutuallyExclusive("output", "write")
	return cmd
}

func (o *exportIDsOptions) run(cmd *cobra.Command) error {
	c, ns, err := o.kube.client()
	if err != nil {
		return err
	}
	var opts []client.ListOption
	if !o.allNamespaces {
		opts = append(opts, client.InNamespace(ns))
	}
	var list v1alpha1.MetricList
	if err := c.List(cmd.Context(), &list, opts...); err != nil {
		return fmt.Errorf("listing the Metrics: %w", err)
	}
	manifests.SortByName(list.Items)
	ids := manifests.IDsOf(list.Items)
	if len(o.write) > 0 {
		return o.annotate(cmd, ids)
	}
	data, err := manifests.IDComponent(ids)
	if err != nil {
		return err
	}
	if o.output == "-" {
		_, err = cmd.OutOrStdout().Write(data)
		return err
	}
	if err := os.WriteFile(o.output, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", o.output, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote the ids of %d Metrics to %s\n", len(ids), o.output)
	return nil
}

// errNotAnnotated fails the command when a manifest could not be annotated,
// after every manifest has been reported.
var errNotAnnotated = errors.New("some Metric manifests were not annotated")

func (o *exportIDsOptions) annotate(cmd *cobra.Command, ids []manifests.ID) error {
	done, err := manifests.AnnotateFiles(o.write, ids)
	failed := false
	for _, a := range done {
		where := fmt.Sprintf("%s:%d: Metric %s", a.Path, a.Line, a.Name)
		if a.Problem != "" {
			failed = true
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: not annotated: %s\n", where, a.Problem)
			continue
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: metric-id %s\n", where, a.ID)
	}
	if err != nil {
		return err
	}
	if failed {
		return errNotAnnotated
	}
	return nil
}
