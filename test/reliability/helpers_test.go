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

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

// createWorkers is how many objects are created at once.
const createWorkers = 8

// Log verbosities of the manager (--zap-log-level). client-go logs request
// and response bodies from verbosity 8 on, the Secrets the operator reads
// included; fullLogs checks that even those hold no key.
const (
	debugLogs = "7"
	fullLogs  = "10"
)

// fixture is one spec's world: an upstream test server, a namespace whose
// key Secret it accepts, and every manager process the spec started, kept
// so that their logs can be searched for keys at the end.
type fixture struct {
	server *evalapitest.Server
	ns     string
	// secrets are the key values that must never be shown.
	secrets []string
	procs   []*framework.MeteredManager
	// logLevel is the managers' --zap-log-level.
	logLevel string
}

func newFixture(ctx context.Context, opts ...evalapitest.Option) *fixture {
	GinkgoHelper()
	key := framework.NewKey("rel")
	f := &fixture{
		// Ids of its own: the Metrics other specs left in the cluster claim theirs.
		server: evalapitest.New(append([]evalapitest.Option{evalapitest.WithKeys(key),
			evalapitest.WithIDPrefix("met_" + framework.RandomHex(4) + "_")}, opts...)...),
		logLevel: debugLogs,
	}
	DeferCleanup(f.server.Close)
	f.secrets = []string{key}
	var err error
	f.ns, err = framework.NewNamespace(ctx, k8s, "rel", key)
	Expect(err).NotTo(HaveOccurred())
	return f
}

// start runs the manager binary against the fixture's server, logging at
// f.logLevel so that a key in a log line would show.
func (f *fixture) start(args ...string) *framework.MeteredManager {
	GinkgoHelper()
	p, err := framework.StartMetered(framework.MeteredOptions{
		Binary: binary, Kubeconfig: kubeconfig, Log: GinkgoWriter,
		Args: append([]string{"--api-url=" + f.server.URL(), "--zap-log-level=" + f.logLevel}, args...),
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.Terminate)
	f.procs = append(f.procs, p)
	// Serving metrics means the manager is up; its caches may still be syncing.
	Eventually(p.ScrapeText).WithArguments(context.Background()).WithTimeout(30*time.Second).
		Should(ContainSubstring("controller_runtime"), func() string { return "the manager did not start:\n" + p.Output() })
	return p
}

// createMetrics creates n Metrics named prefix-0000 and so on.
func (f *fixture) createMetrics(ctx context.Context, prefix string, n int) {
	GinkgoHelper()
	_, _, err := framework.Parallel(ctx, n, createWorkers, func(ctx context.Context, i int) error {
		return k8s.Create(ctx, framework.NewMetric(f.ns, fmt.Sprintf("%s-%04d", prefix, i), i))
	})
	Expect(err).NotTo(HaveOccurred())
}

// settled counts the Metrics of a namespace by end state.
type settled struct {
	ready int
	// recovered are Ready Metrics whose cut-off create the operator found in
	// the service's list (reason Recovered); they count in ready too.
	recovered int
	// unknown are Stalled on CreateOutcomeUnknown for a person, who must adopt or retry.
	unknown int
}

// awaitingList is in the message of a Metric on CreateOutcomeUnknown whose
// create may still be in flight: the operator settles it later by itself.
const awaitingList = "when the request can no longer be in flight"

// expectSettled waits until the namespace holds exactly n Metrics, each
// Ready or Stalled for a person, the only end states a create can have here:
// on CreateOutcomeUnknown, or, against a service that cannot read Metrics,
// on RemoteNotFound when a kill lost the status of a created Metric (its id
// is recorded, so it is never created again).
func (f *fixture) expectSettled(ctx context.Context, n int, timeout time.Duration) settled {
	GinkgoHelper()
	var s settled
	Eventually(func(g Gomega) {
		var list v1alpha1.MetricList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		s = settled{}
		for _, m := range list.Items {
			c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil(), "Metric %s has no Ready condition", m.Name)
			isReady := c.Status == metav1.ConditionTrue
			forPerson := c.Reason == v1alpha1.ReasonCreateOutcomeUnknown && !strings.Contains(c.Message, awaitingList) ||
				c.Reason == v1alpha1.ReasonRemoteNotFound
			g.Expect(isReady || forPerson).To(BeTrue(), "Metric %s is not settled: Ready=%q, reason %q: %s",
				m.Name, c.Status, c.Reason, c.Message)
			switch {
			case forPerson:
				s.unknown++
			case c.Reason == v1alpha1.ReasonRecovered:
				s.recovered++
				fallthrough
			default:
				s.ready++
			}
		}
	}).WithContext(ctx).WithTimeout(timeout).Should(Succeed())
	return s
}

// pendingWithoutID names the Metrics of the namespace whose create is
// marked pending with no id recorded: their create's outcome is unknown.
func (f *fixture) pendingWithoutID(ctx context.Context) map[string]bool {
	GinkgoHelper()
	var list v1alpha1.MetricList
	Expect(k8s.List(ctx, &list, client.InNamespace(f.ns))).To(Succeed())
	names := map[string]bool{}
	for _, m := range list.Items {
		_, pending := m.Annotations[v1alpha1.CreatePendingAnnotation]
		if pending && m.Annotations[v1alpha1.MetricIDAnnotation] == "" && m.Status.ID == "" {
			names[m.Name] = true
		}
	}
	return names
}

// expectNoDuplicates fails if the server committed two creates of one name.
func (f *fixture) expectNoDuplicates() {
	GinkgoHelper()
	seen := map[string]int{}
	for _, c := range f.server.CreatedMetrics() {
		seen[c.Metric.Name]++
	}
	for name, count := range seen {
		Expect(count).To(Equal(1), "the service holds %d Metrics named %q", count, name)
	}
}

// expectNothingLost checks every Metric of the namespace against the
// server's creates: a Ready Metric records, in its annotation and status,
// the id of the one create of its name; a Metric on CreateOutcomeUnknown
// has at most one create. It returns how many of the latter do have one,
// i.e. need a person to adopt the id: none of them is lost, each is flagged.
func (f *fixture) expectNothingLost(ctx context.Context) (toAdopt int) {
	GinkgoHelper()
	ids := map[string][]string{}
	for _, c := range f.server.CreatedMetrics() {
		ids[c.Metric.Name] = append(ids[c.Metric.Name], c.Metric.ID)
	}
	var list v1alpha1.MetricList
	Expect(k8s.List(ctx, &list, client.InNamespace(f.ns))).To(Succeed())
	for _, m := range list.Items {
		remote := ids[string(m.Spec.Name)]
		Expect(len(remote)).To(BeNumerically("<=", 1), "Metric %s was created %d times", m.Name, len(remote))
		if status, _ := framework.Ready(&m); status != metav1.ConditionTrue {
			toAdopt += len(remote)
			continue
		}
		Expect(remote).To(ConsistOf(m.Status.ID), "Metric %s is Ready with an id the service did not assign to it", m.Name)
		Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, m.Status.ID))
		Expect(m.Annotations).NotTo(HaveKey(v1alpha1.CreatePendingAnnotation))
	}
	return toAdopt
}

// expectNoSecrets searches everything the operator shows for the keys: the
// logs of every manager the spec ran, the /metrics page of those still
// running, the namespace's events and its objects with their status.
func (f *fixture) expectNoSecrets(ctx context.Context) {
	GinkgoHelper()
	shown := map[string]string{}
	for i, p := range f.procs {
		shown[fmt.Sprintf("log of manager %d", i)] = p.Output()
		select {
		case <-p.Done():
		default:
			page, err := p.ScrapeText(ctx)
			Expect(err).NotTo(HaveOccurred())
			shown[fmt.Sprintf("metrics of manager %d", i)] = page
		}
	}
	for what, list := range map[string]client.ObjectList{
		"events (core/v1)":   &corev1.EventList{},
		"events (events/v1)": &eventsv1.EventList{},
		"Metrics":            &v1alpha1.MetricList{},
		"TestsetDeletions":   &v1alpha1.TestsetDeletionList{},
		"TestcaseDeletions":  &v1alpha1.TestcaseDeletionList{},
	} {
		Expect(k8s.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
		data, err := json.Marshal(list)
		Expect(err).NotTo(HaveOccurred())
		shown[what] = string(data)
	}
	Expect(shown["events (events/v1)"]).To(ContainSubstring(`"reason"`), "the search must see the events")
	for what, text := range shown {
		_, how := framework.Revealed(text, f.secrets)
		Expect(how).To(BeEmpty(), "a key appears in the %s", what)
	}
}

// upstreamCalls counts the requests of every operation the server got.
func (f *fixture) upstreamCalls() int {
	return f.server.Calls(evalapitest.OpCreateMetric) + f.server.Calls(evalapitest.OpListMetrics) +
		f.server.Calls(evalapitest.OpBulkDeleteTestcases) + f.server.Calls(evalapitest.OpDeleteTestset)
}
