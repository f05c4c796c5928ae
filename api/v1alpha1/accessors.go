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

// Object is any of this API's kinds: each has status conditions and may
// reference the Secret holding its API key.
// It satisfies controller-runtime's client.Object.
//
// +kubebuilder:object:generate=false
type Object interface {
	metav1.Object
	runtime.Object
	GetAPIKeySecretRef() *SecretKeySelector
	// GetServiceRef returns spec.serviceRef, or nil.
	GetServiceRef() *ServiceReference
	// SetResolvedService records in status the service the object resolved to.
	SetResolvedService(string)
	// GetResolvedService returns status.service.
	GetResolvedService() string
	GetConditions() *[]metav1.Condition
	SetObservedGeneration(int64)
	GetObservedRetry() string
	SetObservedRetry(string)
}

var (
	_ Object = &Metric{}
	_ Object = &TestsetDeletion{}
	_ Object = &TestcaseDeletion{}
	_ Object = &Testset{}
	_ Object = &EvaluationRun{}
)

// GetAPIKeySecretRef returns the Metric's Secret reference, or nil.
func (m *Metric) GetAPIKeySecretRef() *SecretKeySelector { return m.Spec.APIKeySecretRef }

// GetAPIKeySecretRef returns the TestsetDeletion's Secret reference, or nil.
func (d *TestsetDeletion) GetAPIKeySecretRef() *SecretKeySelector { return d.Spec.APIKeySecretRef }

// GetAPIKeySecretRef returns the TestcaseDeletion's Secret reference, or nil.
func (d *TestcaseDeletion) GetAPIKeySecretRef() *SecretKeySelector { return d.Spec.APIKeySecretRef }

// GetServiceRef returns the Metric's service reference, or nil.
func (m *Metric) GetServiceRef() *ServiceReference { return m.Spec.ServiceRef }

// GetServiceRef returns the TestsetDeletion's service reference, or nil.
func (d *TestsetDeletion) GetServiceRef() *ServiceReference { return d.Spec.ServiceRef }

// GetServiceRef returns the TestcaseDeletion's service reference, or nil.
func (d *TestcaseDeletion) GetServiceRef() *ServiceReference { return d.Spec.ServiceRef }

// SetResolvedService records the Metric's resolved service.
func (m *Metric) SetResolvedService(s string) { m.Status.Service = s }

// SetResolvedService records the TestsetDeletion's resolved service.
func (d *TestsetDeletion) SetResolvedService(s string) { d.Status.Service = s }

// SetResolvedService records the TestcaseDeletion's resolved service.
func (d *TestcaseDeletion) SetResolvedService(s string) { d.Status.Service = s }

// GetResolvedService returns the Metric's resolved service.
func (m *Metric) GetResolvedService() string { return m.Status.Service }

// GetResolvedService returns the TestsetDeletion's resolved service.
func (d *TestsetDeletion) GetResolvedService() string { return d.Status.Service }

// GetResolvedService returns the TestcaseDeletion's resolved service.
func (d *TestcaseDeletion) GetResolvedService() string { return d.Status.Service }

// GetConditions returns the Metric's conditions.
func (m *Metric) GetConditions() *[]metav1.Condition { return &m.Status.Conditions }

// GetConditions returns the TestsetDeletion's conditions.
func (d *TestsetDeletion) GetConditions() *[]metav1.Condition { return &d.Status.Conditions }

// GetConditions returns the TestcaseDeletion's conditions.
func (d *TestcaseDeletion) GetConditions() *[]metav1.Condition { return &d.Status.Conditions }

// SetObservedGeneration records the generation the Metric's status describes.
func (m *Metric) SetObservedGeneration(g int64) { m.Status.ObservedGeneration = g }

// SetObservedGeneration records the generation the TestsetDeletion's status describes.
func (d *TestsetDeletion) SetObservedGeneration(g int64) { d.Status.ObservedGeneration = g }

// SetObservedGeneration records the generation the TestcaseDeletion's status describes.
func (d *TestcaseDeletion) SetObservedGeneration(g int64) { d.Status.ObservedGeneration = g }

// GetObservedRetry returns the retry annotation value the Metric's status last acted on.
func (m *Metric) GetObservedRetry() string { return m.Status.ObservedRetry }

// GetObservedRetry returns the retry annotation value the TestsetDeletion's status last acted on.
func (d *TestsetDeletion) GetObservedRetry() string { return d.Status.ObservedRetry }

// GetObservedRetry returns the retry annotation value the TestcaseDeletion's status last acted on.
func (d *TestcaseDeletion) GetObservedRetry() string { return d.Status.ObservedRetry }

// SetObservedRetry records the retry annotation value acted on for the Metric.
func (m *Metric) SetObservedRetry(v string) { m.Status.ObservedRetry = v }

// SetObservedRetry records the retry annotation value acted on for the TestsetDeletion.
func (d *TestsetDeletion) SetObservedRetry(v string) { d.Status.ObservedRetry = v }

// SetObservedRetry records the retry annotation value acted on for the TestcaseDeletion.
func (d *TestcaseDeletion) SetObservedRetry(v string) { d.Status.ObservedRetry = v }

// Finished reports whether the deletion completed; a finished one is never sent again.
func (s *DeletionStatus) Finished() bool {
	return s.Success != nil && *s.Success && s.CompletionTime != nil
}

// RecordedID is the Metric's remote id: the metric-id annotation, its
// durable record, or when a replace or a failed write lost the annotation,
// status.id. Either one is final: a Metric with a recorded id is never
// created again, unless a person allows it (RecreateAnnotation).
func (m *Metric) RecordedID() string {
	if id := m.Annotations[MetricIDAnnotation]; id != "" {
		return id
	}
	return m.Status.ID
}

// TextBytes is the size of the Metric's texts, of spec and status: what the
// manager's cache leaves out of a settled Metric (see internal/trimcache).
func (m *Metric) TextBytes() int {
	n := 0
	for _, s := range []*Text{m.Spec.PromptTemplate, m.Spec.Guidelines, m.Spec.Description,
		m.Status.Guidelines, m.Status.Description} {
		if s != nil {
			n += len(*s)
		}
	}
	return n
}

// CreatePending reports whether the Metric carries the create-pending
// guard: a create may have been sent without its answer recorded.
func (m *Metric) CreatePending() bool {
	_, ok := m.Annotations[CreatePendingAnnotation]
	return ok
}

// GetDeletionStatus returns the TestsetDeletion's progress.
func (d *TestsetDeletion) GetDeletionStatus() *DeletionStatus { return &d.Status }

// GetDeletionStatus returns the TestcaseDeletion's progress shared with the other deletion kind.
func (d *TestcaseDeletion) GetDeletionStatus() *DeletionStatus { return &d.Status.DeletionStatus }

// GetTTLSecondsAfterFinished returns how long a finished TestsetDeletion is kept, or nil for ever.
func (d *TestsetDeletion) GetTTLSecondsAfterFinished() *int32 { return d.Spec.TTLSecondsAfterFinished }

// GetTTLSecondsAfterFinished returns how long a finished TestcaseDeletion is kept, or nil for ever.
func (d *TestcaseDeletion) GetTTLSecondsAfterFinished() *int32 { return d.Spec.TTLSecondsAfterFinished }

// GetAPIKeySecretRef returns spec.apiKeySecretRef, or nil.
func (t *Testset) GetAPIKeySecretRef() *SecretKeySelector { return t.Spec.APIKeySecretRef }

// GetServiceRef returns spec.serviceRef, or nil.
func (t *Testset) GetServiceRef() *ServiceReference { return t.Spec.ServiceRef }

// SetResolvedService records in status the service the Testset resolved to.
func (t *Testset) SetResolvedService(s string) { t.Status.Service = s }

// GetResolvedService returns status.service.
func (t *Testset) GetResolvedService() string { return t.Status.Service }

// GetConditions returns a pointer to status.conditions.
func (t *Testset) GetConditions() *[]metav1.Condition { return &t.Status.Conditions }

// SetObservedGeneration records the generation status describes.
func (t *Testset) SetObservedGeneration(g int64) { t.Status.ObservedGeneration = g }

// GetObservedRetry returns status.observedRetry.
func (t *Testset) GetObservedRetry() string { return t.Status.ObservedRetry }

// SetObservedRetry records the retry annotation's value the operator acted on.
func (t *Testset) SetObservedRetry(v string) { t.Status.ObservedRetry = v }

// RecordedID is the Testset's remote id: the testset-id annotation, else
// status.id, with Metric.RecordedID's meaning.
func (t *Testset) RecordedID() string {
	if id := t.Annotations[TestsetIDAnnotation]; id != "" {
		return id
	}
	return t.Status.ID
}

// CreatePending reports whether the Testset carries the create-pending
// guard: a create may have been sent without its answer recorded.
func (t *Testset) CreatePending() bool {
	_, ok := t.Annotations[CreatePendingAnnotation]
	return ok
}

// RemoteHolder is a kind whose objects hold a copy in their service: a
// Metric or a Testset.
// +kubebuilder:object:generate=false
type RemoteHolder interface {
	Object
	// HoldsRemote reports whether the operator recorded the object's remote
	// copy (status.id: read or created, not a bare annotation) or may have
	// created one (a pending create).
	HoldsRemote() bool
}

// HoldsRemote reports whether the Metric's remote Metric is recorded or may exist.
func (m *Metric) HoldsRemote() bool { return m.Status.ID != "" || m.CreatePending() }

// HoldsRemote reports whether the Testset's remote Testset is recorded or may exist.
func (t *Testset) HoldsRemote() bool { return t.Status.ID != "" || t.CreatePending() }

// GetAPIKeySecretRef returns the EvaluationRun's Secret reference, or nil.
func (e *EvaluationRun) GetAPIKeySecretRef() *SecretKeySelector { return e.Spec.APIKeySecretRef }

// GetServiceRef returns spec.serviceRef, or nil.
func (e *EvaluationRun) GetServiceRef() *ServiceReference { return e.Spec.ServiceRef }

// SetResolvedService records the service the EvaluationRun resolved to.
func (e *EvaluationRun) SetResolvedService(s string) { e.Status.Service = s }

// GetResolvedService returns status.service.
func (e *EvaluationRun) GetResolvedService() string { return e.Status.Service }

// GetConditions returns a pointer to the EvaluationRun's conditions.
func (e *EvaluationRun) GetConditions() *[]metav1.Condition { return &e.Status.Conditions }

// SetObservedGeneration records the generation the status describes.
func (e *EvaluationRun) SetObservedGeneration(g int64) { e.Status.ObservedGeneration = g }

// GetObservedRetry returns status.observedRetry.
func (e *EvaluationRun) GetObservedRetry() string { return e.Status.ObservedRetry }

// SetObservedRetry records the retry annotation's value the operator acted on.
func (e *EvaluationRun) SetObservedRetry(v string) { e.Status.ObservedRetry = v }

// RecordedID is the EvaluationRun's remote Run id: the run-id annotation,
// its durable record, else status.runId.
func (e *EvaluationRun) RecordedID() string {
	if id := e.Annotations[RunIDAnnotation]; id != "" {
		return id
	}
	return e.Status.RunID
}

// CreatePending reports whether the EvaluationRun carries the create-pending
// guard: a create may have been sent without its answer recorded.
func (e *EvaluationRun) CreatePending() bool {
	_, ok := e.Annotations[CreatePendingAnnotation]
	return ok
}
