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

package remote_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// callLog is a service that records whose key sent each call, in order.
type callLog struct {
	evalapi.Service
	mu   sync.Mutex
	keys []evalapi.APIKey
}

func (l *callLog) GetMetric(_ context.Context, key evalapi.APIKey, _ string) (evalapi.Metric, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, key)
	return evalapi.Metric{ID: "met_1"}, nil
}

// since returns the calls from the n-th on.
func (l *callLog) since(n int) []evalapi.APIKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]evalapi.APIKey(nil), l.keys[n:]...)
}

// quietKey is the key of namespace "quiet" at sharedService.
const quietKey = evalapi.APIKey("ak_quiet_0123456789abcdef")

// sharedService is a service that logs its calls, at qps and burst, used
// by namespaces "busy" and "quiet", whose Secrets "key" hold keys of their
// own (ak_<namespace>_...), so the log tells them apart.
func sharedService(qps float64, burst int) (*callLog, *remote.Connector) {
	secret := func(ns string) *corev1.Secret {
		s := keySecret(ns, "key")
		s.Data[v1alpha1.DefaultAPIKeySecretKey] = []byte("ak_" + ns + "_0123456789abcdef")
		return s
	}
	log := &callLog{}
	kc := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(secret("busy"), secret("quiet")).Build()
	return log, remote.NewConnector(kc, remote.Defaults{Service: log, Limits: remote.Limits{QPS: qps, Burst: burst},
		DefaultAPIKeySecret: "key"})
}

// observe makes n calls in one reconcile of the object uid in ns, as a bulk
// deletion's batches do: the first is told when to come back, the later
// ones wait for the rate. It stops early when ctx ends.
func observe(ctx context.Context, c *remote.Connector, ns, uid string, n int) {
	GinkgoHelper()
	m := metricIn(ns, uid)
	conn, err := c.Connect(ctx, m)
	Expect(err).NotTo(HaveOccurred())
	client := conn.Client()
	for range n {
		for {
			if ctx.Err() != nil {
				return
			}
			_, err := client.Observe(ctx, "met_1", &m.Spec)
			after, throttled := remote.ThrottledFor(err)
			if !throttled {
				Expect(err).To(Or(Not(HaveOccurred()), MatchError(context.Canceled)))
				break
			}
			time.Sleep(after)
		}
	}
}

// busyAhead counts the calls before the quiet namespace's first in calls.
func busyAhead(calls []evalapi.APIKey) int {
	GinkgoHelper()
	n := 0
	for _, k := range calls {
		if k == quietKey {
			return n
		}
		n++
	}
	Fail("the quiet namespace's call was not sent")
	return n
}

var _ = Describe("A service shared by namespaces", func() {
	It("gives a namespace's call a turn between another namespace's long runs of calls, not after them", func(ctx SpecContext) {
		const busyObjects, callsEach = 8, 15
		// One call every 20 ms: the busy namespace alone keeps the rate used up.
		log, c := sharedService(50, 1)
		var busy sync.WaitGroup
		for i := range busyObjects {
			busy.Go(func() {
				defer GinkgoRecover()
				observe(ctx, c, "busy", fmt.Sprintf("busy-%d", i), callsEach)
			})
		}
		Eventually(func() int { return len(log.since(0)) }).Should(BeNumerically(">=", 2*busyObjects),
			"every busy object is making its later calls")

		start := len(log.since(0))
		observe(ctx, c, "quiet", "quiet", 1)
		// Each busy object has a later call waiting for the rate at any time;
		// were they all ahead, the quiet call would wait behind 8.
		before := busyAhead(log.since(start))
		Expect(before).To(BeNumerically("<=", 3),
			"busy calls sent between the quiet namespace's call and its answer: %d", before)
		busy.Wait()
	})

	It("lets another namespace's call take the next token ahead of a long run's next call", func(ctx SpecContext) {
		// A token every 100 ms: the busy namespace's run keeps the rate used up.
		// With a burst of one there is no spare token (see the next spec).
		log, c := sharedService(10, 1)
		stop, running := busyRun(ctx, c, log, 3)

		// Five calls of the quiet namespace, one after another: each is sent
		// before the run's next call, which was waiting for the same token.
		// Were the run's next token reserved already, each would go after it.
		ahead := 0
		for i := range 5 {
			start := len(log.since(0))
			observe(ctx, c, "quiet", fmt.Sprintf("quiet-%d", i), 1)
			ahead += busyAhead(log.since(start))
		}
		stop()
		<-running
		Expect(ahead).To(BeNumerically("<=", 2), "the run's calls sent ahead of the quiet namespace's five: %d", ahead)
	})

	It("keeps a token of the burst spare for another namespace's call while a long run uses up the rate", func(ctx SpecContext) {
		const burst = 4
		log, c := sharedService(10, burst)
		// Past its burst, the run is held to the rate.
		stop, running := busyRun(ctx, c, log, burst+3)

		// Each quiet call comes once the run has had time to take the spare
		// back, were it allowed to; taking it leaves the quiet call to be
		// told to come back for a later token.
		toldToWait := 0
		for i := range 5 {
			time.Sleep(250 * time.Millisecond)
			conn, err := c.Connect(ctx, metricIn("quiet", fmt.Sprintf("quiet-%d", i)))
			Expect(err).NotTo(HaveOccurred())
			_, err = conn.Client().Observe(ctx, "met_1", &metricIn("quiet", "quiet").Spec)
			if _, throttled := remote.ThrottledFor(err); throttled {
				toldToWait++
				continue
			}
			Expect(err).NotTo(HaveOccurred())
		}
		stop()
		<-running
		Expect(toldToWait).To(BeZero(), "quiet calls told to wait for a token, of 5")
	})

	It("does not let first calls coming faster than the rate starve a reconcile's later calls", func(ctx SpecContext) {
		log, c := sharedService(10, 4)
		// Eight busy workers, each starting one object's reconcile of one call
		// after another: told to come back for their turns, they keep the
		// limiter booked ahead, so a spare token never comes.
		streamCtx, stop := context.WithCancel(ctx)
		var stream sync.WaitGroup
		for w := range 8 {
			stream.Go(func() {
				defer GinkgoRecover()
				for i := 0; streamCtx.Err() == nil; i++ {
					observe(streamCtx, c, "busy", fmt.Sprintf("busy-%d-%d", w, i), 1)
				}
			})
		}
		Eventually(func() int { return len(log.since(0)) }).Should(BeNumerically(">=", 8), "the stream is booking turns")

		// A quiet reconcile of three calls gets its later two in line: at
		// 10 calls a second and eight turns booked ahead of each, it has had
		// several times the time it needs when the stream stops.
		start := len(log.since(0))
		quietCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		observe(quietCtx, c, "quiet", "quiet", 3)
		stop()
		stream.Wait()
		quiet := 0
		for _, k := range log.since(start) {
			if k == quietKey {
				quiet++
			}
		}
		Expect(quiet).To(Equal(3), "the quiet reconcile's calls sent before it gave up")
	})
})

// busyRun starts one busy object making calls like a bulk deletion's
// batches (a reconcile's first call, then later calls waiting for the rate)
// until stop is called, and returns once the service has had calls of it.
// running is closed when the run has stopped.
func busyRun(ctx context.Context, c *remote.Connector, log *callLog, calls int) (stop func(), running <-chan struct{}) {
	GinkgoHelper()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		observe(runCtx, c, "busy", "busy-run", math.MaxInt)
	}()
	Eventually(func() int { return len(log.since(0)) }).Should(BeNumerically(">=", calls), "the run is making its later calls")
	return stop, done
}
