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

// ServiceURL is the base URL of an Evaluation Service: http or https, no
// user info, a path ending in /api/v2, no query or fragment.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=2048
// +kubebuilder:validation:XValidation:rule="isURL(self)",message="url must be an absolute URL such as https://eval.example.com/api/v2",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="url must start with https:// (or http://)",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-z]+://[^/]*@')",message="url must not carry user info: put the API key in the Secret apiKeySecretRef names",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!self.contains('?') && !self.contains('#')",message="url must have no query or fragment",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="self.endsWith('/api/v2') || self.endsWith('/api/v2/')",message="url must end in /api/v2, the base of the Evaluation Service API",reason=FieldValueInvalid
type ServiceURL string

// StandaloneService asks for no service at all: the cluster is the system
// of record for the objects that use it (ids are assigned locally,
// deletions complete at once).
//
// +kubebuilder:validation:XValidation:rule="!has(self.runPassCriteria) || !has(self.runPassCriteria.baseline) || !has(self.runPassCriteria.baseline.production)",message="runPassCriteria.baseline.production compares with the production version of a run's SystemVersion, and the runs the REST server creates name none: use baseline.runRef, or no baseline",fieldPath=".runPassCriteria.baseline",reason=FieldValueInvalid
type StandaloneService struct {
	// runPassCriteria are the passCriteria of the EvaluationRuns the REST
	// server creates for this service's namespaces (POST
	// /projects/{id}/runs, the SDKs' runs), whose request has no field for
	// them. Unset, such a run gets passCriteria's defaults: minPassRate 1
	// and minScoredRatio 1. A run created as an EvaluationRun keeps its own.
	// +optional
	RunPassCriteria *PassCriteria `json:"runPassCriteria,omitempty"`

	// judge is an OpenAI-compatible chat-completions endpoint (vLLM,
	// KServe, Ollama, or a hosted one) that scores the AI Metrics of the
	// runs kept on this service: each record written to such a run is
	// judged once per AI Metric from the Metric's promptTemplate,
	// guidelines and temperature. Unset, nobody scores AI Metrics: the
	// team's own code writes those scores. See docs/scoring.md.
	// +optional
	Judge *Judge `json:"judge,omitempty"`
}

// JudgeURL is the base URL of an OpenAI-compatible API, such as
// http://vllm.models.svc:8000/v1: requests go to <url>/chat/completions.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=2048
// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('https://') || self.startsWith('http://'))",message="judge url must be an absolute http(s) URL such as http://vllm.models.svc:8000/v1",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-z]+://[^/]*@') && !self.contains('?') && !self.contains('#')",message="judge url must carry no user info, query or fragment: put the key in the Secret apiKeySecretRef names",reason=FieldValueInvalid
type JudgeURL string

// Judge is the model that scores AI Metrics on a standalone service, and
// the bounds of what is sent to it.
type Judge struct {
	// url is the base URL of the OpenAI-compatible API, e.g.
	// http://vllm.models.svc:8000/v1 (vLLM, KServe), http://ollama:11434/v1
	// (Ollama) or https://api.openai.com/v1. The address rules of
	// EvaluationServices apply: a namespaced service's judge may not reach
	// private addresses unless the operator allows them.
	// +required
	URL JudgeURL `json:"url"`

	// apiKeySecretRef selects the Secret key holding the judge's bearer
	// key; unset sends no Authorization header (a judge inside the cluster
	// often needs none). An EvaluationService's Secret is in its own
	// namespace; a ClusterEvaluationService names the Secret's namespace.
	// +optional
	APIKeySecretRef *JudgeKeySelector `json:"apiKeySecretRef,omitempty"`

	// caBundle is a PEM bundle of the certificate authorities that sign the
	// judge's certificate. Unset uses the system's roots.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	// +kubebuilder:validation:XValidation:rule="self.contains('-----BEGIN CERTIFICATE-----')",message="caBundle must hold PEM certificates",reason=FieldValueInvalid
	CABundle string `json:"caBundle,omitempty"`

	// models maps a Metric's evalModelName (e.g. gpt-4o, the API's
	// default) to the model name the judge serves.
	// +optional
	// +listType=map
	// +listMapKey=evalModelName
	// +kubebuilder:validation:MaxItems=32
	Models []JudgeModel `json:"models,omitempty"`

	// defaultModel is the judge's model for a Metric whose evalModelName
	// models does not list. Unset, such a Metric's records are left
	// unscored, the reason named in the run's status.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	DefaultModel string `json:"defaultModel,omitempty"`

	// maxInFlight bounds the judge requests in flight at once for this
	// service, across all its runs.
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	MaxInFlight *int32 `json:"maxInFlight,omitempty"`

	// requestsPerSecond bounds the rate of judge requests for this service.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	RequestsPerSecond *int32 `json:"requestsPerSecond,omitempty"`

	// maxRequestsPerRun is the budget of judge requests (retries and second
	// asks included) of one run; a run that spends it ends Inconclusive,
	// reason JudgeBudgetSpent.
	// +optional
	// +kubebuilder:default=30000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	MaxRequestsPerRun *int32 `json:"maxRequestsPerRun,omitempty"`

	// maxTokens bounds the tokens of each answer (the request's max_tokens).
	// +optional
	// +kubebuilder:default=512
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=8192
	MaxTokens *int32 `json:"maxTokens,omitempty"`

	// timeout bounds each judge request, between 1s and 10m.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('10m')",message="judge timeout must be between 1s and 10m",reason=FieldValueInvalid
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// JudgeModel maps a Metric's evalModelName to a model the judge serves.
type JudgeModel struct {
	// evalModelName is the Metric's evalModelName, e.g. gpt-4o.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	EvalModelName string `json:"evalModelName"`

	// model is the judge's model name, e.g. Qwen/Qwen2.5-7B-Instruct.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	Model string `json:"model"`
}

// JudgeKeySelector names the Secret key of a judge's bearer key.
type JudgeKeySelector struct {
	// name is the name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// key is the data key holding the judge's key. Defaults to apiKey.
	// +optional
	// +kubebuilder:default=apiKey
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`

	// namespace is the Secret's namespace: required on a
	// ClusterEvaluationService, forbidden on an EvaluationService (whose
	// judge key is always in its own namespace).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// ServiceLimits bound what the operator sends to one service. Each
// defaults to the operator's flag of the same meaning.
type ServiceLimits struct {
	// requestsPerSecond is the rate of requests sent to the service (--api-qps).
	// +optional
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	RequestsPerSecond *int32 `json:"requestsPerSecond,omitempty"`

	// burst is how many requests may be sent at once above requestsPerSecond (--api-burst).
	// +optional
	// +kubebuilder:default=40
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Burst *int32 `json:"burst,omitempty"`

	// maxInFlight bounds the requests in flight to the service at once;
	// 0 means half of the operator's workers (--max-concurrent-reconciles),
	// so a slow service leaves other services' objects a worker
	// (--api-max-in-flight).
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1024
	MaxInFlight *int32 `json:"maxInFlight,omitempty"`

	// timeout bounds each request, from sending it to reading the answer,
	// between 1s and 5m (--api-timeout).
	// +optional
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('5m')",message="timeout must be between 1s and 5m",reason=FieldValueInvalid
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// driftInterval is the time between two reads of a Ready Metric's remote
	// copy, at most 24h; 0s turns drift checks off (--drift-interval).
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) == duration('0s') || (duration(self) >= duration('10s') && duration(self) <= duration('24h'))",message="driftInterval must be 0s (off) or between 10s and 24h",reason=FieldValueInvalid
	DriftInterval *metav1.Duration `json:"driftInterval,omitempty"`
}

// ServiceConnection is what the two service kinds share: where the service
// is, and how the operator talks to it.
type ServiceConnection struct {
	// url is the service's base URL, ending in /api/v2, e.g.
	// https://eval.example.com/api/v2. Exactly one of url and standalone.
	// +optional
	URL ServiceURL `json:"url,omitempty"`

	// standalone, set to {}, makes the cluster the system of record for the
	// objects that use this service, as the operator does without --api-url.
	// Exactly one of url and standalone.
	// +optional
	Standalone *StandaloneService `json:"standalone,omitempty"`

	// caBundle is a PEM bundle of the certificate authorities that sign the
	// service's certificate, for a service behind a private CA. Unset uses
	// the system's roots.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	// +kubebuilder:validation:XValidation:rule="self.contains('-----BEGIN CERTIFICATE-----')",message="caBundle must hold PEM certificates",reason=FieldValueInvalid
	CABundle string `json:"caBundle,omitempty"`

	// limits bound the requests sent to the service; each defaults to the
	// operator's flag.
	// +optional
	// +kubebuilder:default={}
	Limits ServiceLimits `json:"limits,omitempty"`

	// executor is what the executor Pods of the EvaluationRuns using this
	// service may run as and read, in the run's namespace. Whoever may
	// write this service chooses it for everyone who may create an
	// EvaluationRun: give write access only to those who may create Pods as
	// that ServiceAccount and read those Secrets. Unset, executors run as
	// the namespace's default ServiceAccount without an API token and may
	// use no Secret but the run's key.
	// +optional
	Executor *ExecutorGrant `json:"executor,omitempty"`
}

// ExecutorGrant is what an EvaluationRun's executor Pods may run as and
// read, in the run's namespace. The operator also holds every executor
// template to the restricted Pod Security profile.
type ExecutorGrant struct {
	// serviceAccountName is the ServiceAccount, in the run's namespace, the
	// executor Pods run as; the operator sets it, and a template naming
	// another is refused. Unset, they run as the namespace's default
	// ServiceAccount with automountServiceAccountToken false: the shipped
	// executor needs no Kubernetes API access.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// secrets names the Secrets, in the run's namespace, an executor
	// template may reference: in env (secretKeyRef), envFrom (secretRef),
	// secret and projected volumes, and imagePullSecrets. The Secret
	// holding the run's own key is always allowed (the operator hands it
	// over as EVAL_API_KEY); a template referencing any other Secret is
	// refused.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Secrets []string `json:"secrets,omitempty"`
}

// EvaluationServiceSpec is a connection to one service, for the objects of
// its namespace.
//
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.standalone)",message="set exactly one of url and standalone",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.standalone) || !has(self.caBundle)",message="caBundle applies to url only, not to standalone",fieldPath=".caBundle",reason=FieldValueForbidden
// (CEL names a field called namespace __namespace__: a reserved word, which
// Kubernetes 1.30 refuses unescaped.)
// +kubebuilder:validation:XValidation:rule="!has(self.standalone) || !has(self.standalone.judge) || !has(self.standalone.judge.apiKeySecretRef) || !has(self.standalone.judge.apiKeySecretRef.__namespace__)",message="an EvaluationService's judge key is a Secret of its own namespace: leave namespace unset",fieldPath=".standalone.judge.apiKeySecretRef.namespace",reason=FieldValueForbidden
type EvaluationServiceSpec struct {
	ServiceConnection `json:",inline"`

	// apiKeySecretRef selects the Secret key, in this namespace, holding the
	// `ak_...` API key of objects that name no key of their own.
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`
}

// NamespacedSecretKeySelector names a key of a Secret in a given namespace.
type NamespacedSecretKeySelector struct {
	SecretKeySelector `json:",inline"`

	// namespace is the namespace of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`
}

// ClusterEvaluationServiceSpec is a connection to one service, for the
// objects of the namespaces it allows.
//
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.standalone)",message="set exactly one of url and standalone",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.standalone) || !has(self.caBundle)",message="caBundle applies to url only, not to standalone",fieldPath=".caBundle",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.standalone) || !has(self.standalone.judge) || !has(self.standalone.judge.apiKeySecretRef) || has(self.standalone.judge.apiKeySecretRef.__namespace__)",message="a ClusterEvaluationService's judge key names its Secret's namespace",fieldPath=".standalone.judge.apiKeySecretRef",reason=FieldValueRequired
type ClusterEvaluationServiceSpec struct {
	ServiceConnection `json:",inline"`

	// apiKeySecretRef selects the Secret key, in the namespace it names,
	// holding the `ak_...` API key of objects that name no key of their own.
	// +optional
	APIKeySecretRef *NamespacedSecretKeySelector `json:"apiKeySecretRef,omitempty"`

	// namespaces lists the namespaces whose objects may use this service.
	// With namespaceSelector, a namespace in either may use it; with
	// neither, every namespace may.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespaces []string `json:"namespaces,omitempty"`

	// namespaceSelector selects, by label, the namespaces whose objects may
	// use this service. Prefer labels tenants cannot set, such as
	// kubernetes.io/metadata.name.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// adoption says whether objects using this service's own key may take
	// on remote ids they did not create: a metric-id annotation, adoption by
	// name, or a create settled from the service's list. With one key, every
	// namespace the service allows is one identity at the service, so the
	// owner of such an id cannot be told: Refused (the default) stalls
	// those objects (reason AdoptionNotAllowed); Allowed lets them, for an
	// administrator who trusts every allowed namespace. Objects that name
	// their own apiKeySecretRef act as their own identity and may always adopt.
	// +optional
	// +kubebuilder:default=Refused
	Adoption ServiceAdoption `json:"adoption,omitempty"`
}

// ServiceAdoption says whether a ClusterEvaluationService's shared key may
// adopt remote ids: Refused or Allowed.
// +kubebuilder:validation:Enum=Refused;Allowed
type ServiceAdoption string

const (
	// ServiceAdoptionRefused stalls adoptions under the service's own key.
	ServiceAdoptionRefused ServiceAdoption = "Refused"
	// ServiceAdoptionAllowed lets every allowed namespace adopt under the service's own key.
	ServiceAdoptionAllowed ServiceAdoption = "Allowed"
)

// ServiceStatus reports a service connection's state.
type ServiceStatus struct {
	// endpoint is the host of the URL, or "standalone".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Endpoint string `json:"endpoint,omitempty"`

	// users counts the objects that resolve to this service.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Users int32 `json:"users,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Reconciling and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EvaluationService is a connection to one Evaluation Service (or to none:
// standalone) for the Metrics, TestsetDeletions and TestcaseDeletions of
// its namespace. The one named `default` serves the objects that name no
// service.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=evalsvc,categories=evaluation
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Users",type=integer,JSONPath=`.status.users`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EvaluationService struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is where the service is and how to talk to it.
	// +required
	Spec EvaluationServiceSpec `json:"spec"`

	// status reports the connection's state.
	// A new object starts with Ready Unknown and Reconciling True (reason
	// Pending) until the operator first acts on it.
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status ServiceStatus `json:"status,omitempty"`
}

// EvaluationServiceList is a list of EvaluationServices.
//
// +kubebuilder:object:root=true
type EvaluationServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EvaluationService `json:"items"`
}

// ClusterEvaluationService is a connection to one Evaluation Service (or
// to none: standalone), made by a cluster administrator for the namespaces
// it allows. The one named `default` serves the objects that name no
// service and whose namespace has no EvaluationService `default`.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cevalsvc,categories=evaluation
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Users",type=integer,JSONPath=`.status.users`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterEvaluationService struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is where the service is, how to talk to it and who may use it.
	// +required
	Spec ClusterEvaluationServiceSpec `json:"spec"`

	// status reports the connection's state.
	// A new object starts with Ready Unknown and Reconciling True (reason
	// Pending) until the operator first acts on it.
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status ServiceStatus `json:"status,omitempty"`
}

// ClusterEvaluationServiceList is a list of ClusterEvaluationServices.
//
// +kubebuilder:object:root=true
type ClusterEvaluationServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterEvaluationService `json:"items"`
}

// ServiceObject is an EvaluationService or a ClusterEvaluationService.
//
// +kubebuilder:object:generate=false
type ServiceObject interface {
	metav1.Object
	runtime.Object
	// GetConnection returns where the service is and how to talk to it.
	GetConnection() *ServiceConnection
	// GetKeySecret returns the namespace and selector of the Secret holding
	// the service's key, or a nil selector when it names none.
	GetKeySecret() (string, *SecretKeySelector)
	// SharesKeyForAdoption reports whether objects that use the service's
	// own key must not adopt remote ids they did not create.
	SharesKeyForAdoption() bool
	// GetServiceStatus returns the status.
	GetServiceStatus() *ServiceStatus
}

var (
	_ ServiceObject = &EvaluationService{}
	_ ServiceObject = &ClusterEvaluationService{}
)

// GetConnection returns the EvaluationService's connection.
func (s *EvaluationService) GetConnection() *ServiceConnection { return &s.Spec.ServiceConnection }

// GetConnection returns the ClusterEvaluationService's connection.
func (s *ClusterEvaluationService) GetConnection() *ServiceConnection {
	return &s.Spec.ServiceConnection
}

// GetKeySecret returns the EvaluationService's key Secret, in its own namespace.
func (s *EvaluationService) GetKeySecret() (string, *SecretKeySelector) {
	return s.Namespace, s.Spec.APIKeySecretRef
}

// GetKeySecret returns the ClusterEvaluationService's key Secret, in the namespace it names.
func (s *ClusterEvaluationService) GetKeySecret() (string, *SecretKeySelector) {
	if s.Spec.APIKeySecretRef == nil {
		return "", nil
	}
	return s.Spec.APIKeySecretRef.Namespace, &s.Spec.APIKeySecretRef.SecretKeySelector
}

// SharesKeyForAdoption reports whether objects using the service's own key
// must not adopt remote ids: a ClusterEvaluationService's key is shared by
// every namespace it allows, unless it opts in (spec.adoption Allowed).
func (s *EvaluationService) SharesKeyForAdoption() bool { return false }

// SharesKeyForAdoption reports whether objects using the service's own key
// must not adopt remote ids (see EvaluationService.SharesKeyForAdoption).
func (s *ClusterEvaluationService) SharesKeyForAdoption() bool {
	return s.Spec.APIKeySecretRef != nil && s.Spec.Adoption != ServiceAdoptionAllowed
}

// GetServiceStatus returns the EvaluationService's status.
func (s *EvaluationService) GetServiceStatus() *ServiceStatus { return &s.Status }

// GetServiceStatus returns the ClusterEvaluationService's status.
func (s *ClusterEvaluationService) GetServiceStatus() *ServiceStatus { return &s.Status }
