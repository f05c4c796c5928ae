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

package remote

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Standalone is the Endpoint of every standalone service.
const Standalone = "standalone"

// Defaults are the manager's flags: the service objects use when nothing
// else names one, and the defaults of every service.
type Defaults struct {
	// Service is the --api-url service; nil runs standalone. Its limits
	// are Limits, applied here: the Service itself should not wait.
	Service evalapi.Service
	// Limits bound the requests to Service, and to a service whose spec
	// leaves a limit unset.
	Limits Limits
	// DefaultAPIKeySecret names the Secret, in each object's namespace, used
	// when neither the object nor its service names a key.
	DefaultAPIKeySecret string
	// DriftInterval is the time between two reads of a Ready Metric's
	// remote copy; 0 turns drift checks off.
	DriftInterval time.Duration
	// BulkDeleteBatchSize is the number of testcase ids per bulk-delete call.
	BulkDeleteBatchSize int
	// StandaloneURL is the built-in REST server's base URL as the cluster's
	// Pods reach it (--serve-api-url): a standalone run's executor is told
	// it. Empty when unknown.
	StandaloneURL string

	// Services reads EvaluationServices, ClusterEvaluationServices and
	// Namespaces (the manager's cache). Nil resolves every object to the
	// flags, as before the service kinds existed.
	Services client.Reader
	// Workers is the number of reconcile workers of each kind. A service
	// whose MaxInFlight is 0 gets at most half of them in flight, so one
	// slow service leaves the others' objects a worker.
	Workers int
	// AllowPrivateServiceAddresses lets an EvaluationService's URL reach
	// loopback, link-local, unspecified and private addresses.
	AllowPrivateServiceAddresses bool
	// NamespacedServiceHosts, when not empty, are the only hosts an
	// EvaluationService's URL may name: exact names, or *.suffix for any
	// name under suffix.
	NamespacedServiceHosts []string
	// UserAgent is the User-Agent of the service objects' clients; empty
	// sends evalapi's default.
	UserAgent string
}

// Connector resolves the service each object uses.
type Connector struct {
	// live reads from the API server, uncached: key Secrets, and the
	// service a first create goes to (see serviceCheck).
	live     client.Reader
	defaults Defaults
	flags    *service
	services *serviceSet
}

// NewConnector returns a Connector that reads key Secrets, and confirms a
// first create's service, with live (an uncached reader: Secret data is
// never cached, and the cache may lag).
func NewConnector(live client.Reader, d Defaults) *Connector {
	return &Connector{live: live, defaults: d, flags: flagsService(d), services: newServiceSet(live, d)}
}

// Connect resolves obj's service: spec.serviceRef, else the
// EvaluationService named default in obj's namespace (unless it is being
// deleted and obj holds nothing on it), else the ClusterEvaluationService
// named default (when it allows the namespace), else the manager's flags.
// It makes no call and reads no Secret. The Connection is never nil: on
// an error its Service is what status.service should say (see serviceOnError).
func (c *Connector) Connect(ctx context.Context, obj v1alpha1.Object) (*Connection, error) {
	s, err := c.resolve(ctx, obj)
	if err != nil {
		return &Connection{Service: serviceOnError(obj, err)}, err
	}
	conn := &Connection{
		Service:         s.name,
		Endpoint:        s.endpoint,
		local:           s.svc == nil,
		podURL:          s.endpoint,
		MayAdopt:        s.svc == nil || !s.sharedKey || obj.GetAPIKeySecretRef() != nil,
		DriftInterval:   s.driftInterval,
		BulkDeleteBatch: s.bulkDeleteBatch,
		Executor:        s.executor,
		RunPassCriteria: s.runPassCriteria,
		Judge:           s.judge,
		secrets:         c.live,
		confirm:         c.serviceCheck(obj),
		svc:             s.svc,
		gate:            s.gate,
		holder:          obj.GetUID(),
		flow:            obj.GetNamespace(),
		key:             c.keySource(obj, s),
	}
	if conn.local {
		conn.podURL = c.defaults.StandaloneURL
	}
	return conn, nil
}

// keySource is where obj's key is read: obj's own apiKeySecretRef, else
// its service's, else the manager's default Secret in obj's namespace.
func (c *Connector) keySource(obj v1alpha1.Object, s *service) keySource {
	src := keySource{field: v1alpha1.DefaultAPIKeySecretKey, required: s.svc != nil}
	ns, ref := obj.GetNamespace(), obj.GetAPIKeySecretRef()
	if ref == nil && s.keyRef != nil {
		ns, ref = s.keyNamespace, s.keyRef
	}
	switch {
	case ref != nil:
		return secretKey(ns, *ref, src.required)
	case c.defaults.DefaultAPIKeySecret != "":
		src.ref = &types.NamespacedName{Namespace: ns, Name: c.defaults.DefaultAPIKeySecret}
	}
	return src
}

// secretKey is the key in ref's Secret in namespace, its default data key
// when ref names none.
func secretKey(namespace string, ref v1alpha1.SecretKeySelector, required bool) keySource {
	src := keySource{ref: &types.NamespacedName{Namespace: namespace, Name: ref.Name},
		field: v1alpha1.DefaultAPIKeySecretKey, required: required}
	if ref.Key != "" {
		src.field = ref.Key
	}
	return src
}

// Probe sends the service's cheapest authenticated call, GET
// /projects?limit=1, with the service's own key, through the client,
// transport and limits its objects' calls use: a namespaced service's
// address rules and allowed hosts hold for the probe too. so must name a
// key. A service that cannot be built is a *ServiceError, a key that cannot
// be used a *KeyError, a turn not yet due a *Throttled.
func (c *Connector) Probe(ctx context.Context, so v1alpha1.ServiceObject) error {
	s, err := c.services.service(so)
	if err != nil {
		return err
	}
	namespace, ref := so.GetKeySecret()
	key, err := secretKey(namespace, *ref, true).read(ctx, c.live)
	if err != nil {
		return err
	}
	prober, ok := s.svc.(interface {
		ProbeProjects(context.Context, evalapi.APIKey) error
	})
	if !ok {
		return &ServiceError{Reason: v1alpha1.ReasonRejected, Message: s.name + " cannot be probed"}
	}
	release, err := s.gate.admit(so.GetUID())
	if err != nil {
		return err
	}
	defer release()
	return prober.ProbeProjects(ctx, key)
}

// KeySecretName names the Secret, in obj's namespace, that holds obj's
// key when its service names none, or "": obj's own apiKeySecretRef, else
// the default one.
func (c *Connector) KeySecretName(obj v1alpha1.Object) string {
	if ref := obj.GetAPIKeySecretRef(); ref != nil {
		return ref.Name
	}
	return c.defaults.DefaultAPIKeySecret
}

// Connection is one object's resolved service.
type Connection struct {
	// Service names the service connection: "EvaluationService/<name>",
	// "ClusterEvaluationService/<name>", v1alpha1.ResolvedServiceFlags or
	// v1alpha1.ResolvedServiceStandalone.
	Service string
	// Endpoint is the service's normalised base URL, or Standalone: the
	// service a remote id belongs to.
	Endpoint string
	// MayAdopt is false when the object uses a ClusterEvaluationService's
	// own key, which every namespace the service allows shares, and the
	// service does not allow adoption: the object may then act only on
	// remote ids it created itself.
	MayAdopt bool
	// DriftInterval is the time between two reads of a Ready Metric's
	// remote copy; 0 when drift checks are off or there is no remote copy.
	DriftInterval time.Duration
	// BulkDeleteBatch is the number of testcase ids per bulk-delete call;
	// 0 sends them all in one (there is no progress to checkpoint).
	BulkDeleteBatch int
	// Executor is what the service grants an EvaluationRun's executor
	// Pods (spec.executor); nil when it grants nothing beyond the defaults,
	// as the manager's flags never do.
	Executor *v1alpha1.ExecutorGrant
	// RunPassCriteria are a standalone service's passCriteria for the runs
	// the REST server creates; nil for the defaults.
	RunPassCriteria *v1alpha1.PassCriteria
	// Judge scores the AI Metrics of a standalone service's runs; nil when
	// the service names none (the team's code writes those scores).
	Judge *Judge

	// local is true when the cluster is the system of record (a standalone
	// service): there is no remote copy of anything.
	local bool
	// podURL is the base URL a Pod calls the service at.
	podURL  string
	secrets client.Reader
	svc     evalapi.Service
	gate    *gate
	holder  types.UID
	flow    string
	key     keySource
	// confirm is checked before the Client's first create; nil checks nothing.
	confirm func(context.Context) error
}

// PodURL is the base URL a Pod of the cluster (an executor) calls the
// service at: the service's own, or for a standalone service the REST
// server's (Defaults.StandaloneURL); "" when the operator is not told it.
func (c *Connection) PodURL() string { return c.podURL }

// KeySecret is the Secret and its data key the object's key is read from;
// ok is false when the object has none.
func (c *Connection) KeySecret() (secret types.NamespacedName, key string, ok bool) {
	if c.key.ref == nil {
		return types.NamespacedName{}, "", false
	}
	return *c.key.ref, c.key.field, true
}

// BulkDeleteCalls is how many calls deleting ids testcases sends the
// service: one per batch, none where the service is standalone.
func (c *Connection) BulkDeleteCalls(ids int) int {
	switch {
	case c.local || ids == 0:
		return 0
	case c.BulkDeleteBatch <= 0:
		return 1
	}
	return (ids + c.BulkDeleteBatch - 1) / c.BulkDeleteBatch
}

// Client returns the Client that acts for the object in one reconcile (the
// kinds' clients, Metric, Testset, Run and Deletion, are cut from it). The
// object's key is read at the first call that sends it; a key that cannot
// be used fails that call with a *KeyError before anything is sent. Its
// first create (or BeforeCreate) is held back with a *CacheLag while the
// cache does not show the namespace's service as the API server does.
func (c *Connection) Client() Client {
	key := &lazyKey{source: c.key, secrets: c.secrets}
	confirm := &confirmation{check: c.confirm}
	if c.local {
		return standalone{key: key, confirm: confirm}
	}
	return &httpClient{svc: c.svc, key: key, gate: c.gate, holder: c.holder, flow: c.flow, confirm: confirm}
}
