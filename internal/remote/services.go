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
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// ServiceError is an object's service that cannot be used: no call is
// made and the object waits for the service to change (the service watch
// re-triggers it). Reason is the object's condition reason.
type ServiceError struct {
	Reason  string
	Message string
}

func (e *ServiceError) Error() string { return e.Message }

// service is one resolved service, shared by the objects that use it.
type service struct {
	// name is what status.service shows.
	name string
	// endpoint is the normalised base URL, or Standalone.
	endpoint string
	// svc is nil for a standalone service.
	svc             evalapi.Service
	gate            *gate
	runPassCriteria *v1alpha1.PassCriteria
	driftInterval   time.Duration
	bulkDeleteBatch int
	// keyNamespace and keyRef name the service's key, nil when it names none.
	keyNamespace string
	keyRef       *v1alpha1.SecretKeySelector
	// sharedKey is set when objects using keyRef must not adopt remote ids:
	// the key is a cluster service's, one identity for every namespace.
	sharedKey bool
	// executor is what the service grants its runs' executors; nil grants
	// the defaults.
	executor *v1alpha1.ExecutorGrant
	// judge scores a standalone service's AI Metrics; nil for none.
	judge *Judge
	// version is the service object's UID and generation it was built from.
	version string
	// close releases the service's idle connections.
	close func()
}

// flagsService is the service of the manager's flags.
func flagsService(d Defaults) *service {
	s := &service{name: v1alpha1.ResolvedServiceStandalone, endpoint: Standalone, svc: d.Service, close: func() {}}
	if d.Service == nil {
		return s
	}
	s.name, s.endpoint = v1alpha1.ResolvedServiceFlags, "--api-url"
	if b, ok := d.Service.(interface{ BaseURL() string }); ok {
		s.endpoint = NormalizeURL(b.BaseURL())
	}
	s.gate = newGate(s.name, shared(d.Limits, d.Workers))
	s.driftInterval = d.DriftInterval
	s.bulkDeleteBatch = d.BulkDeleteBatchSize
	return s
}

// NewFlagsService is the service of --api-url, with its per-request
// timeout (Defaults.Limits bound its requests), or nil for no URL: the
// manager runs standalone.
func NewFlagsService(baseURL string, timeout time.Duration) (evalapi.Service, error) {
	if baseURL == "" {
		return nil, nil
	}
	return evalapi.NewClient(evalapi.Options{BaseURL: baseURL, Timeout: timeout})
}

// NormalizeURL is the form of a base URL that tells two services apart:
// scheme and host in lower case, no default port, no user info, no
// trailing slash. An unparsable URL is returned as it is.
func NormalizeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return raw
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/")
}

// Endpoint is the endpoint of a service object, as Connection.Endpoint
// names it: its normalised URL, or Standalone.
func Endpoint(so v1alpha1.ServiceObject) string {
	if spec := so.GetConnection(); spec.Standalone == nil {
		return NormalizeURL(string(spec.URL))
	}
	return Standalone
}

// serviceOnError is what status.service says of obj when resolving its
// service failed with err: the service it asks for when that is missing;
// none when the service refuses obj's namespace, so that a refused
// namespace neither uses nor holds it; unchanged on a passing failure.
func serviceOnError(obj v1alpha1.Object, err error) string {
	var se *ServiceError
	switch {
	case !errors.As(err, &se):
		return obj.GetResolvedService()
	case se.Reason == v1alpha1.ReasonServiceNotAllowed:
		return ""
	}
	if ref := obj.GetServiceRef(); ref != nil {
		return ref.String()
	}
	return ""
}

// serviceSet builds and keeps the services of the two kinds, one client,
// gate and transport each, rebuilt when the service's spec changes.
type serviceSet struct {
	reader client.Reader
	// live reads judges' key Secrets, uncached.
	live     client.Reader
	defaults Defaults

	mu    sync.Mutex
	built map[string]*service
}

func newServiceSet(live client.Reader, d Defaults) *serviceSet {
	return &serviceSet{reader: d.Services, live: live, defaults: d, built: map[string]*service{}}
}

// resolve finds obj's service (see Connect).
func (c *Connector) resolve(ctx context.Context, obj v1alpha1.Object) (*service, error) {
	set := c.services
	if ref := obj.GetServiceRef(); ref != nil {
		return c.byRef(ctx, *ref, obj.GetNamespace(), ": create it or change spec.serviceRef")
	}
	if set.reader == nil {
		return c.flags, nil
	}
	for _, kind := range []v1alpha1.ServiceKind{v1alpha1.KindEvaluationService, v1alpha1.KindClusterEvaluationService} {
		so, err := set.get(ctx, set.reader, kind, obj.GetNamespace(), v1alpha1.DefaultServiceName)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, err
		}
		if !so.GetDeletionTimestamp().IsZero() && obj.GetAnnotations()[v1alpha1.ServiceAnnotation] != Endpoint(so) {
			// A default on its way out keeps only the objects whose remote
			// ids belong to it; it captures no other.
			continue
		}
		// A default that does not allow the namespace is not its default.
		if ok, err := set.allows(ctx, so, obj.GetNamespace()); err != nil {
			return nil, err
		} else if ok {
			return set.service(so)
		}
	}
	return c.flags, nil
}

// byRef is the service ref names for namespace: it must exist and allow
// namespace. hint ends the message of a service that is not found.
func (c *Connector) byRef(ctx context.Context, ref v1alpha1.ServiceReference, namespace, hint string) (*service, error) {
	set := c.services
	if set.reader == nil {
		return nil, &ServiceError{Reason: v1alpha1.ReasonServiceNotFound,
			Message: ref.String() + " cannot be used: this operator resolves no service kinds"}
	}
	so, err := set.get(ctx, set.reader, ref.Kind, namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, notFound(ref, namespace, hint)
	case err != nil:
		return nil, err
	}
	if ok, err := set.allows(ctx, so, namespace); err != nil || !ok {
		return nil, notAllowed(err, ref, namespace)
	}
	return set.service(so)
}

func notFound(ref v1alpha1.ServiceReference, namespace, hint string) *ServiceError {
	where := ""
	if ref.Kind == v1alpha1.KindEvaluationService {
		where = " in namespace " + namespace
	}
	return &ServiceError{Reason: v1alpha1.ReasonServiceNotFound,
		Message: fmt.Sprintf("%s not found%s%s", ref, where, hint)}
}

func notAllowed(err error, ref v1alpha1.ServiceReference, namespace string) error {
	if err != nil {
		return err
	}
	return &ServiceError{Reason: v1alpha1.ReasonServiceNotAllowed,
		Message: fmt.Sprintf("%s does not allow namespace %s: its spec.namespaces and spec.namespaceSelector leave it out",
			ref, namespace)}
}

// get reads the service of kind named name with reader (the cache, or the
// API server); namespace matters to the namespaced kind only.
func (s *serviceSet) get(ctx context.Context, reader client.Reader, kind v1alpha1.ServiceKind, namespace, name string) (
	v1alpha1.ServiceObject, error,
) {
	var obj v1alpha1.ServiceObject
	key := client.ObjectKey{Name: name}
	if kind == v1alpha1.KindClusterEvaluationService {
		obj = &v1alpha1.ClusterEvaluationService{}
	} else {
		obj = &v1alpha1.EvaluationService{}
		key.Namespace = namespace
	}
	if err := reader.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, err
		}
		return nil, fmt.Errorf("reading %s %s: %w", kind, name, err)
	}
	return obj, nil
}

// allows reports whether so may serve namespace: a namespaced service
// serves its own; a cluster service the namespaces it lists or selects, or
// every namespace when it does neither.
func (s *serviceSet) allows(ctx context.Context, so v1alpha1.ServiceObject, namespace string) (bool, error) {
	ces, ok := so.(*v1alpha1.ClusterEvaluationService)
	if !ok {
		return so.GetNamespace() == namespace, nil
	}
	spec := ces.Spec
	if len(spec.Namespaces) == 0 && spec.NamespaceSelector == nil {
		return true, nil
	}
	if slices.Contains(spec.Namespaces, namespace) {
		return true, nil
	}
	if spec.NamespaceSelector == nil {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(spec.NamespaceSelector)
	if err != nil {
		// Admission keeps such selectors out; refuse rather than guess.
		return false, nil //nolint:nilerr // an invalid selector selects nothing
	}
	var ns corev1.Namespace
	if err := s.reader.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
		return false, fmt.Errorf("reading namespace %s for %s's namespaceSelector: %w", namespace, ces.Name, err)
	}
	return sel.Matches(labels.Set(ns.Labels)), nil
}

// service returns so's built service, building it when so is new or changed.
func (s *serviceSet) service(so v1alpha1.ServiceObject) (*service, error) {
	id := ServiceKey(so)
	version := string(so.GetUID()) + "/" + fmt.Sprint(so.GetGeneration())
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.built[id]; ok && b.version == version {
		return b, nil
	}
	b, err := s.build(so)
	if err != nil {
		return nil, err
	}
	b.version = version
	if old, ok := s.built[id]; ok {
		old.close()
	}
	s.built[id] = b
	return b, nil
}

// build makes the client, transport and gate of so.
func (s *serviceSet) build(so v1alpha1.ServiceObject) (*service, error) {
	spec := so.GetConnection()
	_, namespaced := so.(*v1alpha1.EvaluationService)
	kind := v1alpha1.KindClusterEvaluationService
	if namespaced {
		kind = v1alpha1.KindEvaluationService
	}
	b := &service{name: v1alpha1.ServiceReference{Kind: kind, Name: so.GetName()}.String(), endpoint: Standalone,
		close: func() {}}
	b.keyNamespace, b.keyRef = so.GetKeySecret()
	b.executor = spec.Executor.DeepCopy()
	if spec.Standalone != nil {
		b.runPassCriteria = spec.Standalone.RunPassCriteria.DeepCopy()
		j, err := s.buildJudge(so, b.name, namespaced)
		b.judge = j
		if j != nil {
			b.close = j.CloseIdleConnections
		}
		return b, err
	}
	b.sharedKey = so.SharesKeyForAdoption()
	limits := s.defaults.Limits
	l := spec.Limits
	if l.RequestsPerSecond != nil {
		limits.QPS = float64(*l.RequestsPerSecond)
	}
	if l.Burst != nil {
		limits.Burst = int(*l.Burst)
	}
	if l.MaxInFlight != nil {
		limits.MaxInFlight = int(*l.MaxInFlight)
	}
	if l.Timeout != nil {
		limits.Timeout = l.Timeout.Duration
	}
	b.driftInterval = s.defaults.DriftInterval
	if l.DriftInterval != nil {
		b.driftInterval = l.DriftInterval.Duration
	}
	b.bulkDeleteBatch = s.defaults.BulkDeleteBatchSize
	// Cluster services are the administrator's; a namespaced one is chosen
	// by whoever may edit its namespace and must not reach into the cluster.
	if namespaced && !HostAllowed(string(spec.URL), s.defaults.NamespacedServiceHosts) {
		return nil, &ServiceError{Reason: v1alpha1.ReasonRejected, Message: fmt.Sprintf(
			"%s: the host of url is not one the operator allows namespaced services (--namespaced-service-hosts %s)",
			b.name, strings.Join(s.defaults.NamespacedServiceHosts, ","))}
	}
	t, err := NewTransport(TransportOptions{CABundle: spec.CABundle,
		RefusePrivate: namespaced && !s.defaults.AllowPrivateServiceAddresses})
	if err != nil {
		return nil, &ServiceError{Reason: v1alpha1.ReasonRejected, Message: b.name + ": caBundle: " + err.Error()}
	}
	c, err := evalapi.NewClient(evalapi.Options{BaseURL: string(spec.URL), HTTPClient: &http.Client{Transport: t},
		Timeout: limits.Timeout, MetricsLabel: ServiceKey(so), UserAgent: s.defaults.UserAgent})
	if err != nil {
		return nil, &ServiceError{Reason: v1alpha1.ReasonRejected, Message: b.name + ": " + err.Error()}
	}
	b.svc, b.endpoint = c, Endpoint(so)
	b.gate = newGate(b.name, shared(limits, s.defaults.Workers))
	b.close = t.CloseIdleConnections
	return b, nil
}

// HostAllowed reports whether rawURL's host is one of hosts (an exact
// name, or *.suffix for the names under suffix); every host is when hosts
// is empty.
func HostAllowed(rawURL string, hosts []string) bool {
	if len(hosts) == 0 {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return slices.ContainsFunc(hosts, func(h string) bool {
		h = strings.ToLower(h)
		if suffix, ok := strings.CutPrefix(h, "*."); ok {
			return strings.HasSuffix(host, "."+suffix)
		}
		return host == h
	})
}

// shared gives limits without a cap on requests in flight half of the
// workers as their cap.
func shared(l Limits, workers int) Limits {
	if l.MaxInFlight <= 0 && workers > 0 {
		l.MaxInFlight = max(1, workers/2)
	}
	return l
}

// ServiceKey identifies a service object among both kinds:
// "ClusterEvaluationService/<name>" or "EvaluationService/<namespace>/<name>".
func ServiceKey(so metav1.Object) string {
	if so.GetNamespace() == "" {
		return string(v1alpha1.KindClusterEvaluationService) + "/" + so.GetName()
	}
	return string(v1alpha1.KindEvaluationService) + "/" + so.GetNamespace() + "/" + so.GetName()
}

// UsersKey is the ServiceKey of the service obj resolved to (its
// status.service), or "" for the manager's flags (ManagerFlags or
// Standalone, which hold no "/").
func UsersKey(obj v1alpha1.Object) string {
	kind, name, ok := strings.Cut(obj.GetResolvedService(), "/")
	switch {
	case !ok:
		return ""
	case kind == string(v1alpha1.KindClusterEvaluationService):
		return kind + "/" + name
	}
	return kind + "/" + obj.GetNamespace() + "/" + name
}

// Forget drops the built service of a service object that is gone.
func (c *Connector) Forget(key types.NamespacedName) {
	id := ServiceKey(&metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name})
	c.services.mu.Lock()
	defer c.services.mu.Unlock()
	if b, ok := c.services.built[id]; ok {
		b.close()
		delete(c.services.built, id)
	}
}
