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
	"sort"
	"strings"

	"github.com/spf13/cobra"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// Actions of a plan: what a sync of the manifest would do.
const (
	actionCreate    = "create"    // a new remote Metric
	actionAdopt     = "adopt"     // the remote Metric named by the metric-id annotation
	actionUnchanged = "unchanged" // the manifest is what the cluster holds
	actionUpdate    = "update"    // the spec changes; the remote Metric follows
	actionRejected  = "rejected"  // the API server would not admit it
	actionDelete    = "delete"    // a deletion to run
	actionCompleted = "completed" // a deletion that already ran
	actionRunning   = "running"   // a deletion under way
	// Under managementPolicies and adoptionPolicy (see planMetric).
	actionAdoptByName = "adopt-by-name" // the project's one remote Metric with the same name
	actionReportDrift = "report-drift"  // the spec changes, but the policy keeps the remote Metric as it is
	actionNothing     = "nothing"       // no id, and the policy allows no create
)

type planOptions struct {
	checkOptions
	output string
}

func newPlanCommand(kube *kubeFlags) *cobra.Command {
	o := &planOptions{checkOptions: checkOptions{kube: kube}}
	cmd := &cobra.Command{
		Use:   "plan [PATH...] [--live | --base REV] [-o text|json]",
		Short: "Show what a sync of the manifests would do, per object",
		Long: `Reads manifests as validate does and says, per Metric, Testset, TestsetDeletion
and TestcaseDeletion, what applying them would do: create a remote Metric, adopt one
(metric-id annotation), adopt one by name (adoptionPolicy ByName), leave it
unchanged, update it, report drift instead (managementPolicies without Update),
nothing (no id, and managementPolicies without Create), or be rejected by admission
(with the API server's reason, e.g. an immutable field); a deletion to run, running
or already completed. For a Testset, how many testcases a sync would create,
update and delete, where its old and new testcases are inline or in a ConfigMap
among the manifests; bad testcases (a duplicate key, a line that is not a JSON
object) are rejected as the operator would stop at them. The old versions come
from the cluster with --live, or from
a Git revision with --base; without either, every object is new.
Exit code 1 if any object would be rejected, 2 for bad usage or unreadable input.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "the output format: text or json")
	return cmd
}

// planned is one object's line of the plan.
type planned struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Action    string `json:"action"`
	Detail    string `json:"detail,omitempty"`
}

func (o *planOptions) run(cmd *cobra.Command, paths []string) error {
	if o.output != "text" && o.output != "json" {
		return usageError(fmt.Errorf("unknown output format %q: want text or json", o.output))
	}
	res, err := o.check(cmd, paths)
	if err != nil {
		return err
	}
	plan := make([]planned, 0, len(res.objects))
	for _, c := range res.objects {
		action, detail := planOf(cmd.Context(), c, res)
		plan = append(plan, planned{
			File: c.File, Line: c.Line, Kind: c.Object.GetKind(), Namespace: c.Object.GetNamespace(),
			Name: c.Object.GetName(), Action: action, Detail: detail,
		})
	}
	if err := writePlan(cmd.OutOrStdout(), o.output, plan); err != nil {
		return err
	}
	if n := res.invalid(); n > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d objects would be rejected", n, len(res.objects))}
	}
	return nil
}

func writePlan(w io.Writer, format string, plan []planned) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(plan)
	}
	for _, p := range plan {
		name := p.Name
		if p.Namespace != "" {
			name = p.Namespace + "/" + name
		}
		line := fmt.Sprintf("%s:%d: %s %s: %s", p.File, p.Line, p.Kind, name, p.Action)
		if p.Detail != "" {
			line += ": " + p.Detail
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// planOf is what a sync would do with the checked object.
func planOf(ctx context.Context, c checked, res checkResult) (action, detail string) {
	if c.err != nil {
		return actionRejected, c.err.Error()
	}
	switch c.Object.GetKind() {
	case "Metric":
		return planMetric(c)
	case "Testset":
		return planTestset(ctx, c, res)
	case "TestsetDeletion", "TestcaseDeletion":
		return planDeletion(c)
	}
	return planObject(c)
}

// planObject is what applying an object that has no remote copy does:
// an EvaluationRun, EvaluationService or ClusterEvaluationService is
// created, or its spec changes.
func planObject(c checked) (string, string) {
	if c.old == nil {
		return actionCreate, ""
	}
	if changed := changedFields(c.old, c.stored); len(changed) > 0 {
		return actionUpdate, "spec." + strings.Join(changed, ", spec.")
	}
	return actionUnchanged, ""
}

// planMetric is what a sync does with a Metric under its managementPolicies
// and adoptionPolicy, as the reconciler decides (without asking the service).
func planMetric(c checked) (string, string) {
	var m v1alpha1.Metric
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.stored.Object, &m); err != nil {
		return actionRejected, err.Error()
	}
	readOnly := ""
	if !m.Spec.Allows(v1alpha1.ManagementUpdate) {
		readOnly = ", observed only: managementPolicies " + m.Spec.PoliciesString() + " do not allow Update"
	}
	if c.old == nil {
		return planNewMetric(&m, readOnly)
	}
	changed := changedFields(c.old, c.stored)
	switch {
	case len(changed) == 0:
		return actionUnchanged, ""
	case readOnly != "":
		return actionReportDrift, "spec." + strings.Join(changed, ", spec.") + " not sent" + readOnly
	}
	return actionUpdate, "spec." + strings.Join(changed, ", spec.")
}

func planNewMetric(m *v1alpha1.Metric, readOnly string) (string, string) {
	canCreate := m.Spec.Allows(v1alpha1.ManagementCreate)
	switch {
	case m.Annotations[v1alpha1.MetricIDAnnotation] != "":
		return actionAdopt, "the remote Metric " + m.Annotations[v1alpha1.MetricIDAnnotation] + readOnly
	case m.Spec.AdoptionPolicy == v1alpha1.AdoptionByName:
		otherwise := "; if there is none, create one"
		if !canCreate {
			otherwise = "; if there is none, wait for one (managementPolicies do not allow Create)"
		}
		return actionAdoptByName, fmt.Sprintf("the one remote Metric named %q in project %s%s%s",
			m.Spec.Name, m.Spec.ProjectID, otherwise, readOnly)
	case !canCreate:
		return actionNothing, "no metric-id annotation, adoptionPolicy None and managementPolicies " +
			m.Spec.PoliciesString() + " without Create: Stalled CreateNotAllowed"
	}
	return actionCreate, "a remote Metric in project " + string(m.Spec.ProjectID)
}

func planDeletion(c checked) (string, string) {
	if c.old == nil {
		return actionDelete, ""
	}
	if success, _, _ := unstructured.NestedBool(c.old.Object, "status", "success"); success {
		return actionCompleted, "deletion already completed"
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(c.old.Object, "status", "completionTime"); found {
		return actionCompleted, "deletion finished without success; set the retry annotation to run it again"
	}
	if attempts, _, _ := unstructured.NestedInt64(c.old.Object, "status", "attempts"); attempts > 0 {
		return actionRunning, fmt.Sprintf("%d attempts so far", attempts)
	}
	return actionUnchanged, ""
}

// changedFields are the spec fields that differ between old and new, sorted.
func changedFields(old, new *unstructured.Unstructured) []string {
	o, _, _ := unstructured.NestedMap(old.Object, "spec")
	n, _, _ := unstructured.NestedMap(new.Object, "spec")
	var changed []string
	for k := range o {
		if _, ok := n[k]; !ok {
			changed = append(changed, k)
		}
	}
	for k, v := range n {
		if !apiequality.Semantic.DeepEqual(o[k], v) {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return changed
}
