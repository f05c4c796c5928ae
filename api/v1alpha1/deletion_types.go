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

// TestsetDeletionSpec names the testset to delete. Immutable, except apiKeySecretRef.
//
// +kubebuilder:validation:XValidation:rule="has(self.ttlSecondsAfterFinished) == has(oldSelf.ttlSecondsAfterFinished)",message="ttlSecondsAfterFinished cannot be added or removed after creation",fieldPath=".ttlSecondsAfterFinished",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.serviceRef) == has(oldSelf.serviceRef)",message="serviceRef cannot be added or removed after creation",fieldPath=".serviceRef",reason=FieldValueInvalid
type TestsetDeletionSpec struct {
	// testsetId is the id of the testset to delete. Immutable.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="testsetId is immutable: create a new TestsetDeletion instead",reason=FieldValueInvalid
	TestsetID ResourceID `json:"testsetId"`

	// apiKeySecretRef selects the Secret key holding the `ak_...` API key.
	// Defaults to the service's apiKeySecretRef, else the operator's
	// --default-api-key-secret. May change (key rotation).
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`

	// serviceRef names the service connection this deletion uses. Unset
	// uses the EvaluationService named `default` in this namespace, else the
	// ClusterEvaluationService named `default`, else the operator's flags.
	// Immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="serviceRef is immutable: create a new deletion instead",reason=FieldValueInvalid
	ServiceRef *ServiceReference `json:"serviceRef,omitempty"`

	// ttlSecondsAfterFinished deletes this object that many seconds after the
	// deletion completed. Unset keeps it. Immutable.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ttlSecondsAfterFinished is immutable",reason=FieldValueInvalid
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// TestsetDeletion deletes one testset of the Evaluation Service. The operator
// sends DELETE /testsets/{testsetId} until the service confirms it, then never
// again.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tsdel,categories=evaluation
// +kubebuilder:printcolumn:name="Testset",type=string,JSONPath=`.spec.testsetId`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Attempts",type=integer,JSONPath=`.status.attempts`
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=`.status.completionTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TestsetDeletion struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the testset to delete.
	// +required
	Spec TestsetDeletionSpec `json:"spec"`

	// status reports the deletion's progress.
	// A new object starts with Ready Unknown and Reconciling True (reason
	// Pending) until the operator first acts on it.
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status DeletionStatus `json:"status,omitempty"`
}

// TestsetDeletionList is a list of TestsetDeletions.
//
// +kubebuilder:object:root=true
type TestsetDeletionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TestsetDeletion `json:"items"`
}

// TestcaseDeletionSpec lists the testcases to delete. Immutable, except apiKeySecretRef.
//
// +kubebuilder:validation:XValidation:rule="has(self.ttlSecondsAfterFinished) == has(oldSelf.ttlSecondsAfterFinished)",message="ttlSecondsAfterFinished cannot be added or removed after creation",fieldPath=".ttlSecondsAfterFinished",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.serviceRef) == has(oldSelf.serviceRef)",message="serviceRef cannot be added or removed after creation",fieldPath=".serviceRef",reason=FieldValueInvalid
type TestcaseDeletionSpec struct {
	// The immutability rule compares the joined ids because CEL equality of a
	// set ignores order while status.deleted counts in list order; ids cannot
	// contain ',', so joining is lossless.

	// testcaseIds are the ids of the testcases to delete: 1 to 10000, each
	// unique. Sent in batches of --bulk-delete-batch-size. Immutable, order
	// included.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:XValidation:rule="self.join(',') == oldSelf.join(',')",message="testcaseIds is immutable, order included: create a new TestcaseDeletion instead",reason=FieldValueInvalid
	TestcaseIDs []ResourceID `json:"testcaseIds"`

	// apiKeySecretRef selects the Secret key holding the `ak_...` API key.
	// Defaults to the service's apiKeySecretRef, else the operator's
	// --default-api-key-secret. May change (key rotation).
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`

	// serviceRef names the service connection this deletion uses. Unset
	// uses the EvaluationService named `default` in this namespace, else the
	// ClusterEvaluationService named `default`, else the operator's flags.
	// Immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="serviceRef is immutable: create a new deletion instead",reason=FieldValueInvalid
	ServiceRef *ServiceReference `json:"serviceRef,omitempty"`

	// ttlSecondsAfterFinished deletes this object that many seconds after the
	// deletion completed. Unset keeps it. Immutable.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ttlSecondsAfterFinished is immutable",reason=FieldValueInvalid
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// TestcaseDeletionStatus reports a bulk deletion's progress.
type TestcaseDeletionStatus struct {
	DeletionStatus `json:",inline"`

	// deleted is how many testcaseIds, in list order, the service has
	// confirmed deleted, recorded every 10 seconds while the deletion runs
	// and whenever it stops. A restarted operator resumes at this index.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Deleted int32 `json:"deleted,omitempty"`
}

// TestcaseDeletion deletes testcases of the Evaluation Service in bulk. The
// operator sends POST /testcases/bulk-delete in batches and records progress
// every 10 seconds and whenever it stops, so a restart resumes where it was.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tcdel,categories=evaluation
// +kubebuilder:printcolumn:name="Deleted",type=integer,JSONPath=`.status.deleted`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Attempts",type=integer,JSONPath=`.status.attempts`
// +kubebuilder:printcolumn:name="Completed",type=date,JSONPath=`.status.completionTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TestcaseDeletion struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the testcases to delete.
	// +required
	Spec TestcaseDeletionSpec `json:"spec"`

	// status reports the deletion's progress.
	// A new object starts with Ready Unknown and Reconciling True (reason
	// Pending) until the operator first acts on it.
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status TestcaseDeletionStatus `json:"status,omitempty"`
}

// TestcaseDeletionList is a list of TestcaseDeletions.
//
// +kubebuilder:object:root=true
type TestcaseDeletionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TestcaseDeletion `json:"items"`
}
