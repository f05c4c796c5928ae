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

// Package v1alpha1 holds the evaluation.eval-operator.dev/v1alpha1 API, its
// nine kinds: Metric, Testset, EvaluationRun, System, SystemVersion,
// TestsetDeletion, TestcaseDeletion, EvaluationService and
// ClusterEvaluationService.
//
// +kubebuilder:object:generate=true
// +groupName=evaluation.eval-operator.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "evaluation.eval-operator.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Metric{}, &MetricList{},
		&TestsetDeletion{}, &TestsetDeletionList{},
		&TestcaseDeletion{}, &TestcaseDeletionList{},
		&Testset{}, &TestsetList{},
		&EvaluationRun{}, &EvaluationRunList{},
		&System{}, &SystemList{},
		&SystemVersion{}, &SystemVersionList{},
		&EvaluationService{}, &EvaluationServiceList{},
		&ClusterEvaluationService{}, &ClusterEvaluationServiceList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
