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

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Prefix is the prefix of every label and annotation this operator owns.
const Prefix = "evaluation.eval-operator.dev/"

const (
	// MetricIDAnnotation is the durable record of a Metric's remote id. The
	// operator writes it right after the service assigns the id, because status
	// may be lost in a backup and restore while metadata is not. Setting it on a
	// new Metric adopts that existing remote Metric instead of creating one.
	MetricIDAnnotation = Prefix + "metric-id"

	// TestsetIDAnnotation is the durable record of a Testset's remote id,
	// with MetricIDAnnotation's meaning: written right after the service
	// assigns the id; set on a new Testset, it adopts that remote Testset.
	TestsetIDAnnotation = Prefix + "testset-id"
	// RunIDAnnotation is the durable record of an EvaluationRun's remote Run
	// id, written right after the service assigns it: a run is never created
	// twice.
	RunIDAnnotation = Prefix + "run-id"

	// CreatePendingAnnotation is written, with an optimistic-concurrency update,
	// before the create request is sent. Finding it without MetricIDAnnotation
	// means an earlier attempt may have created the remote Metric; the operator
	// then stops and waits for a person rather than risk a duplicate.
	CreatePendingAnnotation = Prefix + "create-pending"

	// MetricFinalizer holds a Metric whose spec.deletionPolicy is Delete until
	// its remote Metric is deleted. Upstream mode only: it is added with the
	// create-pending mark, or when an id is recorded without it.
	MetricFinalizer = "evaluation.eval-operator.dev/delete-remote"

	// PausedAnnotation set to "true" on any kind stops every upstream call
	// and every write for that object until it is removed.
	PausedAnnotation = Prefix + "paused"

	// RetryAnnotation set to a new value lets a person retry an object
	// stalled on Rejected, once per value, after the service was fixed.
	RetryAnnotation = Prefix + "retry"

	// RecreateAnnotation lets a person allow one new create of a Metric whose
	// remote Metric is gone (Stalled, reason RemoteNotFound). Its value must
	// be the missing id; any other value is ignored, so an annotation left
	// behind never causes a second create.
	RecreateAnnotation = Prefix + "recreate"

	// ServiceAnnotation records the service a Metric's remote id belongs
	// to: the normalised base URL of the service it was created on or
	// adopted from, or "standalone". It is written with the create-pending
	// mark and with the id; an object whose service later resolves to
	// another URL makes no call (Stalled, reason ServiceChanged).
	ServiceAnnotation = Prefix + "service-url"

	// ServiceFinalizer holds an EvaluationService or ClusterEvaluationService
	// while objects still use it.
	ServiceFinalizer = Prefix + "in-use"

	// APIKeyLabel marks the Secrets whose apiKey the built-in REST server accepts.
	APIKeyLabel = Prefix + "api-key"

	// CreatedByLabel marks the resources the built-in REST server created,
	// with the value CreatedByRESTAPI.
	CreatedByLabel = Prefix + "created-by"
	// CreatedByRESTAPI is the value of CreatedByLabel.
	CreatedByRESTAPI = "rest-api"

	// CanaryLabel on an EvaluationRun names the canary (Argo Rollouts
	// Rollout, Flagger Canary) whose release it judges; RevisionLabel names
	// that release's revision (a pod template hash, a Flagger checksum, a
	// commit). The gates set them (kubectl eval gate --canary --revision, the
	// Flagger webhook), and the run gauges carry them with spec.systemVersionId.
	CanaryLabel   = Prefix + "canary"
	RevisionLabel = Prefix + "revision"

	// DefaultAPIKeySecretKey is the Secret data key read when apiKeySecretRef.key is unset.
	DefaultAPIKeySecretKey = "apiKey"
)

// Condition types shared by every kind. They follow kstatus, so Argo CD, Flux
// and `kubectl wait` read them without custom health checks.
const (
	// ConditionReady is True when the object's goal is reached: the remote
	// Metric exists, or the deletion completed. Its reason always says why.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the operator is still working towards Ready.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the operator cannot progress without a
	// person: a rejected spec, or a create whose outcome is unknown.
	ConditionStalled = "Stalled"
	// ConditionSynced (Metric only) is True when the remote Metric equals the
	// spec, False with reason Drifted when it differs and managementPolicies
	// keep the operator from correcting it. kstatus ignores it.
	ConditionSynced = "Synced"
	// ConditionPassed (EvaluationRun only) carries the verdict: True when
	// the run passed, False when it failed, Unknown until it is judged and
	// when it is Inconclusive. kstatus ignores it; Ready says the run is
	// finished, whatever its verdict.
	ConditionPassed = "Passed"
	// ConditionPromoted (EvaluationRun with spec.promote only) is True once
	// the run's SystemVersion was made its System's production version,
	// False when it was not and will not be (the run did not pass, or the
	// promotion was refused), Unknown while it is retried.
	ConditionPromoted = "Promoted"
)

// Condition reasons. Every reason is documented in the README.
const (
	// ReasonPending: the operator has not acted on the object yet. New
	// objects get it from the CRD's default status, so kstatus (Flux,
	// kubectl wait) and Argo CD see them in progress from the first second.
	ReasonPending = "Pending"
	// ReasonCreated: the remote Metric was created and its id recorded.
	ReasonCreated = "Created"
	// ReasonAdopted: the remote id came from the metric-id annotation.
	ReasonAdopted = "Adopted"
	// ReasonCreating: the create request is being sent.
	ReasonCreating = "Creating"
	// ReasonCompleted: the deletion finished successfully, or the
	// EvaluationRun was judged.
	ReasonCompleted = "Completed"
	// ReasonDeleting: the deletion is in progress or will be retried.
	ReasonDeleting = "Deleting"
	// ReasonSecretNotFound: the referenced Secret or its data key does not exist.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretUnreadable: reading the referenced Secret failed for another
	// reason than its absence (API server unavailable, RBAC); retried with backoff.
	ReasonSecretUnreadable = "SecretUnreadable"
	// ReasonInvalidCredentials: the referenced key is not an ak_ key; it was not sent.
	ReasonInvalidCredentials = "InvalidCredentials"
	// ReasonUnauthorized: the service answered 401 to the referenced key.
	ReasonUnauthorized = "Unauthorized"
	// ReasonUpstreamUnavailable: the service failed (5xx, 429, timeout, network); retried with backoff.
	ReasonUpstreamUnavailable = "UpstreamUnavailable"
	// ReasonRejected: the service answered 4xx to the request; the spec must change.
	ReasonRejected = "Rejected"
	// ReasonUpdated: a new generation of the spec was sent to the service as
	// one update and the service's answer recorded.
	ReasonUpdated = "Updated"
	// ReasonRemoteNotFound: the service has no Metric under the recorded id
	// (404). The operator never creates it again by itself; annotation
	// recreate set to that id allows one new create.
	ReasonRemoteNotFound = "RemoteNotFound"
	// ReasonCreateOutcomeUnknown: a create may have reached the service but its
	// id was never recorded. Once the request can no longer be in flight, the
	// operator settles it from the service's list of Metrics when it can;
	// otherwise a person must adopt the id or remove the create-pending
	// annotation.
	ReasonCreateOutcomeUnknown = "CreateOutcomeUnknown"
	// ReasonPaused: the paused annotation is set; the operator neither calls
	// the service nor writes the object until it is removed.
	ReasonPaused = "Paused"
	// ReasonAlreadyDeleted: the service answered 404 NOT_FOUND to a deletion:
	// the thing was already gone, so the deletion is complete.
	ReasonAlreadyDeleted = "AlreadyDeleted"
	// ReasonInvalidMetricID: the recorded remote id (the metric-id
	// annotation, or status.id) is not a valid id; nothing is called or
	// served under it until a person corrects or removes the annotation.
	ReasonInvalidMetricID = "InvalidMetricID"
	// ReasonMetricIDClaimed: another Metric of the cluster holds the same
	// remote id on the same service; this later claim does nothing until a
	// person corrects or removes its metric-id annotation. The holder is
	// unaffected, and named only when it is in the claimant's namespace.
	// An EvaluationRun stops with it when one of its metricIds is held by a
	// Metric of another namespace on its service.
	ReasonMetricIDClaimed = "MetricIDClaimed"
	// ReasonInvalidTestsetID: a Testset's recorded remote id (the
	// testset-id annotation, or status.id) is not a valid id, as
	// ReasonInvalidMetricID for a Metric.
	ReasonInvalidTestsetID = "InvalidTestsetID"
	// ReasonTestsetIDClaimed: another Testset of the cluster holds the same
	// remote id on the same service, as ReasonMetricIDClaimed for a Metric:
	// two Testsets would replace each other's testcases. An EvaluationRun
	// stops with it when its testsetId is held by a Testset of another
	// namespace on its service.
	ReasonTestsetIDClaimed = "TestsetIDClaimed"
	// ReasonConnected: the service answered the connection probe
	// (GET /projects?limit=1) with the service's key.
	ReasonConnected = "Connected"
	// ReasonUnreachable: the connection probe got no answer from the service
	// (network, timeout, 5xx, 429, or an address a namespaced service may
	// not reach); retried with backoff.
	ReasonUnreachable = "Unreachable"
	// ReasonStandalone: the service is standalone: the cluster is the system
	// of record for the objects that use it.
	ReasonStandalone = "Standalone"
	// ReasonNotProbed: the service names no key, so it is not probed; the
	// objects that use it send their own.
	ReasonNotProbed = "NotProbed"
	// ReasonDeletingRemote: a deleted Metric waits for its remote Metric's
	// deletion, which failed and is retried with backoff.
	ReasonDeletingRemote = "DeletingRemote"
	// ReasonObserved: the remote Metric exists and was read; managementPolicies
	// do not allow Update, so the operator only mirrors it.
	ReasonObserved = "Observed"
	// ReasonCreateNotAllowed: no remote Metric is recorded or found by name,
	// and managementPolicies do not allow Create.
	ReasonCreateNotAllowed = "CreateNotAllowed"
	// ReasonAmbiguousName: adoptionPolicy ByName found two or more Metrics with
	// the Metric's name in its project that no other object holds.
	ReasonAmbiguousName = "AmbiguousName"
	// ReasonDrifted: the remote Metric differs from the spec and
	// managementPolicies keep the operator from correcting it (Synced False).
	ReasonDrifted = "Drifted"
	// ReasonUpToDate: the remote Metric equals the spec (Synced True).
	ReasonUpToDate = "UpToDate"
	// ReasonServiceNotFound: the service connection the object resolves to
	// (spec.serviceRef) does not exist; retried when it appears.
	ReasonServiceNotFound = "ServiceNotFound"
	// ReasonServiceNotAllowed: the ClusterEvaluationService the object names
	// does not allow the object's namespace, or the object's namespaced
	// EvaluationService leads to an address it may not reach.
	ReasonServiceNotAllowed = "ServiceNotAllowed"
	// ReasonServiceChanged: the object's remote id (or pending create)
	// belongs to another service than the one it now resolves to; nothing is
	// called until a person points it back or lets the id go.
	ReasonServiceChanged = "ServiceChanged"
	// ReasonAdoptionNotAllowed: the object would take on a remote id it did
	// not create (annotation, by name, or a create settled from the list)
	// under a ClusterEvaluationService's own key, which every namespace it
	// allows shares; the service's spec.adoption does not allow that. An
	// EvaluationRun stops with it when, through such a key, it names an id
	// no object holds, a projectId none of its own references belongs to,
	// or a run-id it did not create.
	ReasonAdoptionNotAllowed = "AdoptionNotAllowed"
	// ReasonSourceNotReady: a Testset's source of testcases cannot be read
	// yet (the ConfigMap or its key is missing, the Flux source has no
	// artifact); nothing is sent until it can.
	ReasonSourceNotReady = "SourceNotReady"
	// ReasonInvalidTestcases: a Testset's source holds a line that is not a
	// JSON object, is over the size bound, or lacks the keyField; the message
	// names the line. Nothing is sent until the whole set is valid.
	ReasonInvalidTestcases = "InvalidTestcases"
	// ReasonDuplicateKey: two testcases of a Testset's source have the same
	// keyField value; the message names both lines.
	ReasonDuplicateKey = "DuplicateKey"
	// ReasonSynced: a Testset's remote testcases are those of its source.
	ReasonSynced = "Synced"
	// ReasonReferencesNotReady: an EvaluationRun's Testset or Metric does not
	// exist or is not Ready yet; nothing is called until it is.
	ReasonReferencesNotReady = "ReferencesNotReady"
	// ReasonRunning: an EvaluationRun's run is under way in the service; the
	// message says its phase and counts.
	ReasonRunning = "Running"
	// ReasonStandaloneUnsupported: an EvaluationRun on a standalone service
	// asks for what only a real service has: Metrics by metricIds, or trials
	// or a baseline, which judge by testcase from records.
	ReasonStandaloneUnsupported = "StandaloneUnsupported"
	// ReasonExecutorURLUnavailable: an EvaluationRun's executor would not
	// know where to call: its service is standalone and the operator was
	// not told the REST server's URL (--serve-api-url).
	ReasonExecutorURLUnavailable = "ExecutorURLUnavailable"
	// ReasonInvalidExecutor: the API server refuses an EvaluationRun's
	// executor Job (a dry run, before the run is created), or its template
	// is over the operator's size limit (32 KiB of JSON); the message names
	// the field.
	ReasonInvalidExecutor = "InvalidExecutor"
	// ReasonExecutorNotAllowed: an EvaluationRun's executor template asks
	// for more than its Pods may have (another ServiceAccount, a Secret its
	// service does not allow, host access, a privileged or root container,
	// anything else the restricted Pod Security profile forbids); the
	// message names each field. Checked before the run is created.
	ReasonExecutorNotAllowed = "ExecutorNotAllowed"
	// ReasonExecutorKeyUnavailable: an EvaluationRun has an executor but its
	// key is not in a Secret of its own namespace, which the executor's Pod
	// could read (a ClusterEvaluationService's own key is never handed out).
	ReasonExecutorKeyUnavailable = "ExecutorKeyUnavailable"
)

// Event reasons that are not condition reasons.
const (
	// EventOrphaned: a deleted Metric let go of its remote Metric without
	// deleting it (deletionPolicy Orphan, standalone mode, or the Metric CRD
	// being removed).
	EventOrphaned = "Orphaned"
	// EventInUse: a deleted EvaluationService or ClusterEvaluationService
	// waits for the objects that still use it.
	EventInUse = "InUse"
)

// Event reasons that are not condition reasons.
const (
	// EventDriftCorrected: a drift check found the remote Metric changed
	// outside the cluster, and an update restored the spec.
	EventDriftCorrected = "DriftCorrected"
	// ReasonRecovered: a create whose answer was lost did create the remote
	// Metric; the operator found it in the service's list and recorded its id.
	ReasonRecovered = "Recovered"
)

// SecretKeySelector names a key of a Secret in the object's own namespace.
type SecretKeySelector struct {
	// name is the name of the Secret, in the same namespace as the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// key is the data key of the Secret that holds the API key (an `ak_...`
	// bearer key). Defaults to `apiKey`.
	// +optional
	// +kubebuilder:default=apiKey
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// ServiceKind is the kind of a service connection.
// +kubebuilder:validation:Enum=EvaluationService;ClusterEvaluationService
type ServiceKind string

const (
	// KindEvaluationService is the namespaced service connection.
	KindEvaluationService ServiceKind = "EvaluationService"
	// KindClusterEvaluationService is the cluster-scoped service connection.
	KindClusterEvaluationService ServiceKind = "ClusterEvaluationService"
)

// DefaultServiceName is the name of the EvaluationService, and then of the
// ClusterEvaluationService, that serves the objects naming no service.
const DefaultServiceName = "default"

// ServiceReference names the service connection an object uses.
type ServiceReference struct {
	// kind is EvaluationService (in the object's own namespace) or
	// ClusterEvaluationService.
	// +required
	Kind ServiceKind `json:"kind"`

	// name is the name of the service connection.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// String is "Kind/name".
func (r ServiceReference) String() string { return string(r.Kind) + "/" + r.Name }

// Status.service of an object served by the manager's own flags. Neither
// names a service object, so neither counts as one's user. Pre-release
// builds of 0.2.0 wrote ResolvedServiceFlags without --api-url too; such an
// object is served as before and says Standalone after its next reconcile.
const (
	// ResolvedServiceFlags: the service at the manager's --api-url.
	ResolvedServiceFlags = "ManagerFlags"
	// ResolvedServiceStandalone: no --api-url, the cluster is the system of
	// record.
	ResolvedServiceStandalone = "Standalone"
)

// ResourceID identifies a project, testset or testcase of the Evaluation Service.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=128
// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._:-]*$`
type ResourceID string

// DeletionStatus is the status shared by TestsetDeletion and TestcaseDeletion.
type DeletionStatus struct {
	// success is true once the service confirmed the deletion. A finished
	// deletion is never sent again.
	// +optional
	Success *bool `json:"success,omitempty"`

	// attempts counts the requests sent to the service, failed ones included.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Attempts int32 `json:"attempts,omitempty"`

	// completionTime is when the deletion finished; ttlSecondsAfterFinished counts from it.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// observedRetry is the last value of the retry annotation the operator
	// acted on; the same value again does nothing.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ObservedRetry string `json:"observedRetry,omitempty"`

	// service is the service connection this object resolved to:
	// `EvaluationService/<name>`, `ClusterEvaluationService/<name>`,
	// `ManagerFlags` (the operator's --api-url) or `Standalone` (the
	// operator's flags without --api-url).
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
