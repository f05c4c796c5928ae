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

// Command manager runs the eval-operator: the reconcilers of every kind and,
// with --serve-api, the built-in REST server.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/buildinfo"
	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/controller/testset"
	"github.com/eval-operator/eval-operator/internal/metricsauth"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/restapi"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/internal/statemetrics"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// config is the manager's command line.
type config struct {
	apiURL                  string
	serveAPIURL             string
	defaultAPIKeySecret     string
	apiQPS                  float64
	apiBurst                int
	apiMaxInFlight          int
	apiTimeout              time.Duration
	bulkDeleteBatchSize     int
	maxConcurrentReconciles int
	driftInterval           time.Duration

	serveAPI            string
	restSyncTimeout     time.Duration
	restMaxInflight     int
	restTenantQPS       float64
	restTenantBurst     int
	restTenantReadQPS   float64
	restTenantReadBurst int
	restBudget          tenancy.Budget
	kubeQPS             float64
	kubeBurst           int
	tlsCertFile         string
	tlsKeyFile          string
	restDrainDelay      time.Duration

	// Least privilege (issue 11): what the manager may see and trust.
	watchNamespaces        []string
	restNamespaceSelector  string
	allowInsecureAPIURL    bool
	allowPrivateServices   bool
	namespacedServiceHosts []string
	artifactHosts          []string
	artifacts              testset.Artifacts
	testsetLimits          testcases.Limits
	testsetMemory          int64

	metricsAddr             string
	secureMetrics           bool
	metricsCertDir          string
	metricsNamespaceLabel   bool
	enableHTTP2             bool
	probeAddr               string
	pprofAddr               string
	leaderElect             bool
	leaderElectionNamespace string

	printVersion bool
}

// envPrefix prefixes the environment variable of every secret-free flag:
// --api-qps can also be set as EVAL_OPERATOR_API_QPS. A flag on the command
// line wins over its variable.
const envPrefix = "EVAL_OPERATOR_"

func main() {
	// Stack traces only for panics: a failed call to a service is retried
	// and logged as one line, not as a page of goroutine frames.
	// --zap-stacktrace-level brings them back.
	opts := zap.Options{StacktraceLevel: zapcore.PanicLevel}
	cfg, err := parseFlags(flag.CommandLine, os.Args[1:], os.LookupEnv, &opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	if cfg.printVersion {
		fmt.Println(buildinfo.Get())
		return
	}
	ctrl.SetLogger(logr.New(quietSink{zap.New(zap.UseFlagOptions(&opts)).GetSink()}))
	setGCPercent(os.LookupEnv)
	if err := run(cfg); err != nil {
		ctrl.Log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

// parseFlags reads the command line and the environment into a checked config.
func parseFlags(fs *flag.FlagSet, args []string, lookupEnv func(string) (string, bool), zapOpts *zap.Options) (config, error) {
	var c config
	fs.StringVar(&c.apiURL, "api-url", "",
		"Base URL of the Evaluation Service, ending in /api/v2. Empty runs standalone: the cluster is the system of record and ids are assigned locally.")
	fs.StringVar(&c.defaultAPIKeySecret, "default-api-key-secret", "",
		"Name of the Secret (in each object's own namespace, data key apiKey) used by objects without apiKeySecretRef.")
	fs.Float64Var(&c.apiQPS, "api-qps", 20, "Requests per second the operator sends to the Evaluation Service.")
	fs.IntVar(&c.apiBurst, "api-burst", 40, "Requests the operator may send at once above --api-qps.")
	fs.IntVar(&c.apiMaxInFlight, "api-max-in-flight", 0,
		"Requests the operator has in flight to the Evaluation Service at once; 0 means half of --max-concurrent-reconciles, "+
			"so a slow service leaves the workers of other services' objects free. Also the default of a service's limits.maxInFlight.")
	fs.DurationVar(&c.apiTimeout, "api-timeout", 10*time.Second, "Timeout of each request to the Evaluation Service.")
	fs.IntVar(&c.bulkDeleteBatchSize, "bulk-delete-batch-size", 100, "Testcase ids per bulk-delete request (1 to 10000).")
	fs.IntVar(&c.maxConcurrentReconciles, "max-concurrent-reconciles", 8, "Objects of each kind reconciled in parallel.")
	fs.DurationVar(&c.driftInterval, "drift-interval", 10*time.Minute,
		"Time between two reads of a Ready Metric's remote copy, which restore the spec if it was changed outside the cluster; 0 turns drift checks off.")
	fs.StringVar(&c.serveAPI, "serve-api", "",
		"Address of the built-in REST server serving the Evaluation Service API from the cluster, e.g. :8082. Empty disables it.")
	fs.StringVar(&c.serveAPIURL, "serve-api-url", "",
		"The built-in REST server's base URL as the cluster's Pods reach it, e.g. http://eval-operator-api.eval-operator-system.svc:8082/api/v2; "+
			"the executor of a standalone EvaluationRun is told it as EVAL_API_URL. Empty: such an executor is not started.")
	fs.DurationVar(&c.restSyncTimeout, "rest-sync-timeout", 10*time.Second,
		"How long a REST request waits for the reconciler to process the resource it created.")
	fs.IntVar(&c.restMaxInflight, "rest-max-inflight", restapi.DefaultMaxInflight,
		"Requests the REST server handles at once; more are answered 429 with Retry-After.")
	fs.Float64Var(&c.restTenantQPS, "rest-tenant-qps", 0,
		"Writes (POST, PATCH, DELETE) per second the REST server admits from each namespace (the API key's); more are answered 429. "+
			"A bulk-delete counts one per call it sends the service (per --bulk-delete-batch-size ids), "+
			"a create or update of a Metric one per 4 KiB of its texts. "+
			"0 means 50 standalone, and with --api-url a quarter of --api-qps, so no one namespace empties the service's budget.")
	fs.IntVar(&c.restTenantBurst, "rest-tenant-burst", 0,
		"Writes a namespace may send at once above --rest-tenant-qps. 0 means 100 standalone, and with --api-url half of --api-burst.")
	fs.Float64Var(&c.restTenantReadQPS, "rest-tenant-read-qps", restapi.DefaultTenantReadQPS,
		"Reads (GET, served from the cache) per second the REST server admits from each namespace; more are answered 429. "+
			"A Metric read whole from the API server counts one per 4 KiB of its texts.")
	fs.IntVar(&c.restTenantReadBurst, "rest-tenant-read-burst", restapi.DefaultTenantReadBurst,
		"Reads a namespace may send at once above --rest-tenant-read-qps.")
	c.restBudget = tenancy.DefaultBudget()
	addTenantMaxFlags(fs, c.restBudget)
	fs.Float64Var(&c.kubeQPS, "kube-api-qps", 300,
		"Requests per second the manager sends to the Kubernetes API server, all tenants and reconcilers together: "+
			"one tenant's REST requests cannot turn into more than this.")
	fs.IntVar(&c.kubeBurst, "kube-api-burst", 600, "Requests the manager may send to the Kubernetes API server at once above --kube-api-qps.")
	fs.StringVar(&c.tlsCertFile, "tls-cert-file", "", "Certificate file of the REST server; with --tls-key-file it serves HTTPS.")
	fs.StringVar(&c.tlsKeyFile, "tls-key-file", "", "Private key file of the REST server.")
	fs.DurationVar(&c.restDrainDelay, "rest-drain-delay", 5*time.Second,
		"How long a stopping REST server keeps serving, not ready, before it stops accepting: the time the Service's endpoints "+
			"and load balancers take to stop routing to a terminating pod. 0 stops at once.")
	fs.StringVar(&c.metricsAddr, "metrics-bind-address", ":8443",
		"Address of the Prometheus metrics endpoint; 0 disables it. HTTPS with authentication unless --metrics-secure=false.")
	fs.BoolVar(&c.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, allowing only clients authorized by TokenReview and SubjectAccessReview.")
	fs.StringVar(&c.metricsCertDir, "metrics-cert-dir", "",
		"Directory holding tls.crt and tls.key for the metrics endpoint (e.g. a mounted cert-manager Secret, reloaded when it changes); empty serves a self-signed certificate.")
	fs.BoolVar(&c.metricsNamespaceLabel, "metrics-namespace-label", false,
		"Add the object's namespace (label object_namespace) to the evaloperator_objects gauge: one series per namespace and state.")
	fs.BoolVar(&c.enableHTTP2, "enable-http2", false,
		"Allow HTTP/2 on the metrics endpoint (off by default: HTTP/2 rapid reset and stream cancellation attacks).")
	fs.StringVar(&c.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz probes.")
	fs.StringVar(&c.pprofAddr, "pprof-bind-address", "",
		"Address of Go's /debug/pprof profiles, for diagnosing memory and CPU; empty (the default) serves none. "+
			"Bind it to localhost and reach it with kubectl port-forward: it has no authentication.")
	fs.BoolVar(&c.leaderElect, "leader-elect", false, "Elect a leader, so that only one replica reconciles at a time.")
	fs.StringVar(&c.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease; empty means the manager's own namespace.")
	fs.Func("watch-namespaces",
		"Comma-separated namespaces the manager and the REST server watch, and the only ones they need RBAC in; empty means all.",
		func(v string) error { c.watchNamespaces = splitList(v); return nil })
	fs.StringVar(&c.restNamespaceSelector, "rest-namespace-selector", "",
		"Label selector of the namespaces whose API keys the REST server accepts, e.g. eval-operator.dev/rest=enabled; empty means all.")
	fs.BoolVar(&c.allowPrivateServices, "allow-private-service-addresses", false,
		"Let a namespaced EvaluationService reach loopback, link-local, unspecified and private addresses. "+
			"Off, its url cannot be used to reach into the cluster's network; ClusterEvaluationServices are never restricted.")
	fs.Func("namespaced-service-hosts",
		"Comma-separated hosts a namespaced EvaluationService's url may name (api.example.com, or *.example.com for "+
			"the names under it); empty allows any host. ClusterEvaluationServices are never restricted.",
		func(v string) error { c.namespacedServiceHosts = splitList(v); return nil })
	c.artifactHosts = defaultArtifactHosts
	fs.Func("artifact-hosts",
		"Comma-separated hosts, each with its port (host:port) or without it (the URL scheme's own port, 80 or 443), "+
			"a Flux source's artifact URL may name for a Testset's sourceRef to be fetched (*.suffix for "+
			"the names under suffix); defaults to Flux's source-controller in flux-system: "+strings.Join(defaultArtifactHosts, ","),
		func(v string) error { c.artifactHosts = splitList(v); return nil })
	fs.DurationVar(&c.artifacts.Timeout, "artifact-timeout", testset.DefaultArtifactTimeout,
		"Time one fetch of a Flux artifact may take, download and parse, before it is cut off and retried later.")
	fs.Int64Var(&c.artifacts.MaxBytes, "artifact-max-bytes", testset.DefaultArtifactMaxBytes,
		"Bytes of a Flux artifact's tarball the manager reads, decompressed, up to the end of a Testset's file; "+
			"an artifact over it is refused (SourceNotReady).")
	fs.IntVar(&c.testsetLimits.Testcases, "testset-max-testcases", testcases.MaxTestcases,
		"Testcases a Testset's source may hold (at most 1000000); a source with more is refused (SourceNotReady).")
	fs.Int64Var(&c.testsetLimits.Bytes, "testset-max-bytes", testcases.MaxSetBytes,
		"Bytes a Testset's source may hold, its JSON Lines as read and its testcases in canonical form; a larger source "+
			"is refused (SourceNotReady). --testset-memory-bytes must hold two such sets.")
	fs.IntVar(&c.testsetLimits.TestcaseBytes, "testset-max-testcase-bytes", testcases.MaxLineBytes,
		"Bytes of one testcase (one line of JSON Lines) of a Testset's source; a longer one is refused (SourceNotReady).")
	fs.Int64Var(&c.testsetMemory, "testset-memory-bytes", testset.DefaultMemory,
		"Bytes of testcases the Testsets being read and synced may hold at once, half of it one namespace's; a Testset "+
			"that finds no room waits (Reconciling). At least twice the most one set within the --testset-max-* limits "+
			"holds: its canonical testcases, their keys and 96 bytes a testcase (about 41 MiB at the defaults).")
	fs.BoolVar(&c.allowInsecureAPIURL, "allow-insecure-api-url", false,
		"Allow a plain http --api-url to a host other than loopback; the API keys then cross the network unencrypted.")
	fs.BoolVar(&c.printVersion, versionFlag, false, "Print the version, source revision and Go version, and exit.")
	zapOpts.BindFlags(fs)

	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := applyEnv(fs, lookupEnv); err != nil {
		return c, err
	}
	return c, c.validate()
}

// versionFlag has no environment variable: a variable left in a pod's
// environment would stop every start.
const versionFlag = "version"

// applyEnv sets every flag not given on the command line from its
// environment variable, if that is set.
func applyEnv(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		env := envPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v, ok := lookupEnv(env)
		if given[f.Name] || !ok || f.Name == versionFlag {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", env, err))
		}
	})
	return errors.Join(errs...)
}

// checkURLs checks the URLs given: the service's and the REST server's.
func (c *config) checkURLs() []error {
	var errs []error
	if c.apiURL != "" {
		if err := checkAPIURL(c.apiURL, c.allowInsecureAPIURL); err != nil {
			errs = append(errs, err)
		}
	}
	if c.serveAPIURL != "" {
		if err := checkURLForm("--serve-api-url", c.serveAPIURL); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func (c *config) validate() error {
	errs := c.checkURLs()
	if _, err := labels.Parse(c.restNamespaceSelector); err != nil {
		errs = append(errs, fmt.Errorf("--rest-namespace-selector: %w", err))
	}
	if c.apiQPS <= 0 {
		errs = append(errs, fmt.Errorf("--api-qps %v: must be greater than 0", c.apiQPS))
	}
	if c.apiMaxInFlight < 0 {
		errs = append(errs, fmt.Errorf("--api-max-in-flight %d: must not be negative", c.apiMaxInFlight))
	}
	if c.apiBurst < 1 {
		errs = append(errs, fmt.Errorf("--api-burst %d: must be at least 1", c.apiBurst))
	}
	if c.apiTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--api-timeout %s: must be greater than 0", c.apiTimeout))
	}
	if c.bulkDeleteBatchSize < 1 || c.bulkDeleteBatchSize > 10000 {
		errs = append(errs, fmt.Errorf("--bulk-delete-batch-size %d: must be from 1 to 10000", c.bulkDeleteBatchSize))
	}
	if c.maxConcurrentReconciles < 1 {
		errs = append(errs, fmt.Errorf("--max-concurrent-reconciles %d: must be at least 1", c.maxConcurrentReconciles))
	}
	if c.driftInterval < 0 {
		errs = append(errs, fmt.Errorf("--drift-interval %s: must be 0 (off) or more", c.driftInterval))
	}
	if c.restDrainDelay < 0 {
		errs = append(errs, fmt.Errorf("--rest-drain-delay %s: must be 0 or more", c.restDrainDelay))
	}
	if c.restSyncTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--rest-sync-timeout %s: must be greater than 0", c.restSyncTimeout))
	}
	errs = append(errs, c.validateAdmission()...)
	if (c.tlsCertFile == "") != (c.tlsKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-key-file must be given together"))
	}
	return errors.Join(errs...)
}

// splitList splits a comma-separated flag value, dropping blanks.
// defaultArtifactHosts name Flux's source-controller Service in
// flux-system, where Flux installs it, as its artifact URLs spell it (a
// trailing dot is ignored).
var defaultArtifactHosts = []string{
	"source-controller.flux-system.svc.cluster.local", "source-controller.flux-system.svc", "source-controller.flux-system",
}

func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// validateAdmission checks the REST server's admission flags.
func (c *config) validateAdmission() []error {
	var errs []error
	if c.artifacts.Timeout <= 0 || c.artifacts.MaxBytes < 1 {
		errs = append(errs, fmt.Errorf("--artifact-timeout %s, --artifact-max-bytes %d: must be greater than 0",
			c.artifacts.Timeout, c.artifacts.MaxBytes))
	}
	if l := c.testsetLimits; l.Testcases < 1 || l.Testcases > 1_000_000 || l.Bytes < 1 || l.TestcaseBytes < 1 {
		errs = append(errs, fmt.Errorf("--testset-max-testcases %d (1 to 1000000), --testset-max-bytes %d, "+
			"--testset-max-testcase-bytes %d: out of range", l.Testcases, l.Bytes, l.TestcaseBytes))
	} else if least := testset.MinMemory(l); c.testsetMemory < least {
		errs = append(errs, fmt.Errorf("--testset-memory-bytes %d: must be at least %d, twice the most one set "+
			"within the --testset-max-* limits holds, or such a set could never be synced", c.testsetMemory, least))
	}
	if c.restMaxInflight < 1 || c.restTenantReadBurst < 1 {
		errs = append(errs, fmt.Errorf("--rest-max-inflight %d, --rest-tenant-read-burst %d: must be at least 1",
			c.restMaxInflight, c.restTenantReadBurst))
	}
	if c.restTenantBurst < 0 {
		errs = append(errs, fmt.Errorf("--rest-tenant-burst %d: must be 0 (derived) or more", c.restTenantBurst))
	}
	if c.kubeQPS <= 0 || c.kubeBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-qps %v and --kube-api-burst %d: must be greater than 0", c.kubeQPS, c.kubeBurst))
	}
	if c.restTenantQPS < 0 {
		errs = append(errs, fmt.Errorf("--rest-tenant-qps %v: must be 0 (derived) or more", c.restTenantQPS))
	}
	if c.restTenantReadQPS <= 0 {
		errs = append(errs, fmt.Errorf("--rest-tenant-read-qps %v: must be greater than 0", c.restTenantReadQPS))
	}
	return errs
}

// shutdownMargin is the time a stopping manager allows beyond its longest
// request for the writes that record its answer (annotation, status, event).
const shutdownMargin = 5 * time.Second

// gracefulShutdownTimeout is how long a stopping manager waits for its work
// to finish: a create in flight takes up to --api-timeout, and the REST
// server serves on for --rest-drain-delay, then finishes its requests
// within --rest-sync-timeout plus 5s. The pod's
// terminationGracePeriodSeconds must exceed it (the chart derives it from the
// same flags), or a rolling update cuts creates off.
func (c *config) gracefulShutdownTimeout() time.Duration {
	longest := c.apiTimeout
	if c.serveAPI != "" {
		longest = max(longest, c.restDrainDelay+c.restSyncTimeout+restapi.ShutdownMargin)
	}
	return longest + shutdownMargin
}

func run(c config) error {
	log := ctrl.Log.WithName("setup")
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(sourcev1.AddToScheme(scheme))

	var tlsOpts []func(*tls.Config)
	if !c.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(t *tls.Config) { t.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{
		BindAddress:   c.metricsAddr,
		SecureServing: c.secureMetrics,
		CertDir:       c.metricsCertDir,
		TLSOpts:       tlsOpts,
	}
	if c.secureMetrics {
		// Our own TokenReview/SubjectAccessReview filter: controller-runtime's
		// links k8s.io/apiserver and nearly doubles the binary.
		metricsOpts.FilterProvider = metricsauth.FilterProvider
	}

	cfg := ctrl.GetConfigOrDie()
	// controller-runtime leaves the client unlimited (QPS -1), trusting the
	// API server's priority and fairness; but every tenant shares this one
	// service account, so the manager keeps a limit of its own.
	cfg.QPS, cfg.Burst = float32(c.kubeQPS), c.kubeBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsOpts,
		Cache:                         controller.CacheOptions(c.watchNamespaces),
		WebhookServer:                 webhook.NewServer(webhook.Options{TLSOpts: tlsOpts}),
		HealthProbeBindAddress:        c.probeAddr,
		PprofBindAddress:              c.pprofAddr,
		LeaderElection:                c.leaderElect,
		LeaderElectionID:              "eval-operator.evaluation.eval-operator.dev",
		LeaderElectionNamespace:       c.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr.To(c.gracefulShutdownTimeout()),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}

	if err := metrics.Registry.Register(statemetrics.New(mgr.GetCache(), c.metricsNamespaceLabel)); err != nil {
		return fmt.Errorf("registering the object state metrics: %w", err)
	}
	if err := metrics.Registry.Register(statemetrics.NewRunCollector(mgr.GetCache())); err != nil {
		return fmt.Errorf("registering the EvaluationRun metrics: %w", err)
	}
	build := buildinfo.Get()
	if err := metrics.Registry.Register(build.Collector()); err != nil {
		return fmt.Errorf("registering the build info metric: %w", err)
	}

	// Its limits are applied by the connector, which never makes a worker wait.
	svc, err := remote.NewFlagsService(c.apiURL, c.apiTimeout)
	if err != nil {
		return fmt.Errorf("--api-url: %w", err)
	}
	connector, err := controller.SetupWithManager(mgr, controller.Options{
		Defaults: remote.Defaults{
			Service: svc,
			Limits: remote.Limits{QPS: c.apiQPS, Burst: c.apiBurst, MaxInFlight: c.apiMaxInFlight,
				Timeout: c.apiTimeout},
			DefaultAPIKeySecret:          c.defaultAPIKeySecret,
			DriftInterval:                c.driftInterval,
			BulkDeleteBatchSize:          c.bulkDeleteBatchSize,
			StandaloneURL:                c.serveAPIURL,
			Workers:                      c.maxConcurrentReconciles,
			AllowPrivateServiceAddresses: c.allowPrivateServices,
			NamespacedServiceHosts:       c.namespacedServiceHosts,
		},
		MaxConcurrentReconciles: c.maxConcurrentReconciles,
		RequestTimeout:          c.apiTimeout,
		Artifacts: testset.Artifacts{Hosts: c.artifactHosts, Timeout: c.artifacts.Timeout,
			MaxBytes: c.artifacts.MaxBytes},
		TestsetLimits: c.testsetLimits,
		TestsetMemory: c.testsetMemory,
	})
	if err != nil {
		return err
	}
	if c.serveAPI != "" {
		if err := addRESTServer(mgr, c, connector, tlsOpts); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the ready check: %w", err)
	}

	mode := "standalone"
	if c.apiURL != "" {
		mode = "upstream " + redactURL(c.apiURL)
	}
	log.Info("starting manager", "version", build.Version, "revision", build.Revision, "mode", mode, "serveAPI", c.serveAPI, "watchNamespaces", c.watchNamespaces,
		"gracefulShutdownTimeout", c.gracefulShutdownTimeout().String())
	return mgr.Start(ctrl.SetupSignalHandler())
}

// addRESTServer adds the built-in REST server to mgr.
func addRESTServer(mgr ctrl.Manager, c config, connector *remote.Connector, tlsOpts []func(*tls.Config)) error {
	selector, err := labels.Parse(c.restNamespaceSelector)
	if err != nil {
		return fmt.Errorf("--rest-namespace-selector: %w", err)
	}
	writes := c.tenantWrites()
	srv, err := restapi.AddToManager(mgr, connector, restapi.Options{
		Addr:              c.serveAPI,
		Namespaces:        c.watchNamespaces,
		NamespaceSelector: selector,
		SyncTimeout:       c.restSyncTimeout,
		MaxInflight:       c.restMaxInflight,
		TenantQPS:         writes.qps,
		TenantBurst:       writes.burst,
		TenantReadQPS:     c.restTenantReadQPS,
		TenantReadBurst:   c.restTenantReadBurst,
		Budget:            c.restBudget,
		TLSCertFile:       c.tlsCertFile,
		TLSKeyFile:        c.tlsKeyFile,
		TLSOpts:           tlsOpts,
		DrainDelay:        c.restDrainDelay,
	})
	if err != nil {
		return fmt.Errorf("--serve-api: %w", err)
	}
	// Not ready until the server listens and knows the keys.
	if err := mgr.AddReadyzCheck("rest-api", srv.ReadyCheck); err != nil {
		return fmt.Errorf("adding the REST server's ready check: %w", err)
	}
	return nil
}

// tenantBudget is a namespace's write budget on the REST server.
type tenantBudget struct {
	qps   float64
	burst int
}

// tenantWrites is each namespace's write budget: the flags where set;
// otherwise, standalone, what the API server takes (restapi's defaults), and
// with a service a quarter of its rate and half its burst, so one namespace
// alone never empties the budget every namespace shares.
func (c *config) tenantWrites() tenantBudget {
	b := tenantBudget{qps: restapi.DefaultTenantQPS, burst: restapi.DefaultTenantBurst}
	if c.apiURL != "" {
		b = tenantBudget{qps: c.apiQPS / 4, burst: max(1, c.apiBurst/2)}
	}
	if c.restTenantQPS > 0 {
		b.qps = c.restTenantQPS
	}
	if c.restTenantBurst > 0 {
		b.burst = c.restTenantBurst
	}
	return b
}
