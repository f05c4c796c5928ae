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

package judge

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "evaloperator_judge_request_duration_seconds",
		Help:    "Duration of requests to a standalone service's judge, by connection, model and HTTP status code (\"error\" when no answer arrived).",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"connection", "model", "code"})

	errorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evaloperator_judge_errors_total",
		Help: "Judge requests that gave no score, by connection and reason (network, rate_limited, server_error, refused, too_large, malformed, unreadable).",
	}, []string{"connection", "reason"})

	tokensTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "evaloperator_judge_tokens_total",
		Help: "Tokens a judge reported using, by connection, model and kind (prompt, completion).",
	}, []string{"connection", "model", "kind"})
)

// Registered with controller-runtime's registry so the manager's metrics
// endpoint serves them next to its own.
func init() {
	metrics.Registry.MustRegister(requestDuration, errorsTotal, tokensTotal)
}

func observe(connection, model, code string, start time.Time) {
	requestDuration.WithLabelValues(connection, model, code).Observe(time.Since(start).Seconds())
}

func observeError(connection, reason string) { errorsTotal.WithLabelValues(connection, reason).Inc() }

func observeTokens(connection, model string, prompt, completion int) {
	tokensTotal.WithLabelValues(connection, model, "prompt").Add(float64(max(prompt, 0)))
	tokensTotal.WithLabelValues(connection, model, "completion").Add(float64(max(completion, 0)))
}
