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

// Package restapi is the operator's optional built-in REST server. It serves
// the Evaluation Service API's operations under /api/v2, so the service's
// SDKs and curl can use the cluster as the service: each request reads or
// writes custom resources (Metric, TestcaseDeletion, TestsetDeletion) in the
// namespace of the caller's API key, and a write is answered from its
// resource once the reconciler has processed it (in standalone mode, a
// create that needs no reconciler as soon as it is committed).
package restapi

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/restapi/rollout"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
)

// The REST server's reads and updates. What only it does, create the three
// kinds and delete Metrics, is in config/rest/role.yaml, which the
// installers grant only with the REST server on: no marker here, so the
// generated config/rbac/role.yaml is what the manager needs without it.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;watch
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=metrics;testsets,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=testsetdeletions;testcasedeletions,verbs=get;list;watch;delete

// Defaults of Options.
const (
	DefaultSyncTimeout = 10 * time.Second
	// DefaultMaxBodyBytes is the largest valid request (a bulk-delete of
	// 10,000 ids of 128 characters, 1.31 MB; see TestMaxBodyBytes, which
	// derives it from the CRDs) plus a margin.
	DefaultMaxBodyBytes = 3 << 19
	DefaultDeletionTTL  = 24 * time.Hour
	// DefaultMaxInflight is what a 2-core pod with a 256 Mi limit holds
	// (see docs/reliability.md).
	DefaultMaxInflight = 64
	// DefaultTenantQPS and DefaultTenantBurst are each tenant's write budget
	// when the cluster is the system of record: a sequential SDK client is
	// never refused below 50 writes a second, and the server, which answers
	// a few hundred standalone creates a second, still holds several such
	// tenants. With a service, the manager lowers it to a share of the
	// service's budget (see cmd).
	DefaultTenantQPS   = 50
	DefaultTenantBurst = 100
	// DefaultTenantReadQPS and DefaultTenantReadBurst are each tenant's read
	// budget: reads are served from the cache, so a sequential client is
	// never refused below 200 a second.
	DefaultTenantReadQPS   = 250
	DefaultTenantReadBurst = 500
)

// ShutdownMargin is how long, beyond SyncTimeout, a stopping server waits
// for the requests in flight.
const ShutdownMargin = 5 * time.Second

// maxDeletionTTL is the largest ttlSecondsAfterFinished the CRDs accept.
const maxDeletionTTL = 365 * 24 * time.Hour

// Connector resolves the service an object uses: remote.Connector.
type Connector interface {
	Connect(ctx context.Context, obj evaluationv1alpha1.Object) (*remote.Connection, error)
}

// Options configure a Server.
type Options struct {
	// Addr is the TCP address to listen on, e.g. ":8082" or "127.0.0.1:0".
	// Ignored when Listener is set.
	Addr string
	// Listener, when set, is used instead of listening on Addr; tests pass a
	// listener on 127.0.0.1:0 and read its address.
	Listener net.Listener

	// Client creates and deletes the resources; writes go to the API server.
	// The manager's client.
	Client client.Client
	// Cache is where the server reads the resources and whose informers wake
	// the waiting requests. The manager's cache, which the reconcilers
	// already fill, so the server adds no watch of its own for these kinds.
	Cache cache.Cache
	// Reader reads a Metric whole from the API server when the cache holds
	// it trimmed (see internal/trimcache): the manager's API reader.
	// Defaults to Cache, for a cache without that transform.
	Reader client.Reader
	// KubeClient lists and watches the API key Secrets, selected by label so
	// that no other Secret is cached.
	KubeClient kubernetes.Interface

	// Namespaces, when not empty, are the only namespaces whose key Secrets
	// are read (--watch-namespaces); the Cache must cover them.
	Namespaces []string
	// NamespaceSelector selects the namespaces whose keys the server
	// accepts (--rest-namespace-selector); nil or empty serves all.
	NamespaceSelector labels.Selector
	// Connector resolves the service each request's resource uses (the
	// reconcilers' remote.Connector). Where it is standalone (the cluster
	// is the system of record), a POST metric assigns the Metric's id
	// itself and is answered once the create is committed, without waiting
	// for the reconciler, which has nothing left to decide. Nil: every
	// request waits for the reconciler.
	Connector Connector

	// SyncTimeout bounds how long a request waits for the reconciler
	// (--rest-sync-timeout). Default 10s.
	SyncTimeout time.Duration
	// MaxBodyBytes bounds request bodies. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxInflight bounds the requests the server handles at once
	// (--rest-max-inflight); more are answered 429. Default DefaultMaxInflight.
	MaxInflight int
	// TenantQPS and TenantBurst are the token bucket of each tenant's
	// writes (POST, PATCH, DELETE), the tenant being the namespace of the
	// key's Secret (--rest-tenant-qps, --rest-tenant-burst); requests over it
	// are answered 429. Defaults DefaultTenantQPS and DefaultTenantBurst.
	TenantQPS   float64
	TenantBurst int
	// TenantReadQPS and TenantReadBurst are the bucket of each tenant's
	// reads (GET) (--rest-tenant-read-qps, --rest-tenant-read-burst).
	// Defaults DefaultTenantReadQPS and DefaultTenantReadBurst.
	TenantReadQPS   float64
	TenantReadBurst int
	// DeletionTTL is the ttlSecondsAfterFinished of the deletions the server
	// creates: long enough for Idempotency-Key retries to find them, short
	// enough that they do not pile up. Default 24h; at most 365 days.
	DeletionTTL time.Duration
	// Budget bounds the objects of each kind in a namespace; a create past
	// it is refused before it is sent. A kind it does not set takes
	// tenancy.DefaultBudget's limit.
	Budget tenancy.Budget

	// TLSCertFile and TLSKeyFile, when both set, make the server speak TLS.
	// The files are reloaded when they change (cert-manager rotation).
	TLSCertFile string
	TLSKeyFile  string
	// TLSOpts adjust the TLS configuration. The server speaks HTTP/1.1
	// only, whatever they set in NextProtos.
	TLSOpts []func(*tls.Config)
	// DrainDelay is how long a stopping server keeps serving, with its
	// ReadyCheck failing and every answer closing its connection, before it
	// stops accepting (--rest-drain-delay): the time a Service's endpoints
	// and the load balancers in front of them take to stop sending new
	// connections to a terminating pod. 0 stops accepting at once.
	DrainDelay time.Duration

	// Now is the server's clock: the tenants' token buckets, the writes'
	// ledger and the requests' durations. time.Now by default.
	Now func() time.Time

	// Logger logs requests (at V(1), without headers) and failures. Defaults
	// to controller-runtime's logger named "restapi".
	Logger logr.Logger
}

// Server is the built-in REST server. It is a manager.Runnable that every
// replica runs (it needs no leader). Start it once.
type Server struct {
	opts      Options
	log       logr.Logger
	keys      *tenancy.Keyring
	quotas    *tenancy.Quotas
	admission *tenancy.Admission
	flagger   *rollout.Flagger
	waiters   *waiters
	unseen    *unseenCreates
	endpoints []*endpoint
	handler   http.Handler
	// serving is set while the listener is open and the keys are listed.
	serving atomic.Bool
	// draining is set from the stop until the server has shut down.
	draining atomic.Bool
}

// New checks opts, fills in the defaults and returns a Server.
func New(opts Options) (*Server, error) {
	if opts.DrainDelay < 0 {
		return nil, errors.New("restapi: DrainDelay must not be negative")
	}
	if err := defaultOptions(&opts); err != nil {
		return nil, err
	}
	if err := defaultAdmission(&opts); err != nil {
		return nil, err
	}
	tenants, err := tenancy.NewTenants(opts.KubeClient, opts.NamespaceSelector)
	if err != nil {
		return nil, err
	}
	keys, err := tenancy.NewKeyring(opts.KubeClient, opts.Namespaces, tenants)
	if err != nil {
		return nil, err
	}
	if err := indexResources(context.Background(), opts.Cache); err != nil {
		return nil, err
	}
	doc, err := OpenAPIDocument()
	if err != nil {
		return nil, err
	}
	ttl := ttlSeconds(opts.DeletionTTL)
	quotas := tenancy.NewQuotas(opts.Budget, opts.Cache, opts.Now)
	s := &Server{
		opts:    opts,
		log:     opts.Logger,
		keys:    keys,
		waiters: newWaiters(),
		unseen:  newUnseenCreates(opts.SyncTimeout),
		quotas:  quotas,
		admission: tenancy.NewAdmission(opts.MaxInflight, tenancy.Rate{QPS: opts.TenantQPS, Burst: opts.TenantBurst},
			tenancy.Rate{QPS: opts.TenantReadQPS, Burst: opts.TenantReadBurst}, opts.Now),
		flagger: &rollout.Flagger{Cache: opts.Cache, Reader: opts.Reader, Client: opts.Client, Quotas: quotas,
			Log: opts.Logger},
		endpoints: []*endpoint{createMetric(), createTestset(), bulkDeleteTestcases(ttl), deleteTestset(ttl)},
	}
	s.handler = s.routes(doc)
	return s, nil
}

func defaultOptions(o *Options) error {
	switch {
	case o.Client == nil || o.Cache == nil || o.KubeClient == nil:
		return errors.New("restapi: Client, Cache and KubeClient are required")
	case o.Addr == "" && o.Listener == nil:
		return errors.New("restapi: Addr or Listener is required")
	case (o.TLSCertFile == "") != (o.TLSKeyFile == ""):
		return errors.New("restapi: TLSCertFile and TLSKeyFile must be set together")
	case o.SyncTimeout < 0 || o.MaxBodyBytes < 0 || o.DeletionTTL < 0 || o.DeletionTTL > maxDeletionTTL:
		return errors.New("restapi: SyncTimeout, MaxBodyBytes and DeletionTTL must not be negative; DeletionTTL is at most 365 days")
	}
	o.Reader = cmp.Or[client.Reader](o.Reader, o.Cache)
	if o.SyncTimeout == 0 {
		o.SyncTimeout = DefaultSyncTimeout
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.DeletionTTL == 0 {
		o.DeletionTTL = DefaultDeletionTTL
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logf.Log.WithName("restapi")
	}
	return nil
}

// defaultAdmission checks the admission options and fills in their defaults.
func defaultAdmission(o *Options) error {
	if o.MaxInflight < 0 || o.TenantQPS < 0 || o.TenantBurst < 0 || o.TenantReadQPS < 0 || o.TenantReadBurst < 0 {
		return errors.New("restapi: MaxInflight and the tenant budgets must not be negative")
	}
	if o.MaxInflight == 0 {
		o.MaxInflight = DefaultMaxInflight
	}
	if o.TenantQPS == 0 {
		o.TenantQPS = DefaultTenantQPS
	}
	if o.TenantBurst == 0 {
		o.TenantBurst = DefaultTenantBurst
	}
	if o.TenantReadQPS == 0 {
		o.TenantReadQPS = DefaultTenantReadQPS
	}
	if o.TenantReadBurst == 0 {
		o.TenantReadBurst = DefaultTenantReadBurst
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// NeedLeaderElection is false: every replica serves requests.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx is done, then drains (see DrainDelay), stops
// accepting requests and waits for those in flight (bounded by SyncTimeout
// plus a margin).
func (s *Server) Start(ctx context.Context) error {
	ln, err := s.listen(ctx)
	if err != nil {
		return err
	}
	unwatch, err := s.startWatching(ctx)
	if err != nil {
		_ = ln.Close() // never served
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return err
	}
	defer unwatch()
	s.serving.Store(true)
	defer s.serving.Store(false)
	srv := &http.Server{
		Handler:           s.closingWhileDraining(s.handler),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      s.opts.SyncTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		// "OPTIONS *" reaches the handler, which answers it with an ApiError
		// like any other request the API does not define.
		DisableGeneralOptionsHandler: true,
	}
	s.log.Info("Serving the Evaluation Service API", "address", ln.Addr().String(), "basePath", BasePath,
		"tls", s.opts.TLSCertFile != "")

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving the REST API: %w", err)
	case <-ctx.Done():
	}
	s.drain()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.opts.SyncTimeout+ShutdownMargin)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down the REST API: %w", err)
	}
	return nil
}

// ReadyCheck is a healthz.Checker for the manager's /readyz: it fails until
// the server listens and has listed the API keys, and again from the moment
// it is asked to stop, while it still serves through DrainDelay.
func (s *Server) ReadyCheck(*http.Request) error {
	if s.draining.Load() {
		return errors.New("the REST server is draining before it stops")
	}
	if !s.serving.Load() {
		return errors.New("the REST server is not serving yet")
	}
	return nil
}

// drain marks the server not ready and keeps it serving for DrainDelay, so
// that a rolling update or a node drain refuses no connection the Service
// still routes here.
func (s *Server) drain() {
	s.draining.Store(true)
	if s.opts.DrainDelay <= 0 {
		return
	}
	s.log.Info("Draining the REST API: not ready, still serving", "delay", s.opts.DrainDelay.String())
	time.Sleep(s.opts.DrainDelay)
}

// closingWhileDraining has every answer given while draining close its
// connection, so that clients holding keep-alive connections to this pod
// reconnect, through the Service, to a ready one. Idle connections are left
// alone until the shutdown: closing one under a client that is just sending
// on it would fail that request.
func (s *Server) closingWhileDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// listen opens the listener, which serves TLS when a certificate is
// configured, and answers with ApiErrors where net/http would answer with
// plain text (see protocol.go).
func (s *Server) listen(ctx context.Context) (net.Listener, error) {
	ln := s.opts.Listener
	if ln == nil {
		var err error
		if ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", s.opts.Addr); err != nil {
			return nil, fmt.Errorf("listening on %s: %w", s.opts.Addr, err)
		}
	}
	if s.opts.TLSCertFile == "" {
		return answeringListener{Listener: ln}, nil
	}
	watcher, err := certwatcher.New(s.opts.TLSCertFile, s.opts.TLSKeyFile)
	if err != nil {
		_ = ln.Close() // the certificate error is the one worth reporting
		return nil, fmt.Errorf("loading the REST API certificate: %w", err)
	}
	go func() {
		if err := watcher.Start(ctx); err != nil {
			s.log.Error(err, "Watching the REST API certificate failed")
		}
	}()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: watcher.GetCertificate}
	for _, opt := range s.opts.TLSOpts {
		opt(cfg)
	}
	// The server speaks HTTP/1.1 only: net/http hands a connection to
	// HTTP/2 only when it is a *tls.Conn, which answeringListener's are not.
	cfg.NextProtos = []string{"http/1.1"}
	return answeringListener{Listener: ln, tls: cfg}, nil
}

// startWatching hooks the waiters onto the resources' informers and lists the
// API keys, so that no request is answered before the server can see both;
// the returned func stops watching the resources.
func (s *Server) startWatching(ctx context.Context) (func(), error) {
	unwatch, err := s.watchResources(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.keys.Run(ctx); err != nil {
		unwatch()
		return nil, err
	}
	return unwatch, nil
}

// watchResources adds the waiters' event handler to the cache's informer of
// each kind the server creates, and unseen's to those a client reads back;
// the returned func removes them again.
func (s *Server) watchResources(ctx context.Context) (func(), error) {
	var removers []func()
	unwatch := func() {
		for _, remove := range removers {
			remove()
		}
	}
	// The runs, Systems and versions are created by handlers of their own,
	// not an endpoint, and read back.
	for _, ep := range append([]*endpoint{runEndpoint, systemEndpoint, versionEndpoint}, s.endpoints...) {
		informer, err := s.opts.Cache.GetInformer(ctx, ep.newObject())
		if err != nil {
			unwatch()
			return nil, fmt.Errorf("getting the %s informer: %w", ep.kind, err)
		}
		handlers := []toolscache.ResourceEventHandler{s.waiters.handler(ep.kind)}
		if ep.local != nil && ep.local.readable {
			handlers = append(handlers, s.unseen.handler())
		}
		for _, h := range handlers {
			reg, err := informer.AddEventHandler(h)
			if err != nil {
				unwatch()
				return nil, fmt.Errorf("watching %s: %w", ep.kind, err)
			}
			removers = append(removers, func() { _ = informer.RemoveEventHandler(reg) })
		}
	}
	return unwatch, nil
}
