//go:build e2e

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

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/test/framework"
)

// rolloutDrainDelay is --rest-drain-delay in the rollout spec: well above
// the balancer's readiness polling, as the chart's 5s default is well above
// the time a Service's endpoints take to drop a terminating pod.
const rolloutDrainDelay = 2 * time.Second

var _ = Describe("A rolling restart of the REST server", func() {
	It("fails no request of a steady load while each of two replicas restarts in turn", func(ctx SpecContext) {
		ns := newNamespace(ctx, "rest-rollout")
		key := framework.NewKey("rollout")
		createKeySecret(ctx, ns, "rest-key", key, true)
		args := []string{
			"--leader-elect", "--leader-election-namespace=" + ns,
			"--rest-tenant-qps=1000", "--rest-tenant-burst=1000",
			"--rest-drain-delay=" + rolloutDrainDelay.String(),
		}
		replicas := []*replica{newReplica("replica-1", args), newReplica("replica-2", args)}
		for _, r := range replicas {
			r.start(ctx)
		}
		lb := newBalancer(ctx, replicas)
		url := "http://" + lb.addr() + "/api/v2/projects/proj_rollout/metrics"
		Eventually(func() (int, error) {
			code, _, err := call(ctx, http.MethodGet, url, key, "")
			return code, err
		}).Should(Equal(http.StatusOK), "the key is known")

		load := startLoad(ctx, url, key, 4)
		for _, r := range replicas {
			time.Sleep(time.Second) // load on both replicas
			before := load.ok.Load()
			r.restart(ctx)
			Expect(load.ok.Load()).To(BeNumerically(">", before), "requests went on during the restart")
		}
		time.Sleep(time.Second)
		load.stop()

		AddReportEntry("REST rollout", fmt.Sprintf("%d requests, %d failed, over 2 restarts with a %s drain",
			load.ok.Load()+load.failed.Load(), load.failed.Load(), rolloutDrainDelay))
		Expect(load.failures()).To(BeEmpty())
		Expect(load.ok.Load()).To(BeNumerically(">", 20))
	})
})

// replica is one manager process with the REST server, at a fixed API and
// probe address across restarts, like a pod behind a Service.
type replica struct {
	name, apiAddr, probeAddr string
	args                     []string
	ready                    atomic.Bool // what the balancer last read from /readyz
	m                        *framework.Manager
}

func newReplica(name string, args []string) *replica {
	GinkgoHelper()
	apiAddr, err := framework.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	probeAddr, err := framework.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	return &replica{name: name, apiAddr: apiAddr, probeAddr: probeAddr,
		args: append([]string{"--metrics-bind-address=0", "--serve-api=" + apiAddr}, args...)}
}

func (r *replica) start(ctx context.Context) {
	GinkgoHelper()
	m, err := framework.StartManager(managerBinary, controlPlane.Kubeconfig, r.probeAddr, &prefixed{name: r.name}, r.args...)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = m.Stop(stopGrace, nil) })
	Expect(m.WaitReady(ctx)).To(Succeed())
	r.m = m
}

// restart is what a rolling update does to one pod: SIGTERM, wait for the
// exit, start the new one, wait until it is ready again.
func (r *replica) restart(ctx context.Context) {
	GinkgoHelper()
	Expect(r.m.Stop(stopGrace, nil)).To(Succeed())
	r.start(ctx)
	Eventually(r.ready.Load).Should(BeTrue(), "the balancer routes to %s again", r.name)
}

// balancer stands for a Service: a TCP proxy that sends each new connection
// to a replica whose /readyz answered 200 at its last poll, in turn, and
// leaves established connections where they are, as kube-proxy does.
type balancer struct {
	ln       net.Listener
	replicas []*replica
	next     atomic.Uint64
}

// readinessPoll is how often the balancer reads each replica's /readyz: the
// lag of a Service's endpoints, which rolloutDrainDelay must exceed.
const readinessPoll = 500 * time.Millisecond

func newBalancer(ctx context.Context, replicas []*replica) *balancer {
	GinkgoHelper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	b := &balancer{ln: ln, replicas: replicas}
	pollCtx, stop := context.WithCancel(ctx)
	DeferCleanup(func() { stop(); _ = ln.Close() })
	go b.poll(pollCtx)
	go b.accept()
	Eventually(func() int { return len(b.readyReplicas()) }).Should(Equal(len(replicas)))
	return b
}

func (b *balancer) addr() string { return b.ln.Addr().String() }

func (b *balancer) poll(ctx context.Context) {
	client := &http.Client{Timeout: time.Second}
	for {
		for _, r := range b.replicas {
			r.ready.Store(readyz(ctx, client, r.probeAddr))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(readinessPoll):
		}
	}
}

func readyz(ctx context.Context, client *http.Client, addr string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	if err != nil {
		return false
	}
	res, err := client.Do(req)
	if err != nil {
		return false
	}
	_ = res.Body.Close()
	return res.StatusCode == http.StatusOK
}

func (b *balancer) readyReplicas() []*replica {
	var ready []*replica
	for _, r := range b.replicas {
		if r.ready.Load() {
			ready = append(ready, r)
		}
	}
	return ready
}

func (b *balancer) accept() {
	for {
		conn, err := b.ln.Accept()
		if err != nil {
			return // closed when the spec ends
		}
		ready := b.readyReplicas()
		if len(ready) == 0 {
			_ = conn.Close() // no endpoint: the client sees the connection refused
			continue
		}
		r := ready[b.next.Add(1)%uint64(len(ready))]
		backend, err := net.Dial("tcp", r.apiAddr)
		if err != nil {
			_ = conn.Close()
			continue
		}
		go pipe(backend, conn)
		go pipe(conn, backend)
	}
}

// load is clients POSTing Metrics through the balancer with a short think
// time, counting what fails. Half keep their connections alive (the drain
// must close them), half open one per request (as many short-lived clients
// do, each reaching whichever replica the balancer picks).
type load struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	errs       []string
	cancel     context.CancelFunc
	done       sync.WaitGroup
}

func startLoad(ctx context.Context, url, key string, workers int) *load {
	ctx, cancel := context.WithCancel(ctx)
	l := &load{cancel: cancel}
	for w := range workers {
		l.done.Add(1)
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: w%2 == 1}}
		go func() {
			defer l.done.Add(-1)
			for i := 0; ctx.Err() == nil; i++ {
				body := fmt.Sprintf(`{"name": "load-%d-%d", "evalType": "heuristic", "outputType": "boolean"}`, w, i)
				// No Idempotency-Key: Go's client retries none of these, so
				// every refused or cut connection counts.
				code, answer, err := postWith(ctx, client, url, key, body)
				switch {
				case errors.Is(err, context.Canceled):
				case err == nil && code == http.StatusCreated:
					l.ok.Add(1)
				default:
					l.fail(fmt.Sprintf("%s: %d %v %s", time.Now().Format(time.StampMilli), code, err, answer))
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	return l
}

// postWith POSTs body to url as the holder of key through client.
func postWith(ctx context.Context, client *http.Client, url, key, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = res.Body.Close() }()
	answer, err := io.ReadAll(res.Body)
	return res.StatusCode, answer, err
}

func (l *load) fail(what string) {
	l.failed.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, what)
}

func (l *load) stop() {
	l.cancel()
	l.done.Wait()
}

func (l *load) failures() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.errs
}
