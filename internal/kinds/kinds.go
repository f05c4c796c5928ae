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

// Package kinds lists the kinds of the evaluation.eval-operator.dev group
// once, for the code that treats them alike (the state metrics, the
// services' users, the tests that check the installs' lists of kinds). A new
// kind is added here and in its own files.
package kinds

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// Info describes one kind of the group.
type Info struct {
	// Kind is the kind's name, as manifests spell it.
	Kind string
	// Resource is its plural resource name, as kubectl, RBAC and quotas spell it.
	Resource string
	// Namespaced is false for a cluster-scoped kind.
	Namespaced bool
	// New and NewList return an empty object and list of a kind whose
	// objects call an Evaluation Service: each resolves one
	// (status.service), counts as its user and has a Ready condition.
	// They are nil for the service kinds themselves. (A SystemVersion
	// resolves its System's service and records it as its own.)
	New     func() v1alpha1.Object
	NewList func() client.ObjectList
}

// All are every kind of the group: those whose objects use a service,
// then the service kinds.
var All = []Info{
	{"Metric", "metrics", true,
		func() v1alpha1.Object { return &v1alpha1.Metric{} }, func() client.ObjectList { return &v1alpha1.MetricList{} }},
	{"Testset", "testsets", true,
		func() v1alpha1.Object { return &v1alpha1.Testset{} }, func() client.ObjectList { return &v1alpha1.TestsetList{} }},
	{"EvaluationRun", "evaluationruns", true,
		func() v1alpha1.Object { return &v1alpha1.EvaluationRun{} }, func() client.ObjectList { return &v1alpha1.EvaluationRunList{} }},
	{"System", "systems", true,
		func() v1alpha1.Object { return &v1alpha1.System{} }, func() client.ObjectList { return &v1alpha1.SystemList{} }},
	{"SystemVersion", "systemversions", true,
		func() v1alpha1.Object { return &v1alpha1.SystemVersion{} }, func() client.ObjectList { return &v1alpha1.SystemVersionList{} }},
	{"TestsetDeletion", "testsetdeletions", true,
		func() v1alpha1.Object { return &v1alpha1.TestsetDeletion{} }, func() client.ObjectList { return &v1alpha1.TestsetDeletionList{} }},
	{"TestcaseDeletion", "testcasedeletions", true,
		func() v1alpha1.Object { return &v1alpha1.TestcaseDeletion{} }, func() client.ObjectList { return &v1alpha1.TestcaseDeletionList{} }},
	{string(v1alpha1.KindEvaluationService), "evaluationservices", true, nil, nil},
	{string(v1alpha1.KindClusterEvaluationService), "clusterevaluationservices", false, nil, nil},
}

// Users are the kinds whose objects use a service.
func Users() []Info {
	out := make([]Info, 0, len(All))
	for _, k := range All {
		if k.New != nil {
			out = append(out, k)
		}
	}
	return out
}

// Resources returns the plural resource name of every kind of the group.
func Resources() []string {
	out := make([]string, 0, len(All))
	for _, k := range All {
		out = append(out, k.Resource)
	}
	return out
}

// Of is the kind named kind, and whether the group has it.
func Of(kind string) (Info, bool) {
	for _, k := range All {
		if k.Kind == kind {
			return k, true
		}
	}
	return Info{}, false
}
