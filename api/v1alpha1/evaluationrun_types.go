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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ObjectRef names an object of the run's namespace.
type ObjectRef struct {
	// name is the object's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// HumanScoring says whether a run waits for the scores people give.
// +kubebuilder:validation:Enum=Ignore;Wait
type HumanScoring string

// HumanScoring values.
const (
	// HumanScoringIgnore: the run is judged once only human scores are
	// missing; human Metrics are reported, not judged.
	HumanScoringIgnore HumanScoring = "Ignore"
	// HumanScoringWait: the run waits for every score, human ones included.
	HumanScoringWait HumanScoring = "Wait"
)

// MetricPassCriteria overrides the minimum pass rate of one Metric.
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.id)",message="set exactly one of name and id",reason=FieldValueInvalid
type MetricPassCriteria struct {
	// name is the Metric object's name, as in metricRefs.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
	// id is the Metric's remote id, as in metricIds.
	// +optional
	ID ResourceID `json:"id,omitempty"`
	// minPassRate is the share of this Metric's scored records that must
	// pass, 0 to 1.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinPassRate float64 `json:"minPassRate"`
}

// Baseline is the run a run is compared with: a run named by runRef, or
// the last Passed run of the production version of the run's System.
//
// +kubebuilder:validation:XValidation:rule="has(self.runRef) != has(self.production)",message="set exactly one of baseline.runRef (a run by name) and baseline.production (the last Passed run of the System's production version)",reason=FieldValueInvalid
type Baseline struct {
	// runRef names another EvaluationRun of this namespace, judged on the
	// same Testset: each Metric is compared on the testcases both runs
	// decided, paired by testcase. Until it has a verdict this run waits
	// (within its timeout); one on another Testset, or without the run's
	// records, makes this run Inconclusive.
	// +optional
	RunRef *ObjectRef `json:"runRef,omitempty"`
	// production compares the run with the most recent Passed run, in this
	// namespace and on the same Testset and service, of the production
	// version of its System (the System of spec.systemVersionRef, as its
	// status.productionVersionId says when the run is judged). Without
	// such a run this run is Inconclusive, naming what is missing; it does
	// not wait for one. status.baselineRun names the run it resolved to.
	// +optional
	Production *ProductionBaseline `json:"production,omitempty"`
	// margin is how far below the baseline's pass rate the lower bound of
	// the difference may reach for a Metric to count as no worse, 0 to
	// 0.5. Default 0.05 (five points).
	// +optional
	// +kubebuilder:default=0.05
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=0.5
	Margin *float64 `json:"margin,omitempty"`
}

// ProductionBaseline selects the last Passed run of the System's
// production version as the baseline. It has no fields yet.
type ProductionBaseline struct{}

// PassCriteria are what a run must reach to pass. Each Metric is judged on
// a confidence bound (docs/evaluationruns.md, "The verdict's rule"): Passed
// when the bound clears the criterion, Failed when the opposite bound
// misses it, Inconclusive when the data cannot decide.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minPassingTrials) || self.minPassingTrials <= (has(self.trials) ? self.trials : 1)",message="minPassingTrials cannot exceed trials (default 1)",fieldPath=".minPassingTrials",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.confidence) || has(self.baseline) || (has(self.minPassRate) && self.minPassRate < 1 && (!has(self.metrics) || self.metrics.all(m, m.minPassRate < 1)))",message="with a confidence level and no baseline, a minimum pass rate of 1 can never be shown by a finite sample: set minPassRate and every metrics[].minPassRate below 1",fieldPath=".confidence",reason=FieldValueInvalid
type PassCriteria struct {
	// minPassRate is the share of each Metric's scored records that must
	// pass, 0 to 1. Default 1: every score passes.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinPassRate *float64 `json:"minPassRate,omitempty"`
	// metrics override minPassRate for single Metrics.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Metrics []MetricPassCriteria `json:"metrics,omitempty"`
	// minScoredRatio is the share of each judged Metric's expected scores
	// (one per record the run expects) that must exist, 0 to 1. Default 1.
	// Fewer make the run Inconclusive.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinScoredRatio *float64 `json:"minScoredRatio,omitempty"`
	// baseline is a run each Metric is compared with instead of its
	// minimum pass rate: Failed when measurably worse, Passed when no worse
	// than baseline.margin. Judged by testcase.
	// +optional
	Baseline *Baseline `json:"baseline,omitempty"`
	// confidence is the one-sided confidence level of every bound, 0.5 to
	// 0.999. Unset: 0.95 against a baseline; without one, 0.5, at which
	// both bounds are the observed pass rate (the fixed-rate rule).
	// +optional
	// +kubebuilder:validation:Minimum=0.5
	// +kubebuilder:validation:Maximum=0.999
	Confidence *float64 `json:"confidence,omitempty"`
	// trials is how many records (trials) of each testcase the run
	// expects, 1 to 10, as the SDKs' runAndEvaluate trials option writes
	// them. Above 1 the run is judged by testcase, not by record. Default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Trials *int32 `json:"trials,omitempty"`
	// minPassingTrials is how many of a testcase's trials must pass for the
	// testcase to pass, 1 to trials. Default: trials (every trial).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	MinPassingTrials *int32 `json:"minPassingTrials,omitempty"`
}

// EvaluationRunSpec is one run of the Evaluation Service: a Testset's
// testcases run through the system under test, each scored by the
// Metrics. Immutable: a new run is a new object.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="an EvaluationRun is immutable: create a new one for a new run",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!(has(self.testsetRef) && has(self.testsetId))",message="set at most one of testsetRef and testsetId",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="has(self.metricRefs) != has(self.metricIds)",message="set exactly one of metricRefs and metricIds",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!(has(self.systemVersionRef) && has(self.systemVersionId))",message="set at most one of systemVersionRef and systemVersionId",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!(has(self.promote) && self.promote) || has(self.systemVersionRef)",message="promote makes the run's SystemVersion its System's production version: name that SystemVersion in systemVersionRef",reason=FieldValueInvalid
// +kubebuilder:validation:XValidation:rule="!has(self.passCriteria) || !has(self.passCriteria.baseline) || !has(self.passCriteria.baseline.production) || has(self.systemVersionRef)",message="passCriteria.baseline.production compares with the production version of the run's System: name the run's SystemVersion in systemVersionRef",reason=FieldValueInvalid
type EvaluationRunSpec struct {
	// projectId is the Evaluation Service project of the run.
	// +required
	ProjectID ResourceID `json:"projectId"`
	// testsetRef names a Testset of this namespace whose testcases the run
	// expects; the run waits until it is Ready.
	// +optional
	TestsetRef *ObjectRef `json:"testsetRef,omitempty"`
	// testsetId is a remote Testset's id, for one not kept in the cluster.
	// +optional
	TestsetID ResourceID `json:"testsetId,omitempty"`
	// metricRefs name Metrics of this namespace, which judge each record;
	// the run waits until they are Ready.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	// +listType=map
	// +listMapKey=name
	MetricRefs []ObjectRef `json:"metricRefs,omitempty"`
	// metricIds are remote Metrics' ids, for Metrics not kept in the cluster.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	// +listType=set
	MetricIDs []ResourceID `json:"metricIds,omitempty"`
	// systemVersionRef names a SystemVersion of this namespace: the run
	// waits until it is Ready and sends its id as the run's
	// systemVersionId, so the verdict is linked to the version it judged.
	// +optional
	SystemVersionRef *ObjectRef `json:"systemVersionRef,omitempty"`
	// systemVersionId is the id of a version not kept in the cluster. A
	// real service holds version ids as UUIDs: a run naming anything else
	// stops before it is created (Stalled, reason InvalidSystemVersionID),
	// as does one the service refuses as not a version of the project. A
	// standalone service accepts any id.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._:-]*$`
	SystemVersionID string `json:"systemVersionId,omitempty"`
	// promote, when true, makes the run's SystemVersion (systemVersionRef)
	// its System's production version once the run is Passed, once: the
	// operator sets the service's productionVersionId (PATCH
	// /systems/{id}), or, on a standalone service, where the cluster is
	// the record, the System's production-version-id annotation; the
	// System's status.productionVersionId then shows it, and the run's
	// Promoted condition says what was done. A Failed or Inconclusive run
	// promotes nothing. Default false.
	// +optional
	Promote *bool `json:"promote,omitempty"`
	// executor is a Job the operator starts once the run exists in the
	// service, to run the system under test on the run's testcases and
	// write the records (and any scores the caller gives). Unset, records
	// come from elsewhere: a CI job, the SDKs' runAndEvaluate.
	// +optional
	Executor *Executor `json:"executor,omitempty"`
	// passCriteria are what the run must reach to pass.
	// +optional
	PassCriteria PassCriteria `json:"passCriteria,omitempty"`
	// humanScoring says whether the run waits for human scores: Ignore
	// (the default) judges it once only human scores are missing, and
	// leaves human Metrics out of the verdict; Wait waits for them.
	// +optional
	// +kubebuilder:default=Ignore
	HumanScoring HumanScoring `json:"humanScoring,omitempty"`
	// timeout bounds the run from its creation in the service; a run not
	// finished by then is judged on the scores that exist and is at best
	// Inconclusive. Default 30m. At most 32 characters.
	// +optional
	// +kubebuilder:default="30m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:MaxLength=32
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// ttlSecondsAfterFinished deletes this object that many seconds after
	// the verdict. Unset keeps it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// apiKeySecretRef selects the Secret key holding the `ak_...` API key,
	// as for a Metric.
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`
	// serviceRef names the service connection, as for a Metric.
	// +optional
	ServiceRef *ServiceReference `json:"serviceRef,omitempty"`
}

// Executor is the Job that runs the system under test for one run.
type Executor struct {
	// template is the Pod the Job runs, once: the Job has backoffLimit 0
	// (a second attempt would write the records twice) and ignores Pod
	// disruptions, and its Pods restart Never. Every container gets
	// EVAL_API_URL, EVAL_API_KEY (a secretKeyRef to the run's key Secret,
	// never the key itself), EVAL_RUN_ID, EVAL_PROJECT_ID and
	// EVAL_TESTSET_ID, replacing variables of those names.
	//
	// The Pods run as the ServiceAccount the run's service names in
	// spec.executor.serviceAccountName (else the namespace's default one,
	// without an API token), may reference only the Secrets it lists in
	// spec.executor.secrets and the run's key Secret, and are held to the
	// restricted Pod Security profile: the operator fills in what the
	// profile requires and the template leaves unset (runAsNonRoot,
	// seccompProfile RuntimeDefault, allowPrivilegeEscalation false,
	// capabilities drop ALL), and refuses host namespaces, nodeName,
	// privileged or root containers, added capabilities and volumes other
	// than emptyDir, configMap, secret, downwardAPI, projected and
	// ephemeral. A template of more than 32 KiB of JSON is refused
	// (InvalidExecutor).
	//
	// The CRD keeps the template's schema out (it would make the CRD too
	// large for client-side apply); the operator checks the template and
	// then the Job with a dry run before the run is created: a template it
	// refuses stops the run at Stalled ExecutorNotAllowed, one the API
	// server refuses at Stalled InvalidExecutor, each naming the field.
	// +required
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=2
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Template corev1.PodTemplateSpec `json:"template"`

	// parallelism spreads the run over this many Pods at once: the Job is
	// Indexed, with as many completions, and each Pod gets EVAL_SHARES and
	// its JOB_COMPLETION_INDEX, from which the shipped executor (kubectl
	// eval exec) takes its share of the Testset. A share that fails is not
	// tried again (backoffLimitPerIndex 0) and the others go on; the run is
	// judged once every share has ended, and a failed share is named in the
	// verdict's message. Unset means one Pod, as before.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	Parallelism *int32 `json:"parallelism,omitempty"`
}

// Verdict is a finished run's outcome.
// +kubebuilder:validation:Enum=Passed;Failed;Inconclusive
type Verdict string

// MetricResult is what one Metric judged.
type MetricResult struct {
	// id is the Metric's remote id.
	// +required
	// +kubebuilder:validation:MaxLength=128
	ID string `json:"id"`
	// name is the Metric object's name, or its id.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// passed, failed and unscored count its scores: passed and failed are
	// judged against its passingThreshold; unscored are the records the
	// run expects without a readable score.
	// +required
	// +kubebuilder:validation:Minimum=0
	Passed int32 `json:"passed"`
	// +required
	// +kubebuilder:validation:Minimum=0
	Failed int32 `json:"failed"`
	// +required
	// +kubebuilder:validation:Minimum=0
	Unscored int32 `json:"unscored"`
	// passRate is passed over passed and failed; unset without scores.
	// +optional
	PassRate *float64 `json:"passRate,omitempty"`
	// minPassRate is the rate it had to reach.
	// +required
	MinPassRate float64 `json:"minPassRate"`
	// judged is false for a human Metric the verdict leaves out
	// (humanScoring Ignore).
	// +required
	Judged bool `json:"judged"`
	// baselinePassRate is the baseline run's pass rate on the testcases
	// both runs decided (passRate is then the run's on the same testcases);
	// set when passCriteria names a baseline.
	// +optional
	BaselinePassRate *float64 `json:"baselinePassRate,omitempty"`
	// difference is passRate minus baselinePassRate.
	// +optional
	Difference *float64 `json:"difference,omitempty"`
	// pairs is how many testcases the comparison paired.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Pairs *int32 `json:"pairs,omitempty"`
	// lowerBound and upperBound are the bounds the verdict judged, each
	// one-sided at confidence: of the difference against a baseline, else
	// of the pass rate. Unset at the fixed-rate rule, where both are
	// passRate.
	// +optional
	LowerBound *float64 `json:"lowerBound,omitempty"`
	// +optional
	UpperBound *float64 `json:"upperBound,omitempty"`
	// confidence is the level of the bounds.
	// +optional
	Confidence *float64 `json:"confidence,omitempty"`
	// scoredRecords marks, one bit per record in base64, the records of a
	// standalone run that have this Metric's score, so that a record is
	// scored once; set while the REST server counts the scores written to
	// the run, dropped at the verdict.
	// +optional
	// +kubebuilder:validation:MaxLength=1700
	ScoredRecords string `json:"scoredRecords,omitempty"`
	// unjudged counts the records of a standalone run the judge could not
	// score for this Metric (an answer unreadable twice, a refusal, no
	// model for its evalModelName): each is done, without a score.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Unjudged int32 `json:"unjudged,omitempty"`
}

// JudgeStatus is what the judge of a standalone service did for a run.
type JudgeStatus struct {
	// service is the service connection whose judge scored the run.
	// +required
	// +kubebuilder:validation:MaxLength=300
	Service string `json:"service"`
	// endpoint is the judge's host.
	// +required
	// +kubebuilder:validation:MaxLength=256
	Endpoint string `json:"endpoint"`
	// models are the judge's models that scored, as evalModelName=model
	// (the first 4).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=520
	Models []string `json:"models,omitempty"`
	// requests counts the judge requests made for the run, retries included.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Requests int32 `json:"requests,omitempty"`
	// tokens counts the tokens the judge reported using for the run.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Tokens int64 `json:"tokens,omitempty"`
	// budgetSpent is set once the run's requests reached the judge's
	// maxRequestsPerRun: no more are sent, and the run ends Inconclusive.
	// +optional
	BudgetSpent bool `json:"budgetSpent,omitempty"`
	// lastError says why the judge last left a record unscored.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	LastError string `json:"lastError,omitempty"`
}

// EvaluationRunStatus is what the operator saw of the run.
type EvaluationRunStatus struct {
	// runId is the remote Run's id.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	RunID string `json:"runId,omitempty"`
	// phase is the Run's status in the service, e.g. running_scoring.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Phase string `json:"phase,omitempty"`
	// records, expectedRecords and scores are the service's counts.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Records int32 `json:"records,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	ExpectedRecords *int32 `json:"expectedRecords,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	Scores int32 `json:"scores,omitempty"`
	// systemVersionId is the version of the system the run judges, as
	// sent to the service.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	SystemVersionID string `json:"systemVersionId,omitempty"`
	// systemId is the remote id of that version's System, when known.
	// +optional
	// +kubebuilder:validation:MaxLength=36
	SystemID string `json:"systemId,omitempty"`
	// baselineRun is the name of the EvaluationRun this run was compared
	// with: passCriteria.baseline.runRef's, or the run
	// passCriteria.baseline.production resolved to when it was judged.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	BaselineRun string `json:"baselineRun,omitempty"`
	// executorJob is the name of the executor Job, once started.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	ExecutorJob string `json:"executorJob,omitempty"`
	// metrics are each Metric's counts and pass rate, once judged.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Metrics []MetricResult `json:"metrics,omitempty"`
	// verdict is Passed, Failed or Inconclusive once the run is judged.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// startTime is when the remote Run was created.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the run was judged.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// observedGeneration is the generation this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// observedRetry is the last value of the retry annotation acted on.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ObservedRetry string `json:"observedRetry,omitempty"`
	// service is the service connection this run resolved to.
	// +optional
	// +kubebuilder:validation:MaxLength=300
	Service string `json:"service,omitempty"`
	// judge is what the service's judge did for a standalone run whose AI
	// Metrics it scores.
	// +optional
	Judge *JudgeStatus `json:"judge,omitempty"`
	// conditions are Ready (finished: the run is judged), Passed (the
	// verdict: True, False, or Unknown until judged and when
	// Inconclusive), Reconciling and Stalled; with spec.promote, Promoted
	// (True once the System's production version was set).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EvaluationRun is one run of the Evaluation Service and its verdict: the
// operator creates the run once, follows it until it completes (or only
// human scores are missing, or the timeout), reads its scores page by page
// and judges them against each Metric's passing threshold. Records and
// scores never enter etcd, only their counts.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=evrun,categories=evaluation
// +kubebuilder:printcolumn:name="Run ID",type=string,JSONPath=`.status.runId`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Records",type=integer,JSONPath=`.status.records`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EvaluationRun struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the run to make. Immutable.
	// +required
	Spec EvaluationRunSpec `json:"spec"`
	// status is what the operator saw of the run. A new object starts with
	// Ready Unknown and Reconciling True (reason Pending).
	// +optional
	// +kubebuilder:default={conditions: {{type: "Ready", status: "Unknown", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}, {type: "Reconciling", status: "True", reason: "Pending", message: "Waiting for the operator", lastTransitionTime: "1970-01-01T00:00:00Z"}}}
	Status EvaluationRunStatus `json:"status,omitempty"`
}

// EvaluationRunList is a list of EvaluationRuns.
//
// +kubebuilder:object:root=true
type EvaluationRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EvaluationRun `json:"items"`
}
