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
	// Namespaced is false for a cluster-scoped kind. Every namespaced kind
	// gets an editor and a viewer role aggregated into the built-in edit and
	// view roles (a cluster-scoped one none: namespace admins would edit
	// what every namespace uses).
	Namespaced bool
	// Summary is one line on what an object of the kind is (Artifact Hub's
	// list of the chart's CRDs).
	Summary string
	// TenantMax is how many objects of the kind a namespace holds at most by
	// default: the REST server's budget (--rest-tenant-max) and the tenant
	// ResourceQuota. 0 for a kind tenants do not create.
	TenantMax int
	// Footprint says how large one object of a budgeted kind grows (the
	// chart's values, next to its tenantQuota entry).
	Footprint string
	// New and NewList return an empty object and list of a kind whose
	// objects call an Evaluation Service: each resolves one
	// (status.service), counts as its user and has a Ready condition.
	// They are nil for the service kinds themselves.
	New     func() v1alpha1.Object
	NewList func() client.ObjectList
}

// All are every kind of the group: those whose objects use a service,
// then the service kinds. The installs' lists of kinds (the CRDs, the
// editor and viewer roles, the tenant quotas, the chart's values and its
// Artifact Hub annotations) are generated from it by make manifests
// (hack/kindlists).
//
// The default budgets: at most 500 x 75 KiB of Metrics, 500 x 2 KiB of
// TestsetDeletions and 20 x 1.3 MiB of TestcaseDeletions, about 64 MiB of
// objects in all, 68 MiB of etcd (docs/reliability.md measures it), 100
// Testsets, which keep their testcases in a ConfigMap or a Flux source
// unless they are few, and 500 EvaluationRuns of at most about 20 KiB
// (counts, never records), or about 105 KiB for a standalone run whose 50
// Metrics each scored 10,000 records (85 KB of bits: 500,000 score writes,
// 2.8 hours of the write budget).
var All = []Info{
	{Kind: "Metric", Resource: "metrics", Namespaced: true, TenantMax: 500,
		Summary:   "An evaluation Metric of the Evaluation Service, kept as code.",
		Footprint: "at most 75 KiB each",
		New:       func() v1alpha1.Object { return &v1alpha1.Metric{} }, NewList: func() client.ObjectList { return &v1alpha1.MetricList{} }},
	{Kind: "Testset", Resource: "testsets", Namespaced: true, TenantMax: 100,
		Summary:   "A Testset of the Evaluation Service and its testcases, from Git, a ConfigMap or inline.",
		Footprint: "up to about 1 MiB each with inline testcases; a ConfigMap or Flux source keeps the testcases out of the object",
		New:       func() v1alpha1.Object { return &v1alpha1.Testset{} }, NewList: func() client.ObjectList { return &v1alpha1.TestsetList{} }},
	{Kind: "EvaluationRun", Resource: "evaluationruns", Namespaced: true, TenantMax: 500,
		Summary:   "One run of the Evaluation Service and its verdict, for gating a release.",
		Footprint: "counts, never records: up to 88 KiB each with every field at its bound, 168 KiB while a standalone run's scores are counted, one bit per record and Metric; set ttlSecondsAfterFinished on runs a gate creates",
		New:       func() v1alpha1.Object { return &v1alpha1.EvaluationRun{} }, NewList: func() client.ObjectList { return &v1alpha1.EvaluationRunList{} }},
	{Kind: "System", Resource: "systems", Namespaced: true, TenantMax: 100,
		Summary:   "A system under test of a project, by name, with its default config.",
		Footprint: "config at most 16 KiB as JSON: under 20 KiB each",
		New:       func() v1alpha1.Object { return &v1alpha1.System{} }, NewList: func() client.ObjectList { return &v1alpha1.SystemList{} }},
	{Kind: "SystemVersion", Resource: "systemversions", Namespaced: true, TenantMax: 500,
		Summary:   "One config of a System, upserted by config, which a run names.",
		Footprint: "one per release a gate judges; config at most 16 KiB as JSON: under 20 KiB each",
		New:       func() v1alpha1.Object { return &v1alpha1.SystemVersion{} }, NewList: func() client.ObjectList { return &v1alpha1.SystemVersionList{} }},
	{Kind: "TestsetDeletion", Resource: "testsetdeletions", Namespaced: true, TenantMax: 500,
		Summary:   "Deletes one testset of the Evaluation Service.",
		Footprint: "about 2 KiB each",
		New:       func() v1alpha1.Object { return &v1alpha1.TestsetDeletion{} }, NewList: func() client.ObjectList { return &v1alpha1.TestsetDeletionList{} }},
	{Kind: "TestcaseDeletion", Resource: "testcasedeletions", Namespaced: true, TenantMax: 20,
		Summary:   "Deletes testcases of the Evaluation Service in bulk.",
		Footprint: "up to 1.3 MiB each, with 10,000 ids",
		New:       func() v1alpha1.Object { return &v1alpha1.TestcaseDeletion{} }, NewList: func() client.ObjectList { return &v1alpha1.TestcaseDeletionList{} }},
	{Kind: string(v1alpha1.KindEvaluationService), Resource: "evaluationservices", Namespaced: true,
		Summary: "A connection to one Evaluation Service, or standalone, for the objects of a namespace."},
	{Kind: string(v1alpha1.KindClusterEvaluationService), Resource: "clusterevaluationservices",
		Summary: "A connection to one Evaluation Service, or standalone, for the namespaces it allows."},
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

// Budgeted are the kinds a namespace holds a bounded number of (TenantMax).
func Budgeted() []Info {
	var out []Info
	for _, k := range All {
		if k.TenantMax > 0 {
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
