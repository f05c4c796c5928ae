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

// Command dev is `make dev`: it starts a local control plane (kube-apiserver
// and etcd from bin/k8s) with the CRDs, runs the manager binary against it in
// standalone mode with the built-in REST server, creates a demo namespace
// with an API key Secret, prints what to try, and on Ctrl-C stops it all.
//
// Usage: dev [flags] [-- manager flags...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/test/framework"
)

// options is the command line.
type options struct {
	stateDir    string
	manager     string
	serveAPI    string
	probeAddr   string
	metricsAddr string
	namespace   string
	managerArgs []string
}

// demoSecret is the name the samples' apiKeySecretRef uses, so they apply
// to the demo namespace unchanged.
const demoSecret = "evaluation-api-key"

// Bounds of start-up and shutdown.
const (
	readyTimeout = 2 * time.Minute
	stopGrace    = 15 * time.Second
)

func main() {
	var o options
	flag.StringVar(&o.stateDir, "state-dir", ".dev", "Directory of the kubeconfig and the manager log.")
	flag.StringVar(&o.manager, "manager", "bin/manager", "The manager binary (make build).")
	flag.StringVar(&o.serveAPI, "serve-api", "127.0.0.1:8082", "Address of the manager's REST server.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", "127.0.0.1:8081", "Address of the manager's probes.")
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", "127.0.0.1:8080", "Address of the manager's metrics (plain HTTP).")
	flag.StringVar(&o.namespace, "namespace", "demo", "Namespace of the demo API key Secret.")
	flag.Parse()
	o.managerArgs = flag.Args()

	// envtest logs through controller-runtime; its chatter is not for the user.
	logf.SetLogger(logr.Discard())
	// A Ctrl-C during start-up cancels what was under way: not a failure.
	if err := run(o); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "make dev:", err)
		os.Exit(1)
	}
}

func run(o options) (err error) {
	// Ctrl-C, a closed terminal and kill all end the session the same way. The
	// children have process groups of their own, so the signal reaches only
	// this process, which stops them in order: manager, then control plane.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-signals
		cancel()
	}()

	if err := checkFree(o.addresses()); err != nil {
		return err
	}
	if err := os.MkdirAll(o.stateDir, 0o700); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	fmt.Println("Starting the control plane (kube-apiserver and etcd) ...")
	cp, err := framework.StartControlPlane(o.stateDir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()

	key, err := createDemo(ctx, cp, o.namespace)
	if err != nil {
		return err
	}
	mgr, logPath, err := startManager(ctx, cp, o)
	if err != nil {
		return err
	}
	// Killed after stopGrace or a second Ctrl-C, it has stopped all the same.
	defer func() { _ = mgr.Stop(stopGrace, signals) }()

	if err := printInstructions(o, cp, mgr.Pid(), logPath, key); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		fmt.Println("\nStopping the manager and the control plane ...")
		return nil
	case <-mgr.Done():
		return errors.Join(fmt.Errorf("the manager exited; see %s", logPath), mgr.Err())
	}
}

// address is one the manager listens on, with the flag that moves it.
// address is one address the manager listens on: its bin/dev flag, the
// address, what listens there, and the make variable that sets it.
type address struct {
	flag, addr, what, makeVar string
}

func (o options) addresses() []address {
	return []address{
		{"serve-api", o.serveAPI, "the REST server", "DEV_API_ADDR"},
		{"health-probe-bind-address", o.probeAddr, "the probes", "DEV_PROBE_ADDR"},
		{"metrics-bind-address", o.metricsAddr, "the metrics", "DEV_METRICS_ADDR"},
	}
}

// checkFree fails on the first address another process listens on. Checked
// before anything starts: else the manager exits only after the banner, or
// its readiness probe is answered by that other process.
func checkFree(addrs []address) error {
	for _, a := range addrs {
		l, err := net.Listen("tcp", a.addr)
		if err != nil {
			return fmt.Errorf("%s cannot listen on %s (%w): stop what listens there, or move it with "+
				"make dev %s=127.0.0.1:PORT (bin/dev --%s=ADDRESS)", a.what, a.addr, err, a.makeVar, a.flag)
		}
		_ = l.Close()
	}
	return nil
}

// createDemo creates the demo namespace and its API key Secret, labelled for
// the REST server, and returns the key.
func createDemo(ctx context.Context, cp *framework.ControlPlane, namespace string) (string, error) {
	c, err := cp.Client()
	if err != nil {
		return "", fmt.Errorf("connecting to the control plane: %w", err)
	}
	key := framework.NewKey("dev")
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		framework.KeySecret(namespace, demoSecret, key),
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			return "", fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return key, nil
}

// startManager runs the manager in standalone mode, logging to a file in
// the state directory, and waits until it is ready.
func startManager(ctx context.Context, cp *framework.ControlPlane, o options) (*framework.Manager, string, error) {
	logPath := filepath.Join(o.stateDir, "manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, "", fmt.Errorf("creating the manager log: %w", err)
	}
	// The child holds its own copy of the descriptor.
	defer func() { _ = logFile.Close() }()

	args := append([]string{
		"--serve-api=" + o.serveAPI,
		"--serve-api-url=http://" + o.serveAPI + "/api/v2",
		"--metrics-bind-address=" + o.metricsAddr,
		"--metrics-secure=false",
	}, o.managerArgs...)
	fmt.Println("Starting the manager:", o.manager, strings.Join(args, " "))
	mgr, err := framework.StartManager(o.manager, cp.Kubeconfig, o.probeAddr, logFile, args...)
	if err != nil {
		return nil, "", err
	}
	readyCtx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := mgr.WaitReady(readyCtx); err != nil {
		_ = mgr.Stop(stopGrace, nil) // the error that matters is err
		return nil, "", fmt.Errorf("%w; see %s", err, logPath)
	}
	return mgr, logPath, nil
}

var instructions = template.Must(template.New("").Parse(`
eval-operator is running locally, in standalone mode (the cluster is the
system of record; ids are assigned locally, deletions complete at once).

  control plane  {{.Host}}
  manager        pid {{.Pid}}, log {{.Log}}
  REST server    {{.API}}
  demo key       Secret {{.Namespace}}/{{.Secret}} (labelled {{.Label}}="true")

Try it from another terminal in this directory:

  export KUBECONFIG={{.Kubeconfig}}
  kubectl apply -n {{.Namespace}} -f config/samples/
  kubectl get evaluation -n {{.Namespace}}
  kubectl get metrics -n {{.Namespace}} -o yaml

  curl -sS -X POST {{.API}}/projects/proj_demo/metrics \
    -H 'Authorization: Bearer {{.Key}}' -H 'Content-Type: application/json' \
    -d '{"name": "Exact match", "evalType": "heuristic", "outputType": "boolean"}'
  curl -sS -X POST {{.API}}/testcases/bulk-delete \
    -H 'Authorization: Bearer {{.Key}}' -H 'Content-Type: application/json' \
    -d '{"ids": ["tc_1", "tc_2"]}'
  curl -sS -X DELETE {{.API}}/testsets/ts_demo -H 'Authorization: Bearer {{.Key}}'
  curl -sS {{.API}}/openapi.json
  curl -sS {{.Metrics}}/metrics | grep -E '^(evaloperator_[a-z_]+_total|controller_runtime_reconcile_total)'

Press Ctrl-C to stop everything; nothing is kept.
`))

func printInstructions(o options, cp *framework.ControlPlane, pid int, logPath, key string) error {
	kubeconfig, err := filepath.Abs(cp.Kubeconfig)
	if err != nil {
		return fmt.Errorf("locating the kubeconfig: %w", err)
	}
	return instructions.Execute(os.Stdout, map[string]any{
		"Host":       cp.Config.Host,
		"Pid":        pid,
		"Log":        logPath,
		"API":        "http://" + o.serveAPI + "/api/v2",
		"Metrics":    "http://" + o.metricsAddr,
		"Namespace":  o.namespace,
		"Secret":     demoSecret,
		"Label":      v1alpha1.APIKeyLabel,
		"Kubeconfig": kubeconfig,
		"Key":        key,
	})
}
