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

package evalapi

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// codeError is the code label of a request that got no HTTP answer.
const codeError = "error"

var (
	upstreamRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evaloperator_upstream_requests_total",
		Help: "Requests sent to the Evaluation Service, by service, operation and HTTP status code (\"error\" when no answer arrived).",
	}, []string{"service", "operation", "code"})

	upstreamDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "evaloperator_upstream_request_duration_seconds",
		Help:    "Duration of requests to the Evaluation Service, from sending to reading the answer, by service and operation.",
		Buckets: prometheus.DefBuckets,
	}, []string{"service", "operation"})
)

// Registered with controller-runtime's registry so the manager's metrics
// endpoint serves them next to its own.
func init() {
	metrics.Registry.MustRegister(upstreamRequests, upstreamDuration)
}

// observe records one request that was handed to the transport. statusCode
// is 0 when no answer arrived.
// service is the client's label: "ManagerFlags" for --api-url, else the
// service object, "ClusterEvaluationService/<name>" or
// "EvaluationService/<namespace>/<name>" (as many as there are services).
func observe(service string, op serviceOp, statusCode int, start time.Time) {
	code := codeError
	if statusCode != 0 {
		code = strconv.Itoa(statusCode)
	}
	upstreamRequests.WithLabelValues(service, op.label, code).Inc()
	upstreamDuration.WithLabelValues(service, op.label).Observe(time.Since(start).Seconds())
}
