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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EvalType says who or what scores an evaluation.
// +kubebuilder:validation:Enum=ai;human;heuristic
type EvalType string

const (
	// EvalTypeAI: a language model scores each output using promptTemplate.
	EvalTypeAI EvalType = "ai"
	// EvalTypeHuman: people score each output, guided by guidelines.
	EvalTypeHuman EvalType = "human"
	// EvalTypeHeuristic: code scores each output.
	EvalTypeHeuristic EvalType = "heuristic"
)

// OutputType is the kind of score a Metric produces.
// +kubebuilder:validation:Enum=int;float;boolean
type OutputType string

const (
	// OutputTypeInt: a whole-number score from 1 to 5.
	OutputTypeInt OutputType = "int"
	// OutputTypeFloat: a score from 0 to 1.
	OutputTypeFloat OutputType = "float"
	// OutputTypeBoolean: a pass or fail score.
	OutputTypeBoolean OutputType = "boolean"
)

// MetricSpec is one of the nine Metric variants of the Evaluation Service
// (evalType ai, human or heuristic, times outputType int, float or boolean).
// Every field but projectId may change: the operator sends the new variant
// as one update, and may move a Metric to another variant (the rules of the
// new variant apply).
//
// +kubebuilder:validation:XValidation:rule="self.evalType != 'ai' || has(self.promptTemplate)",message="promptTemplate is required when evalType is ai",fieldPath=".promptTemplate",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="self.evalType == 'ai' || !has(self.promptTemplate)",message="promptTemplate is only allowed when evalType is ai",fieldPath=".promptTemplate",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="self.evalType == 'ai' || !has(self.evalModelName)",message="evalModelName is only allowed when evalType is ai",fieldPath=".evalModelName",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="self.evalType == 'ai' || !has(self.temperature)",message="temperature is only allowed when evalType is ai",fieldPath=".temperature",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="self.outputType != 'boolean' || !has(self.passingThreshold)",message="passingThreshold is not allowed when outputType is boolean",fieldPath=".passingThreshold",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="self.outputType != 'int' || !has(self.passingThreshold) || (self.passingThreshold >= 1.0 && self.passingThreshold <= 5.0 && double(int(self.passingThreshold)) == self.passingThreshold)",message="passingThreshold must be a whole number from 1 to 5 when outputType is int",fieldPath=".passingThreshold",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="self.outputType != 'float' || !has(self.passingThreshold) || self.passingThreshold <= 1.0",message="passingThreshold must be from 0 to 1 when outputType is float",fieldPath=".passingThreshold",reason=FieldValueInvalid
type MetricSpec struct {
	// projectId is the id of the Evaluation Service project the Metric belongs
	// to. Immutable: the service cannot move a Metric between projects.
	//
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="projectId is immutable: the service cannot move a Metric",reason=FieldValueInvalid
	ProjectID ResourceID `json:"projectId"`

	// name is the Metric's display name in the service.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name LineText `json:"name"`

	// description is free text about the Metric. Unset means null in the
	// service.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description *Text `json:"description,omitempty"`

	// evalType is who scores: `ai` (a model, using promptTemplate), `human`
	// or `heuristic`.
	// +required
	EvalType EvalType `json:"evalType"`

	// outputType is the kind of score: `int` (whole number 1 to 5), `float`
	// (0 to 1) or `boolean` (pass or fail).
	// +required
	OutputType OutputType `json:"outputType"`

	// guidelines tell the scorer what a good output is.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	Guidelines *Text `json:"guidelines,omitempty"`

	// promptTemplate is the prompt the model scores with, with placeholders
	// such as `{{outputs.response}}`. Required when evalType is ai, forbidden
	// otherwise.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	PromptTemplate *Text `json:"promptTemplate,omitempty"`

	// evalModelName is the model that scores. Only when evalType is ai; the
	// service defaults it to `gpt-4o`.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._:/@-]*$`
	EvalModelName *string `json:"evalModelName,omitempty"`

	// temperature is the sampling temperature of the scoring model, from 0 to
	// 2. Only when evalType is ai; the service defaults it to 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2
	Temperature *float64 `json:"temperature,omitempty"`

	// passingThreshold is the lowest passing score: a whole number from 1 to 5
	// when outputType is int (service default 4), from 0 to 1 when it is float
	// (service default 0.9). Forbidden when outputType is boolean. `4` and
	// `4.0` mean the same. The range is checked per outputType (no
	// schema maximum), so a wrong value gets the one rule of its outputType.
	// +optional
	// +kubebuilder:validation:Minimum=0
	PassingThreshold *float64 `json:"passingThreshold,omitempty"`

	// apiKeySecretRef selects the Secret key holding the `ak_...` API key used
	// for this Metric. Defaults to the service's apiKeySecretRef, else the
	// operator's --default-api-key-secret.
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`

	// serviceRef names the service connection this Metric uses. Unset uses
	// the EvaluationService named `default` in this namespace, else the
	// ClusterEvaluationService named `default`, else the operator's flags.
	// Changing where the Metric resolves once it has a remote id stops it
	// (Stalled, reason ServiceChanged) unless the URL stays the same.
	// +optional
	ServiceRef *ServiceReference `json:"serviceRef,omitempty"`

	// deletionPolicy says what happens to the remote Metric when this object
	// is deleted: `Delete` (the default) deletes it in the service first;
	// `Orphan` leaves it there. Set Orphan before deleting an object whose
	// remote deletion cannot succeed (e.g. a revoked key) to let it go.
	// +optional
	// +kubebuilder:default=Delete
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// managementPolicies are the actions the operator may take on the remote
	// Metric, with Crossplane's meaning: `["*"]` (the default) is all of them;
	// otherwise a list of `Observe`, `Create`, `Update` and `Delete`. Observe
	// is always implied: the operator reads the remote Metric and keeps status
	// equal to what the service holds. Without Create it never creates (it
	// adopts by name when adoptionPolicy allows); without Update it never
	// sends a change, and reports a difference in the Synced condition;
	// without Delete it keeps the remote Metric when the object is deleted,
	// whatever deletionPolicy says. `["Observe"]` is a read-only mirror.
	// +optional
	// +kubebuilder:default={"*"}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="!self.exists(p, p == '*') || self.size() == 1",message="managementPolicies: \"*\" already means every action and cannot be listed with others",reason=FieldValueInvalid
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q == p))",message="managementPolicies must not repeat an action",reason=FieldValueInvalid
	ManagementPolicies []ManagementAction `json:"managementPolicies,omitempty"`

	// adoptionPolicy says what a Metric with no recorded remote id does
	// before it creates: `None` (the default) creates; `ByName` first lists
	// the project's Metrics and adopts the one with the same name that no
	// other object of the cluster holds (two or more: Stalled
	// AmbiguousName; none: create if managementPolicies allow it).
	// +optional
	// +kubebuilder:default=None
	AdoptionPolicy AdoptionPolicy `json:"adoptionPolicy,omitempty"`
}

// ManagementAction is one action the operator may take on a remote Metric,
// or `*` for all of them.
// +kubebuilder:validation:Enum=Observe;Create;Update;Delete;*
// +kubebuilder:validation:MaxLength=7
type ManagementAction string

const (
	// ManagementObserve: read the remote Metric into status. Always implied.
	ManagementObserve ManagementAction = "Observe"
	// ManagementCreate: create the remote Metric when none is recorded.
	ManagementCreate ManagementAction = "Create"
	// ManagementUpdate: send spec changes and correct drift.
	ManagementUpdate ManagementAction = "Update"
	// ManagementDelete: delete the remote Metric with the object (as deletionPolicy says).
	ManagementDelete ManagementAction = "Delete"
	// ManagementAll: every action.
	ManagementAll ManagementAction = "*"
)

// AdoptionPolicy says how a Metric with no recorded id finds its remote Metric.
// +kubebuilder:validation:Enum=None;ByName
type AdoptionPolicy string

const (
	// AdoptionNone: create the remote Metric (when Create is allowed).
	AdoptionNone AdoptionPolicy = "None"
	// AdoptionByName: adopt the project's one Metric with the same name, if any.
	AdoptionByName AdoptionPolicy = "ByName"
)

// DeletionPolicy says what deleting a Metric does to its remote Metric.
// +kubebuilder:validation:Enum=Delete;Orphan
type DeletionPolicy string

const (
	// DeletionPolicyDelete deletes the remote Metric with the object.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyOrphan leaves the remote Metric in the service.
	DeletionPolicyOrphan DeletionPolicy = "Orphan"
)

// MetricStatus is what the service returned for the Metric, defaults included.
type MetricStatus struct {
	// id is the remote id the service assigned to the Metric.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	ID string `json:"id,omitempty"`

	// description is the description the service stored; unset means null.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description *Text `json:"description,omitempty"`

	// guidelines are the guidelines the service stored.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	Guidelines *Text `json:"guidelines,omitempty"`

	// evalModelName is the scoring model the service uses (ai only).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	EvalModelName string `json:"evalModelName,omitempty"`

	// temperature is the sampling temperature the service uses (ai only).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2
	Temperature *float64 `json:"temperature,omitempty"`

	// passingThreshold is the passing score the service uses (int and float only).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	PassingThreshold *float64 `json:"passingThreshold,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// observedRetry is the last value of the retry annotation the operator
	// acted on; the same value again does nothing.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ObservedRetry string `json:"observedRetry,omitempty"`

	// service is the service connection this Metric resolved to:
	// `EvaluationService/<name>`, `ClusterEvaluationService/<name>`,
	// `ManagerFlags` (the operator's --api-url) or `Standalone` (the
	// operator's flags without --api-url).
	// +optional
	// +kubebuilder:validation:MaxLength=300
	Service string `json:"service,omitempty"`

	// conditions are Ready, Reconciling, Stalled and Synced; Ready's reason
	// always says why it has its status. Synced is True when the remote
	// Metric equals the spec, False (reason Drifted) when it differs and
	// managementPolicies keep the operator from correcting it.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Metric is an evaluation Metric of the Evaluation Service, kept as code. The
// operator creates it in the service once, records the remote id in status.id
// and in the evaluation.eval-operator.dev/metric-id annotation, sends every
// later change of the spec as an update, puts back remote edits (drift), and
// deletes the remote Metric with the object unless spec.deletionPolicy is
// Orphan.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=evm,categories=evaluation
// +kubebuilder:printcolumn:name="Remote ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Eval",type=string,JSONPath=`.spec.evalType`
// +kubebuilder:printcolumn:name="Output",type=string,JSONPath=`.spec.outputType`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Synced",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.projectId`,priority=1
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.status.service`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Metric struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the Metric as the service defines it.
	// +required
	Spec MetricSpec `json:"spec"`

	// status is what the service returned, and the operator's conditions.
	// A new object starts with Ready Unknown and Reconciling True (reason
	// Pending) until the operator first acts on it.
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status MetricStatus `json:"status,omitempty"`
}

// MetricList is a list of Metrics.
//
// +kubebuilder:object:root=true
type MetricList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Metric `json:"items"`
}
