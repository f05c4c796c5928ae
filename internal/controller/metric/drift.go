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

package metric

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	driftCorrections = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "evaloperator_drift_corrections_total",
		Help: "Remote Metrics a drift check found changed outside the cluster and restored to their spec with one update.",
	})
	metricUpdates = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "evaloperator_metric_updates_total",
		Help: "Updates sent to bring a remote Metric to a changed or adopted spec (drift corrections are counted apart).",
	})
)

func init() {
	metrics.Registry.MustRegister(driftCorrections, metricUpdates)
}
