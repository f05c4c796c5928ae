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
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type validateOptions struct {
	checkOptions
	output     string
	noRefCheck bool
}

func newValidateCommand(kube *kubeFlags) *cobra.Command {
	o := &validateOptions{checkOptions: checkOptions{kube: kube}}
	cmd := &cobra.Command{
		Use:   "validate [PATH...] [--base REV | --live] [--no-ref-check] [-o text|json|github]",
		Short: "Check Metric and deletion manifests as the API server would admit them",
		Long: `Reads YAML files, directories (recursively) or standard input (- or no path; kustomize
build output works) and checks every object of the operator's kinds (Metric,
Testset, EvaluationRun, TestsetDeletion, TestcaseDeletion, EvaluationService,
ClusterEvaluationService) against the CRDs compiled into the plugin, with the API
server's own validation code: unknown fields (as kubectl's strict field
validation), defaults, the OpenAPI schema, every CEL rule, and metadata. A
Testset's testcases are checked as the operator reads them (JSON objects, a
unique keyField) when they are inline or in a ConfigMap among the manifests.
An EvaluationRun's testsetRef and metricRefs must name a Testset and Metrics of
its namespace among the manifests (with --live, or in the cluster); turn this
off with --no-ref-check when they are kept elsewhere. Other kinds are counted
and ignored.

Transition rules (an immutable projectId, testcaseIds, ...) need the old version:
with --base REV, the same paths at the Git revision REV; with --live, the objects
in the cluster. Objects are matched by kind, namespace and name.

Each message is the API server's, prefixed with the file and line of the object.
Exit code 1 if any object is invalid, 2 for bad usage or unreadable input.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "the output format: text, json or github (workflow annotations)")
	cmd.Flags().BoolVar(&o.noRefCheck, "no-ref-check", false,
		"do not require the Metrics and Testset an EvaluationRun names to be among the manifests (or, with --live, in the cluster)")
	return cmd
}

func (o *validateOptions) run(cmd *cobra.Command, paths []string) error {
	write, ok := map[string]func(io.Writer, checkResult) error{
		"text": writeText, "json": writeJSON, "github": writeGitHub,
	}[o.output]
	if !ok {
		return usageError(fmt.Errorf("unknown output format %q: want text, json or github", o.output))
	}
	res, err := o.check(cmd, paths)
	if err != nil {
		return err
	}
	if !o.noRefCheck {
		if err := o.checkRefs(cmd.Context(), res); err != nil {
			return err
		}
	}
	if err := write(cmd.OutOrStdout(), res); err != nil {
		return err
	}
	if n := res.invalid(); n > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d objects invalid", n, len(res.objects))}
	}
	return nil
}

// checkRefs checks the references of the runs among the manifests, and with
// --live those the cluster satisfies.
func (o *validateOptions) checkRefs(ctx context.Context, res checkResult) error {
	var inCluster existsFunc
	if o.live {
		c, _, err := o.kube.client()
		if err != nil {
			return usageError(err)
		}
		inCluster = liveExists(c)
	}
	return checkRefs(ctx, res, inCluster)
}

func summary(res checkResult) string {
	return fmt.Sprintf("%d objects valid, %d invalid, %d other objects ignored",
		len(res.objects)-res.invalid(), res.invalid(), res.ignored)
}

func writeText(w io.Writer, res checkResult) error {
	for _, c := range res.objects {
		if c.err != nil {
			if _, err := fmt.Fprintf(w, "%s: %v\n", where(c.Document), c.err); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintln(w, summary(res))
	return err
}

func writeGitHub(w io.Writer, res checkResult) error {
	for _, c := range res.objects {
		if c.err != nil {
			if _, err := fmt.Fprintf(w, "::error file=%s,line=%d::%s\n",
				githubEscape(c.File, true), c.Line, githubEscape(c.err.Error(), false)); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintln(w, summary(res))
	return err
}

// jsonObject is one object in -o json.
type jsonObject struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Operation is create, or update when an old version was found.
	Operation string `json:"operation"`
	Valid     bool   `json:"valid"`
	// Message is the API server's message; Causes its field errors.
	Message string               `json:"message,omitempty"`
	Causes  []metav1.StatusCause `json:"causes,omitempty"`
}

type jsonResult struct {
	Objects []jsonObject `json:"objects"`
	Valid   int          `json:"valid"`
	Invalid int          `json:"invalid"`
	Ignored int          `json:"ignored"`
}

func writeJSON(w io.Writer, res checkResult) error {
	out := jsonResult{Objects: []jsonObject{}, Valid: len(res.objects) - res.invalid(), Invalid: res.invalid(), Ignored: res.ignored}
	for _, c := range res.objects {
		o := jsonObject{
			File: c.File, Line: c.Line, Kind: c.Object.GetKind(),
			Namespace: c.Object.GetNamespace(), Name: c.Object.GetName(),
			Operation: "create", Valid: c.err == nil,
		}
		if c.old != nil {
			o.Operation = "update"
		}
		if c.err != nil {
			o.Message = c.err.Error()
			if status, ok := c.err.(apierrors.APIStatus); ok && status.Status().Details != nil {
				o.Causes = status.Status().Details.Causes
			}
		}
		out.Objects = append(out.Objects, o)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
