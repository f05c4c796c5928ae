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
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Request metrics, served next to controller-runtime's on the manager's
// metrics endpoint. The route label is the route pattern (or "unmatched"),
// never the raw path, so ids in paths cannot blow up cardinality.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evaloperator_rest_requests_total",
		Help: "Requests answered by the built-in REST server, by route and HTTP status code.",
	}, []string{"route", "code"})

	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "evaloperator_rest_request_duration_seconds",
		Help: "Time the built-in REST server took to answer a request, waiting for the reconciler included.",
		// Standalone answers in milliseconds; a real upstream can take up to the sync timeout.
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route"})
)

func init() {
	metrics.Registry.MustRegister(requestsTotal, requestDuration)
}
