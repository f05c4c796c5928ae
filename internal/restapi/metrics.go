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
