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

package restapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/eval-operator/eval-operator/internal/controller"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/test/framework"
)

// harness is a real control plane with a manager running the reconcilers in
// standalone mode and REST servers on 127.0.0.1 listeners: what `make dev`
// runs, in-process. The suite and the benchmarks share it.
type harness struct {
	env *envtest.Environment
	cfg *rest.Config
	// kubeconfig is a cluster admin's kubeconfig file, for kubectl.
	kubeconfig string
	k8s        client.Client // straight to the API server, not the manager's cache
	mgr        ctrl.Manager
	cancel     context.CancelFunc
	done       chan error

	// server is the REST server under test; impatient is a second one on
	// the same manager whose sync timeout expires at once.
	server, impatient *Server
	url, impatientURL string
	http              *http.Client
}

// startHarness starts the control plane, the manager and the servers, and
// waits until the servers answer.
func startHarness(log logr.Logger) (h *harness, err error) {
	h = &harness{http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.stop())
		}
	}()
	if h.env, err = framework.NewEnvironment(); err != nil {
		return nil, err
	}
	if h.cfg, err = h.env.Start(); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	dir, err := os.MkdirTemp("", "restapi-")
	if err != nil {
		return nil, err
	}
	h.kubeconfig = filepath.Join(dir, "kubeconfig")
	if _, err = framework.WriteKubeconfig(h.env, h.kubeconfig); err != nil {
		return nil, err
	}
	if h.k8s, err = client.New(h.cfg, client.Options{Scheme: framework.Scheme()}); err != nil {
		return nil, err
	}
	h.mgr, err = ctrl.NewManager(h.cfg, ctrl.Options{
		Scheme:     framework.Scheme(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:     log,
		Cache:      controller.CacheOptions(nil),
	})
	if err != nil {
		return nil, err
	}
	if _, err = controller.SetupWithManager(h.mgr, controller.Options{MaxConcurrentReconciles: 8}); err != nil {
		return nil, err
	}
	if h.server, h.url, err = addServer(h.mgr, 30*time.Second, log, unlimited); err != nil {
		return nil, err
	}
	if h.impatient, h.impatientURL, err = addServer(h.mgr, time.Nanosecond, log, unlimited); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.mgr.Start(ctx) }()
	return h, h.waitServing()
}

// unlimited lifts admission control, which the suite tests on servers of
// its own: the other specs send as fast as they can from one tenant.
func unlimited(o *Options) {
	o.MaxInflight, o.TenantQPS, o.TenantBurst = 1<<16, 1e9, 1<<30
	o.TenantReadQPS, o.TenantReadBurst = 1e9, 1<<30
}

// addServer adds a REST server listening on a free 127.0.0.1 port to mgr;
// adjust, if any, changes its options.
func addServer(mgr ctrl.Manager, syncTimeout time.Duration, log logr.Logger,
	adjust ...func(*Options)) (*Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	opts := Options{Listener: ln, SyncTimeout: syncTimeout, Logger: log.WithName("restapi")}
	for _, a := range adjust {
		a(&opts)
	}
	var connector Connector
	if syncTimeout > time.Nanosecond {
		// The impatient server waits for the reconciler, as for a remote service.
		connector = standaloneConnector(mgr)
	}
	s, err := AddToManager(mgr, connector, opts)
	if err != nil {
		return nil, "", err
	}
	return s, "http://" + ln.Addr().String(), nil
}

func (h *harness) waitServing() error {
	return wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) {
			for _, u := range []string{h.url, h.impatientURL} {
				res, err := h.http.Get(u + routeOpenAPI)
				if err != nil {
					return false, nil //nolint:nilerr // not listening yet
				}
				_ = res.Body.Close()
			}
			return true, nil
		})
}

func (h *harness) stop() error {
	var errs []error
	if h.cancel != nil {
		h.cancel()
		errs = append(errs, <-h.done)
	}
	if h.env != nil {
		errs = append(errs, h.env.Stop())
	}
	if h.kubeconfig != "" {
		errs = append(errs, os.RemoveAll(filepath.Dir(h.kubeconfig)))
	}
	return errors.Join(errs...)
}

// tenant is a namespace with an API key Secret, as an administrator sets one up.
type tenant struct {
	namespace, secret, key string
}

// newTenant creates a namespace and a key Secret, and waits until the
// servers accept the key.
func (h *harness) newTenant(ctx context.Context) (tenant, error) {
	t := tenant{namespace: "t-" + framework.RandomHex(4), secret: "api-key", key: framework.NewKey("restapi")}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.namespace}}
	if err := h.k8s.Create(ctx, ns); err != nil {
		return t, err
	}
	if err := h.k8s.Create(ctx, framework.KeySecret(t.namespace, t.secret, t.key)); err != nil {
		return t, err
	}
	return t, h.waitKey(ctx, t.key, true)
}

// waitKey waits until both servers' keyrings know (or no longer know) key.
func (h *harness) waitKey(ctx context.Context, key string, known bool) error {
	return wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) {
			for _, s := range []*Server{h.server, h.impatient} {
				if _, ok, _ := s.keys.Lookup(key); ok != known {
					return false, nil
				}
			}
			return true, nil
		})
}

// reply is an answer of the server.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// request describes a request to the server.
type request struct {
	method, path string
	key          string // sent as a bearer key unless empty
	body         string
	contentType  string // application/json unless set; "-" sends none
	header       map[string]string
	chunked      bool // hide the body's length, so it is sent chunked
}

func (h *harness) do(ctx context.Context, baseURL string, rq request) (reply, error) {
	var payload io.Reader = strings.NewReader(rq.body)
	if rq.chunked {
		payload = io.MultiReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, baseURL+rq.path, payload)
	if err != nil {
		return reply{}, err
	}
	if rq.key != "" {
		req.Header.Set("Authorization", "Bearer "+rq.key)
	}
	switch rq.contentType {
	case "":
		req.Header.Set("Content-Type", "application/json")
	case "-":
	default:
		req.Header.Set("Content-Type", rq.contentType)
	}
	for k, v := range rq.header {
		if v != "" { // an empty value leaves the header out
			req.Header.Set(k, v)
		}
	}
	res, err := h.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: res.StatusCode, header: res.Header, body: bytes.TrimSpace(body)}, nil
}

// standaloneConnector resolves every object to the standalone service, as
// a manager without --api-url does.
func standaloneConnector(mgr ctrl.Manager) *remote.Connector {
	return remote.NewConnector(mgr.GetAPIReader(), remote.Defaults{})
}
