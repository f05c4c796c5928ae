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

// Package statemetrics exports how many objects of each kind are in each
// state (Ready status and reason, Stalled), counted from the manager's
// informer cache at scrape time, so the figures cannot drift from the
// objects and cost nothing between scrapes.
package statemetrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/kinds"
)

// MetricName is the gauge's name.
const MetricName = "evaloperator_objects"

// listTimeout bounds a scrape's wait for a cache that is not synced yet.
const listTimeout = 5 * time.Second

// Collector is a prometheus.Collector counting objects by state.
type Collector struct {
	reader      client.Reader
	byNamespace bool
	desc        *prometheus.Desc
}

// New returns a Collector listing from reader, which should be the
// manager's cache. Labels are kind, ready, reason and stalled, all from
// bounded sets; byNamespace adds the object's namespace as
// object_namespace (a label per namespace: for clusters with few).
func New(reader client.Reader, byNamespace bool) *Collector {
	labels := []string{"kind", "ready", "reason", "stalled"}
	if byNamespace {
		labels = append(labels, "object_namespace")
	}
	return &Collector{
		reader:      reader,
		byNamespace: byNamespace,
		desc: prometheus.NewDesc(MetricName,
			"Objects by kind, Ready condition status and reason, and whether they are Stalled (waiting for a person or a change).",
			labels, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector. A kind that cannot be listed
// (cache not synced yet) is left out of this scrape rather than failing it.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	// The kinds with a Ready condition: those whose objects use a service.
	for _, k := range kinds.Users() {
		counts, err := c.count(ctx, k.Kind, k.NewList())
		switch {
		case apierrors.IsTimeout(err):
			// The cache is still listing, as after every start: not worth an error per scrape.
			logf.Log.WithName("statemetrics").V(1).Info("Not counting objects before the cache has synced", "kind", k.Kind)
			continue
		case err != nil:
			logf.Log.WithName("statemetrics").Error(err, "counting objects", "kind", k.Kind)
			continue
		}
		for labels, n := range counts {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), labels.values(c.byNamespace)...)
		}
	}
}

// state is one series' label values.
type state struct {
	kind, ready, reason, stalled, namespace string
}

func (s state) values(byNamespace bool) []string {
	v := []string{s.kind, s.ready, s.reason, s.stalled}
	if byNamespace {
		v = append(v, s.namespace)
	}
	return v
}

// count lists one kind without deep copies (the objects are only read) and
// counts them by state.
func (c *Collector) count(ctx context.Context, kind string, list client.ObjectList) (map[state]int, error) {
	if err := c.reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing %s objects: %w", kind, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("reading the %s list: %w", kind, err)
	}
	counts := map[state]int{}
	for _, item := range items {
		obj, ok := item.(v1alpha1.Object)
		if !ok {
			continue
		}
		s := state{kind: kind, ready: string(metav1.ConditionUnknown), stalled: "false"}
		if c.byNamespace {
			s.namespace = obj.GetNamespace()
		}
		conds := *obj.GetConditions()
		if ready := meta.FindStatusCondition(conds, v1alpha1.ConditionReady); ready != nil {
			s.ready, s.reason = string(ready.Status), ready.Reason
		}
		if meta.IsStatusConditionTrue(conds, v1alpha1.ConditionStalled) {
			s.stalled = "true"
		}
		counts[s]++
	}
	return counts, nil
}
