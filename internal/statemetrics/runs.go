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

package statemetrics

import (
	"cmp"
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// Names of the EvaluationRun gauges.
const (
	PassRatioName = "evaloperator_evaluationrun_pass_ratio"
	VerdictName   = "evaloperator_evaluationrun_verdict"
)

// RunCollector exports each judged EvaluationRun's verdict and each of its
// Metrics' pass ratio, read from the cache at scrape time, for a Flagger or
// Keptn metric template that gates on them. A run's series go with the run
// (ttlSecondsAfterFinished bounds how long). Each series names the release
// the run judges: its canary and revision labels (v1alpha1.CanaryLabel,
// RevisionLabel) and its spec.systemVersionId, "" when unset. A run has one
// value of each, so they add no series: a run's series are as many as
// before, and the values are bounded (63 bytes for a label, 128 for the id).
type RunCollector struct {
	reader    client.Reader
	passRatio *prometheus.Desc
	verdict   *prometheus.Desc
}

// NewRunCollector returns a RunCollector listing from reader, the
// manager's cache.
func NewRunCollector(reader client.Reader) *RunCollector {
	return &RunCollector{
		reader: reader,
		passRatio: prometheus.NewDesc(PassRatioName,
			"A judged EvaluationRun's pass ratio of one Metric: passed over scored records.",
			append([]string{"namespace", "name", "metric"}, releaseLabels...), nil),
		verdict: prometheus.NewDesc(VerdictName,
			"1 for a judged EvaluationRun's verdict (Passed, Failed or Inconclusive).",
			append([]string{"namespace", "name", "verdict"}, releaseLabels...), nil),
	}
}

// releaseLabels name the release a run judges, in releaseOf's order.
var releaseLabels = []string{"canary", "revision", "system_version"}

// releaseOf is the values of releaseLabels for run e: its version is the
// id it sent (status), which a run naming a SystemVersion has only there.
func releaseOf(e *v1alpha1.EvaluationRun) []string {
	return []string{e.Labels[v1alpha1.CanaryLabel], e.Labels[v1alpha1.RevisionLabel],
		cmp.Or(e.Status.SystemVersionID, e.Spec.SystemVersionID)}
}

// Describe implements prometheus.Collector.
func (c *RunCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.passRatio
	ch <- c.verdict
}

// Collect implements prometheus.Collector; a cache not synced yet leaves
// the runs out of this scrape.
func (c *RunCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	var runs v1alpha1.EvaluationRunList
	if err := c.reader.List(ctx, &runs, client.UnsafeDisableDeepCopy); err != nil {
		logf.Log.WithName("statemetrics").V(1).Info("Not exporting EvaluationRuns", "reason", err.Error())
		return
	}
	for i := range runs.Items {
		e := &runs.Items[i]
		if e.Status.Verdict == "" {
			continue
		}
		release := releaseOf(e)
		ch <- prometheus.MustNewConstMetric(c.verdict, prometheus.GaugeValue, 1,
			append([]string{e.Namespace, e.Name, string(e.Status.Verdict)}, release...)...)
		for _, m := range e.Status.Metrics {
			if m.PassRate != nil {
				ch <- prometheus.MustNewConstMetric(c.passRatio, prometheus.GaugeValue, *m.PassRate,
					append([]string{e.Namespace, e.Name, m.Name}, release...)...)
			}
		}
	}
}
