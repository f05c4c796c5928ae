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
	"regexp"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SystemConfigMaxBytes bounds a System's or SystemVersion's config, as JSON:
// the operator refuses a larger one (Stalled, reason InvalidConfig) and the
// REST server answers it with 400. The CRD cannot bound the bytes of a
// free-form object, only its top-level keys.
const SystemConfigMaxBytes = 16 << 10

// UUIDPattern is the pattern of the service's System and SystemVersion ids
// (`format: uuid`), lower or upper case.
const UUIDPattern = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`

// UUID is a System or SystemVersion id of the service.
// +kubebuilder:validation:MinLength=36
// +kubebuilder:validation:MaxLength=36
// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
type UUID string

// SystemSpec is a System Under Test of a project: a name, unique in the
// project, and its default config. The service upserts a System by name, so
// two objects of the same name in one project are one remote System (the
// later is Stalled, reason SystemIDClaimed).
type SystemSpec struct {
	// projectId is the Evaluation Service project of the System. Immutable.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="projectId is immutable: the service cannot move a System",reason=FieldValueInvalid
	ProjectID ResourceID `json:"projectId"`

	// name is the System's name, unique within the project. A new name is
	// sent as an update of the recorded System.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name LineText `json:"name"`

	// description is free text about the System.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Description *Text `json:"description,omitempty"`

	// config is the System's default configuration, any JSON object (at
	// most 64 top-level keys and 16 KiB as JSON).
	// +required
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:MaxProperties=64
	Config apiextensionsv1.JSON `json:"config"`

	// apiKeySecretRef selects the Secret key holding the `ak_...` API key,
	// as for a Metric.
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`

	// serviceRef names the service connection, as for a Metric.
	// +optional
	ServiceRef *ServiceReference `json:"serviceRef,omitempty"`

	// deletionPolicy says what deleting this object does to the remote
	// System: `Delete` (the default) deletes it (the service keeps its
	// versions); `Orphan` leaves it.
	// +optional
	// +kubebuilder:default=Delete
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// managementPolicies are the actions the operator may take on the
	// remote System, as for a Metric. Without Create the operator only
	// looks the System up by name in the project (Stalled, reason
	// CreateNotAllowed, when there is none).
	// +optional
	// +kubebuilder:default={"*"}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="!self.exists(p, p == '*') || self.size() == 1",message="managementPolicies: \"*\" already means every action and cannot be listed with others",reason=FieldValueInvalid
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q == p))",message="managementPolicies must not repeat an action",reason=FieldValueInvalid
	ManagementPolicies []ManagementAction `json:"managementPolicies,omitempty"`
}

// SystemStatus is what the service holds of the System.
type SystemStatus struct {
	// id is the remote System's id (a UUID).
	// +optional
	// +kubebuilder:validation:MaxLength=36
	ID string `json:"id,omitempty"`

	// productionVersionId is the id of the System's production version in
	// the service, if any.
	// +optional
	// +kubebuilder:validation:MaxLength=36
	ProductionVersionID string `json:"productionVersionId,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// observedRetry is the last value of the retry annotation acted on.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ObservedRetry string `json:"observedRetry,omitempty"`

	// service is the service connection this System resolved to, as for a
	// Metric.
	// +optional
	// +kubebuilder:validation:MaxLength=300
	Service string `json:"service,omitempty"`

	// conditions are Ready, Reconciling, Stalled and Synced, as for a Metric.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// System is a System Under Test of the Evaluation Service, kept as code: a
// project's system by name, with a default config. The operator upserts it
// by name, records the remote id in status.id and in the
// evaluation.eval-operator.dev/system-id annotation, sends later changes as
// an update, and deletes it with the object unless deletionPolicy is Orphan.
// Its versions are SystemVersions.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=evsys,categories=evaluation
// +kubebuilder:printcolumn:name="Remote ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Production",type=string,JSONPath=`.status.productionVersionId`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.projectId`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type System struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the System as the service defines it.
	// +required
	Spec SystemSpec `json:"spec"`

	// status is what the service holds, and the operator's conditions. A
	// new object starts with Ready Unknown and Reconciling True (reason
	// Pending).
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status SystemStatus `json:"status,omitempty"`
}

// SystemList is a list of Systems.
//
// +kubebuilder:object:root=true
type SystemList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []System `json:"items"`
}

// SystemVersionSpec is one config of a System: image digests, model,
// prompt revision, any JSON the team chooses. The service upserts a version
// by its config, so the same config is the same version, whatever object
// names it; versions are immutable snapshots, so the config is too.
//
// +kubebuilder:validation:XValidation:rule="self.systemRef == oldSelf.systemRef",message="systemRef is immutable: a version belongs to one System",fieldPath=".systemRef",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="self.config == oldSelf.config",message="config is immutable: a new config is a new SystemVersion",fieldPath=".config",reason=FieldValueInvalid
type SystemVersionSpec struct {
	// systemRef names the System of this namespace the version belongs to;
	// the version waits until it is Ready. Immutable.
	// +required
	SystemRef ObjectRef `json:"systemRef"`

	// name is the version's name in the service; unset, the service names
	// it. A new name is sent as an upsert of the same config, which renames
	// the version.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name *LineText `json:"name,omitempty"`

	// config is the version's configuration, any JSON object (at most 64
	// top-level keys and 16 KiB as JSON). Immutable.
	// +required
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:MaxProperties=64
	Config apiextensionsv1.JSON `json:"config"`

	// managementPolicies are the actions the operator may take on the
	// remote version, as for a Metric: Create upserts it, Update renames
	// it. The service has no deletion of versions: deleting the object
	// leaves the version, which earlier runs name.
	// +optional
	// +kubebuilder:default={"*"}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="!self.exists(p, p == '*') || self.size() == 1",message="managementPolicies: \"*\" already means every action and cannot be listed with others",reason=FieldValueInvalid
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q == p))",message="managementPolicies must not repeat an action",reason=FieldValueInvalid
	ManagementPolicies []ManagementAction `json:"managementPolicies,omitempty"`
}

// SystemVersionStatus is what the service holds of the version.
type SystemVersionStatus struct {
	// id is the remote SystemVersion's id (a UUID): what a run's
	// systemVersionId names.
	// +optional
	// +kubebuilder:validation:MaxLength=36
	ID string `json:"id,omitempty"`

	// systemId is the remote id of the version's System.
	// +optional
	// +kubebuilder:validation:MaxLength=36
	SystemID string `json:"systemId,omitempty"`

	// name is the version's name in the service.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// observedRetry is the last value of the retry annotation acted on.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ObservedRetry string `json:"observedRetry,omitempty"`

	// service is the service connection this version resolved to (its
	// System's).
	// +optional
	// +kubebuilder:validation:MaxLength=300
	Service string `json:"service,omitempty"`

	// conditions are Ready, Reconciling and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SystemVersion is one config of a System, upserted in the service by its
// config: the operator records the remote id in status.id, which an
// EvaluationRun's systemVersionRef sends as the run's systemVersionId.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=evsv,categories=evaluation
// +kubebuilder:printcolumn:name="Remote ID",type=string,JSONPath=`.status.id`
// +kubebuilder:printcolumn:name="System",type=string,JSONPath=`.spec.systemRef.name`
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.status.name`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SystemVersion struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the version's System and config.
	// +required
	Spec SystemVersionSpec `json:"spec"`

	// status is what the service holds, and the operator's conditions. A
	// new object starts with Ready Unknown and Reconciling True (reason
	// Pending).
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status SystemVersionStatus `json:"status,omitempty"`
}

// SystemVersionList is a list of SystemVersions.
//
// +kubebuilder:object:root=true
type SystemVersionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SystemVersion `json:"items"`
}

// SystemIDAnnotation is the durable record of a System's remote id, with
// MetricIDAnnotation's meaning.
const SystemIDAnnotation = Prefix + "system-id"

// SystemVersionIDAnnotation is the durable record of a SystemVersion's
// remote id, with MetricIDAnnotation's meaning.
const SystemVersionIDAnnotation = Prefix + "system-version-id"

// Reasons of the System and SystemVersion kinds, and of a run's version.
const (
	// ReasonInvalidConfig: a System's or SystemVersion's config is not a
	// JSON object of at most SystemConfigMaxBytes; nothing is sent.
	ReasonInvalidConfig = "InvalidConfig"
	// ReasonSystemIDClaimed: another System of the cluster holds the same
	// remote System (same name in the same project, on the same service),
	// as ReasonMetricIDClaimed for a Metric.
	ReasonSystemIDClaimed = "SystemIDClaimed"
	// ReasonSystemNotReady: a SystemVersion's System does not exist or is
	// not Ready; nothing is sent until it is.
	ReasonSystemNotReady = "SystemNotReady"
	// ReasonInvalidSystemVersionID: an EvaluationRun's systemVersionId is
	// not a UUID, which a real service requires; the run is not created.
	ReasonInvalidSystemVersionID = "InvalidSystemVersionID"
)

var _ Object = &System{}

// GetAPIKeySecretRef returns spec.apiKeySecretRef, or nil.
func (s *System) GetAPIKeySecretRef() *SecretKeySelector { return s.Spec.APIKeySecretRef }

// GetServiceRef returns spec.serviceRef, or nil.
func (s *System) GetServiceRef() *ServiceReference { return s.Spec.ServiceRef }

// SetResolvedService records in status the service the System resolved to.
func (s *System) SetResolvedService(v string) { s.Status.Service = v }

// GetResolvedService returns status.service.
func (s *System) GetResolvedService() string { return s.Status.Service }

// GetConditions returns a pointer to status.conditions.
func (s *System) GetConditions() *[]metav1.Condition { return &s.Status.Conditions }

// SetObservedGeneration records the generation status describes.
func (s *System) SetObservedGeneration(g int64) { s.Status.ObservedGeneration = g }

// GetObservedRetry returns status.observedRetry.
func (s *System) GetObservedRetry() string { return s.Status.ObservedRetry }

// SetObservedRetry records the retry annotation's value the operator acted on.
func (s *System) SetObservedRetry(v string) { s.Status.ObservedRetry = v }

// RecordedID is the System's remote id: the system-id annotation, else
// status.id, with Metric.RecordedID's meaning.
func (s *System) RecordedID() string {
	if id := s.Annotations[SystemIDAnnotation]; id != "" {
		return id
	}
	return s.Status.ID
}

// Allows reports whether the spec's managementPolicies allow action a.
func (s *SystemSpec) Allows(a ManagementAction) bool { return policies(s.ManagementPolicies).allows(a) }

// PoliciesString is managementPolicies as a user wrote them, for messages.
func (s *SystemSpec) PoliciesString() string { return policies(s.ManagementPolicies).String() }

// DeletesRemote reports whether deleting the System deletes its remote System.
func (s *SystemSpec) DeletesRemote() bool {
	return policies(s.ManagementPolicies).deletesRemote(s.DeletionPolicy)
}

// RecordedID is the SystemVersion's remote id: the system-version-id
// annotation, else status.id.
func (v *SystemVersion) RecordedID() string {
	if id := v.Annotations[SystemVersionIDAnnotation]; id != "" {
		return id
	}
	return v.Status.ID
}

// Allows reports whether the spec's managementPolicies allow action a.
func (s *SystemVersionSpec) Allows(a ManagementAction) bool {
	return policies(s.ManagementPolicies).allows(a)
}

// PoliciesString is managementPolicies as a user wrote them, for messages.
func (s *SystemVersionSpec) PoliciesString() string { return policies(s.ManagementPolicies).String() }

// ValidUUID reports whether id is a UUID, as the service's System and
// SystemVersion ids are.
func ValidUUID(id string) bool { return uuidPattern.MatchString(id) }

var uuidPattern = regexp.MustCompile(UUIDPattern)

var _ Object = &SystemVersion{}

// GetAPIKeySecretRef is nil: a SystemVersion uses its System's key, and
// connects through its System.
func (v *SystemVersion) GetAPIKeySecretRef() *SecretKeySelector { return nil }

// GetServiceRef is nil: a SystemVersion uses its System's service.
func (v *SystemVersion) GetServiceRef() *ServiceReference { return nil }

// SetResolvedService records in status the service the version's System resolved to.
func (v *SystemVersion) SetResolvedService(s string) { v.Status.Service = s }

// GetResolvedService returns status.service.
func (v *SystemVersion) GetResolvedService() string { return v.Status.Service }

// GetConditions returns a pointer to status.conditions.
func (v *SystemVersion) GetConditions() *[]metav1.Condition { return &v.Status.Conditions }

// SetObservedGeneration records the generation status describes.
func (v *SystemVersion) SetObservedGeneration(g int64) { v.Status.ObservedGeneration = g }

// GetObservedRetry returns status.observedRetry.
func (v *SystemVersion) GetObservedRetry() string { return v.Status.ObservedRetry }

// SetObservedRetry records the retry annotation's value the operator acted on.
func (v *SystemVersion) SetObservedRetry(s string) { v.Status.ObservedRetry = s }
