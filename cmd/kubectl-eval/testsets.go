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
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// sourceSet reads a Testset's testcases as the operator would, where they
// can be read: inline, or a ConfigMap cms holds. from says where they come
// from; a nil set means they are read only when synced (a ConfigMap cms
// lacks, a Flux source). Bad data is an error with the operator's reason
// and message.
func sourceSet(ctx context.Context, u *unstructured.Unstructured, cms configMapSource) (
	set *testcases.Set, from string, err error) {
	var t v1alpha1.Testset
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &t); err != nil {
		return nil, "", err
	}
	key := string(t.Spec.KeyField)
	var s testcases.Set
	switch {
	case t.Spec.ConfigMapRef != nil:
		ref := t.Spec.ConfigMapRef
		from = "ConfigMap " + ref.Name
		var name string
		var data map[string]string
		var ok bool
		name, data, ok, err = cms.configMap(ctx, t.Namespace, ref.Name)
		switch {
		case err != nil:
			return nil, from, err
		case !ok:
			return nil, from + ", not found", nil
		case name != ref.Name:
			// kustomize's configMapGenerator named it with its hash.
			from = "ConfigMap " + name
		}
		dataKey := ref.Key
		if dataKey == "" {
			dataKey = "testcases.jsonl"
		}
		lines, ok := data[dataKey]
		if !ok {
			return nil, from, fmt.Errorf("%s: %s has no key %s", v1alpha1.ReasonSourceNotReady, from, dataKey)
		}
		s, err = testcases.FromLines(strings.NewReader(lines), key)
		from += " key " + dataKey
	case t.Spec.SourceRef != nil:
		return nil, fmt.Sprintf("%s %s, %s", t.Spec.SourceRef.Kind, t.Spec.SourceRef.Name, t.Spec.SourceRef.Path), nil
	default:
		items := make([][]byte, len(t.Spec.Inline))
		for i, it := range t.Spec.Inline {
			items[i] = it.Raw
		}
		from = "inline"
		s, err = testcases.FromItems(items, key)
	}
	switch {
	case err != nil && t.Spec.ConfigMapRef != nil:
		return nil, from, fmt.Errorf("%s: %s: %w", reasonOf(err), from, err)
	case err != nil:
		return nil, from, fmt.Errorf("%s: %w", reasonOf(err), err)
	}
	return &s, from, nil
}

func reasonOf(err error) string {
	if bad, ok := err.(*testcases.Error); ok { //nolint:errorlint // FromLines and FromItems return it unwrapped
		return bad.Reason
	}
	return v1alpha1.ReasonInvalidTestcases
}

// planTestset is what a sync does with a Testset: the remote Testset
// created, adopted or kept, and how many of its testcases would be created,
// updated and deleted where both the old and the new testcases can be read:
// the new ones from the manifests, the old ones from the revision's (--base)
// or the cluster (--live).
func planTestset(ctx context.Context, c checked, res checkResult) (string, string) {
	var t v1alpha1.Testset
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.stored.Object, &t); err != nil {
		return actionRejected, err.Error()
	}
	set, from, _ := sourceSet(ctx, c.stored, res.configMaps)
	readOnly := ""
	if !t.Spec.Allows(v1alpha1.ManagementUpdate) {
		readOnly = ", observed only: managementPolicies " + t.Spec.PoliciesString() + " do not allow Update"
	}
	if c.old == nil {
		return planNewTestset(&t, set, from, readOnly)
	}
	old, oldFrom, oldErr := sourceSet(ctx, c.old, res.oldConfigMaps)
	changed := changedFields(c.old, c.stored)
	var counts string
	switch {
	case set != nil && old != nil:
		plan := set.Diff(testcases.IndexOf(*old, string(t.Spec.KeyField)))
		if !plan.Empty() {
			counts = "testcases: " + plan.String()
		}
	case set == nil:
		counts = "testcases from " + from + ": compared with the service's when synced"
	case oldErr != nil:
		counts = "testcases: the old ones cannot be read (" + oldErr.Error() + "): compared with the service's when synced"
	default:
		counts = "testcases: the old ones (" + oldFrom + ") cannot be read: compared with the service's when synced"
	}
	switch {
	case len(changed) == 0 && counts == "":
		return actionUnchanged, ""
	case len(changed) == 0:
		return actionUpdate, counts
	case readOnly != "":
		return actionReportDrift, "spec." + strings.Join(changed, ", spec.") + " not sent" + readOnly
	}
	detail := "spec." + strings.Join(changed, ", spec.")
	if counts != "" {
		detail += "; " + counts
	}
	return actionUpdate, detail
}

func planNewTestset(t *v1alpha1.Testset, set *testcases.Set, from, readOnly string) (string, string) {
	what := "testcases from " + from + ", read when synced"
	if set != nil {
		what = fmt.Sprintf("%d testcases from %s", len(set.Cases), from)
	}
	switch {
	case t.Annotations[v1alpha1.TestsetIDAnnotation] != "":
		return actionAdopt, "the remote Testset " + t.Annotations[v1alpha1.TestsetIDAnnotation] + ", synced to " + what + readOnly
	case !t.Spec.Allows(v1alpha1.ManagementCreate):
		return actionNothing, "no testset-id annotation and managementPolicies " + t.Spec.PoliciesString() +
			" without Create: Stalled CreateNotAllowed"
	}
	return actionCreate, fmt.Sprintf("a remote Testset in project %s with %s", t.Spec.ProjectID, what)
}
