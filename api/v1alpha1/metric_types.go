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
// The service cannot update a Metric, so the spec is immutable once created,
// except apiKeySecretRef.
//
// +kubebuilder:validation:XValidation:rule="self.evalType != 'ai' || has(self.promptTemplate)",message="promptTemplate is required when evalType is ai",fieldPath=".promptTemplate",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="self.evalType == 'ai' || !has(self.promptTemplate)",message="promptTemplate is only allowed when evalType is ai",fieldPath=".promptTemplate",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="self.evalType == 'ai' || !has(self.evalModelName)",message="evalModelName is only allowed when evalType is ai",fieldPath=".evalModelName",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="self.evalType == 'ai' || !has(self.temperature)",message="temperature is only allowed when evalType is ai",fieldPath=".temperature",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="self.outputType != 'boolean' || !has(self.passingThreshold)",message="passingThreshold is not allowed when outputType is boolean",fieldPath=".passingThreshold",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="self.outputType != 'int' || !has(self.passingThreshold) || (self.passingThreshold >= 1.0 && self.passingThreshold <= 5.0 && double(int(self.passingThreshold)) == self.passingThreshold)",message="passingThreshold must be a whole number from 1 to 5 when outputType is int",fieldPath=".passingThreshold",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="self.outputType != 'float' || !has(self.passingThreshold) || self.passingThreshold <= 1.0",message="passingThreshold must be from 0 to 1 when outputType is float",fieldPath=".passingThreshold",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.description) == has(oldSelf.description)",message="description cannot be added or removed after creation: the service cannot update a Metric",fieldPath=".description",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.guidelines) == has(oldSelf.guidelines)",message="guidelines cannot be added or removed after creation: the service cannot update a Metric",fieldPath=".guidelines",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.promptTemplate) == has(oldSelf.promptTemplate)",message="promptTemplate cannot be added or removed after creation: the service cannot update a Metric",fieldPath=".promptTemplate",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.evalModelName) == has(oldSelf.evalModelName)",message="evalModelName cannot be added or removed after creation: the service cannot update a Metric",fieldPath=".evalModelName",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.temperature) == has(oldSelf.temperature)",message="temperature cannot be added or removed after creation: the service cannot update a Metric",fieldPath=".temperature",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.passingThreshold) == has(oldSelf.passingThreshold)",message="passingThreshold cannot be added or removed after creation: the service cannot update a Metric",fieldPath=".passingThreshold",reason=FieldValueInvalid
type MetricSpec struct {
	// projectId is the id of the Evaluation Service project the Metric belongs to.
	// Immutable.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="projectId is immutable: the service cannot move a Metric",reason=FieldValueInvalid
	ProjectID ResourceID `json:"projectId"`

	// name is the Metric's display name in the service. Immutable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="name is immutable: the service cannot update a Metric",reason=FieldValueInvalid
	Name string `json:"name"`

	// description is free text about the Metric. Unset means null in the
	// service. Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="description is immutable: the service cannot update a Metric",reason=FieldValueInvalid
	Description *string `json:"description,omitempty"`

	// evalType is who scores: `ai` (a model, using promptTemplate), `human`
	// or `heuristic`. Immutable.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="evalType is immutable: the service cannot update a Metric",reason=FieldValueInvalid
	EvalType EvalType `json:"evalType"`

	// outputType is the kind of score: `int` (whole number 1 to 5), `float`
	// (0 to 1) or `boolean` (pass or fail). Immutable.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="outputType is immutable: the service cannot update a Metric",reason=FieldValueInvalid
	OutputType OutputType `json:"outputType"`

	// guidelines tell the scorer what a good output is. Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="guidelines is immutable: the service cannot update a Metric",reason=FieldValueInvalid
	Guidelines *string `json:"guidelines,omitempty"`

	// promptTemplate is the prompt the model scores with, with placeholders
	// such as `{{outputs.response}}`. Required when evalType is ai, forbidden
	// otherwise. Immutable.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="promptTemplate is immutable: the service cannot update a Metric",reason=FieldValueInvalid
	PromptTemplate *string `json:"promptTemplate,omitempty"`

	// evalModelName is the model that scores. Only when evalType is ai; the
	// service defaults it to `gpt-4o`. Immutable.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._:/@-]*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="evalModelName is immutable: the service cannot update a Metric",reason=FieldValueInvalid
	EvalModelName *string `json:"evalModelName,omitempty"`

	// temperature is the sampling temperature of the scoring model, from 0 to
	// 2. Only when evalType is ai; the service defaults it to 0. Immutable.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="temperature is immutable: the service cannot update a Metric",reason=FieldValueInvalid
	Temperature *float64 `json:"temperature,omitempty"`

	// passingThreshold is the lowest passing score: a whole number from 1 to 5
	// when outputType is int (service default 4), from 0 to 1 when it is float
	// (service default 0.9). Forbidden when outputType is boolean. `4` and
	// `4.0` mean the same. Immutable.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="passingThreshold is immutable: the service cannot update a Metric",reason=FieldValueInvalid
	PassingThreshold *float64 `json:"passingThreshold,omitempty"`

	// apiKeySecretRef selects the Secret key holding the `ak_...` API key used
	// for this Metric. Defaults to the operator's --default-api-key-secret.
	// The only field that may change after creation (key rotation).
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`
}

// MetricStatus is what the service returned for the Metric, defaults included.
type MetricStatus struct {
	// id is the remote id the service assigned to the Metric.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	ID string `json:"id,omitempty"`

	// description is the description the service stored; unset means null.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description *string `json:"description,omitempty"`

	// guidelines are the guidelines the service stored.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	Guidelines *string `json:"guidelines,omitempty"`

	// evalModelName is the scoring model the service uses (ai only).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	EvalModelName string `json:"evalModelName,omitempty"`

	// temperature is the sampling temperature the service uses (ai only).
	// +optional
	Temperature *float64 `json:"temperature,omitempty"`

	// passingThreshold is the passing score the service uses (int and float only).
	// +optional
	PassingThreshold *float64 `json:"passingThreshold,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Reconciling and Stalled; Ready's reason always
	// says why it has its status.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Metric is an evaluation Metric of the Evaluation Service, kept as code. The
// operator creates it in the service once and records the remote id in
// status.id and in the evaluation.eval-operator.dev/metric-id annotation.
// Deleting a Metric leaves the remote Metric in place: the service has no way
// to delete one.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=evm,categories=evaluation
// +kubebuilder:printcolumn:name="Remote ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Eval",type=string,JSONPath=`.spec.evalType`
// +kubebuilder:printcolumn:name="Output",type=string,JSONPath=`.spec.outputType`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.projectId`,priority=1
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
