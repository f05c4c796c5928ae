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
	"k8s.io/apimachinery/pkg/runtime"
)

// FieldName is a top-level field of a testcase's data.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=256
// +kubebuilder:validation:XValidation:rule="!self.matches('[\\\\x00-\\\\x1F\\\\x7F]')",message="must not contain control characters",reason=FieldValueInvalid
type FieldName string

// TestsetFieldMapping says which top-level fields of the testcases are the
// system's inputs and which its expected outputs; any other field is metadata.
type TestsetFieldMapping struct {
	// inputs are the fields given to the system under test.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=set
	Inputs []FieldName `json:"inputs,omitempty"`

	// expected are the fields holding the expected outputs.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=set
	Expected []FieldName `json:"expected,omitempty"`

	// metadata are fields that are neither, listed for the service's UI.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=set
	Metadata []FieldName `json:"metadata,omitempty"`
}

// ConfigMapTestcases names a ConfigMap key holding testcases as JSON Lines.
type ConfigMapTestcases struct {
	// name is the ConfigMap's name, in the Testset's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key is the data key holding the JSON Lines: one testcase's data, a JSON
	// object, per line.
	// +optional
	// +kubebuilder:default="testcases.jsonl"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// SourceKind is the kind of a Flux source.
// +kubebuilder:validation:Enum=GitRepository;OCIRepository;Bucket
type SourceKind string

// FluxSourceTestcases names a JSON Lines file in a Flux source's artifact.
type FluxSourceTestcases struct {
	// kind is the Flux source's kind (source.toolkit.fluxcd.io).
	// +required
	Kind SourceKind `json:"kind"`

	// name is the source's name, in the Testset's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// path is the JSON Lines file inside the artifact, relative to its root.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.split('/').exists(s, s == '..')",message="path must be relative to the artifact's root and must not contain ..",reason=FieldValueInvalid
	Path string `json:"path"`
}

// TestsetSpec is a Testset of the Evaluation Service and where its
// testcases come from: exactly one of inline, configMapRef and sourceRef.
//
// +kubebuilder:validation:XValidation:rule="[has(self.inline), has(self.configMapRef), has(self.sourceRef)].filter(x, x).size() == 1",message="exactly one of inline, configMapRef and sourceRef must be set",reason=FieldValueInvalid
type TestsetSpec struct {
	// projectId is the id of the Evaluation Service project the Testset
	// belongs to. Immutable.
	//
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="projectId is immutable: the service cannot move a Testset",reason=FieldValueInvalid
	ProjectID ResourceID `json:"projectId"`

	// name is the Testset's display name in the service.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name LineText `json:"name"`

	// description is free text about the Testset.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description Text `json:"description,omitempty"`

	// jsonSchema is the JSON Schema of each testcase's data, as the service
	// keeps it. A testcase that does not conform is stored all the same, with
	// the service's validation errors.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	JSONSchema *runtime.RawExtension `json:"jsonSchema,omitempty"`

	// fieldMapping says which fields of the testcases are inputs and which
	// expected outputs.
	// +optional
	FieldMapping TestsetFieldMapping `json:"fieldMapping,omitempty"`

	// keyField is the top-level field of each testcase's data that names it
	// across versions of the source: unique within the set and never empty.
	// A testcase whose key is new is created, one whose data changed is
	// updated, and a key that left the source is deleted.
	// +required
	KeyField FieldName `json:"keyField"`

	// inline are the testcases' data, JSON objects, for a small set. An
	// empty list is an empty set: a Testset created through the REST API
	// starts with one, and keeps the testcases the API adds here.
	// +optional
	// +kubebuilder:validation:MaxItems=500
	// +listType=atomic
	// +kubebuilder:validation:items:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Inline []runtime.RawExtension `json:"inline,omitzero"`

	// configMapRef takes the testcases from a ConfigMap key, as JSON Lines.
	// +optional
	ConfigMapRef *ConfigMapTestcases `json:"configMapRef,omitempty"`

	// sourceRef takes the testcases from a JSON Lines file in a Flux
	// source's artifact (GitRepository, OCIRepository or Bucket), fetched
	// from its status.artifact.url and verified against its digest.
	// +optional
	SourceRef *FluxSourceTestcases `json:"sourceRef,omitempty"`

	// apiKeySecretRef selects the Secret key holding the `ak_...` API key
	// used for this Testset, as for a Metric.
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`

	// serviceRef names the service connection this Testset uses, as for a
	// Metric.
	// +optional
	ServiceRef *ServiceReference `json:"serviceRef,omitempty"`

	// deletionPolicy says what happens to the remote Testset when this object
	// is deleted: `Delete` (the default) deletes it, its testcases with it;
	// `Orphan` leaves it.
	// +optional
	// +kubebuilder:default=Delete
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// managementPolicies are the actions the operator may take on the remote
	// Testset and its testcases, with the Metric's meaning. `["Observe"]`
	// reports in Synced how many testcases would be created, updated and
	// deleted, and sends nothing.
	// +optional
	// +kubebuilder:default={"*"}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="!self.exists(p, p == '*') || self.size() == 1",message="managementPolicies: \"*\" already means every action and cannot be listed with others",reason=FieldValueInvalid
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q == p))",message="managementPolicies must not repeat an action",reason=FieldValueInvalid
	ManagementPolicies []ManagementAction `json:"managementPolicies,omitempty"`
}

// TestsetStatus is what the operator last synced.
type TestsetStatus struct {
	// id is the remote id the service assigned to the Testset.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	ID string `json:"id,omitempty"`

	// testcases is how many testcases the source held at the last sync.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Testcases int32 `json:"testcases,omitempty"`

	// digest is the sha256 of the testcases as last synced; an unchanged
	// source costs no call.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	Digest string `json:"digest,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// observedRetry is the last value of the retry annotation the operator
	// acted on.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ObservedRetry string `json:"observedRetry,omitempty"`

	// service is the service connection this Testset resolved to, as for a
	// Metric.
	// +optional
	// +kubebuilder:validation:MaxLength=300
	Service string `json:"service,omitempty"`

	// conditions are Ready, Reconciling, Stalled and Synced.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Testset is a Testset of the Evaluation Service and its testcases, kept as
// code: the testcases come from the manifest, a ConfigMap or a Flux source.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=evts,categories=evaluation
// +kubebuilder:printcolumn:name="Remote ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Testcases",type=integer,JSONPath=`.status.testcases`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.projectId`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Testset struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the Testset and the source of its testcases.
	// +required
	Spec TestsetSpec `json:"spec"`

	// status is what the operator last synced, and its conditions. A new
	// object starts with Ready Unknown and Reconciling True (reason Pending)
	// until the operator first acts on it.
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status TestsetStatus `json:"status,omitempty"`
}

// TestsetList is a list of Testsets.
//
// +kubebuilder:object:root=true
type TestsetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Testset `json:"items"`
}
