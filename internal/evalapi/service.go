package evalapi

import (
	"context"
)

// APIKey is a bearer key of the service (`ak_...`). Its String and GoString
// methods redact it, so a key passed to a logger or a format verb by mistake
// does not leak.
type APIKey string

// KeyPrefix starts every valid API key. A key without it is never sent.
const KeyPrefix = "ak_"

func (APIKey) String() string   { return "ak_[redacted]" }
func (APIKey) GoString() string { return "ak_[redacted]" }

// Valid reports whether the key has the shape of an API key.
func (k APIKey) Valid() bool {
	return len(k) > len(KeyPrefix) && string(k[:len(KeyPrefix)]) == KeyPrefix
}

// Service is the Evaluation Service as the reconcilers use it. Both
// implementations (Client for a real service, Standalone for none) return
// *Error for every failure, so callers can tell whether to retry.
type Service interface {
	// CreateMetric creates a Metric in project projectID and returns it in response form.
	CreateMetric(ctx context.Context, key APIKey, projectID string, req MetricRequest) (Metric, error)
	// BulkDeleteTestcases deletes the testcases with the given ids.
	BulkDeleteTestcases(ctx context.Context, key APIKey, ids []string) (SuccessResponse, error)
	// DeleteTestset deletes one testset.
	DeleteTestset(ctx context.Context, key APIKey, testsetID string) (SuccessResponse, error)
	// GetMetric reads one Metric in response form.
	GetMetric(ctx context.Context, key APIKey, metricID string) (Metric, error)
	// UpdateMetric applies req to one Metric and returns it in response form.
	UpdateMetric(ctx context.Context, key APIKey, metricID string, req MetricUpdate) (Metric, error)
	// DeleteMetric deletes one Metric.
	DeleteMetric(ctx context.Context, key APIKey, metricID string) (SuccessResponse, error)
	// ListMetrics returns one page of project projectID's Metrics, newest first.
	ListMetrics(ctx context.Context, key APIKey, projectID string, opts ListOptions) (MetricPage, error)
}

// operation names one Service method in errors (name) and in metrics (label).
type operation struct {
	name  string
	label string
}

var (
	opCreateMetric        = operation{name: "CreateMetric", label: "create_metric"}
	opBulkDeleteTestcases = operation{name: "BulkDeleteTestcases", label: "bulk_delete_testcases"}
	opDeleteTestset       = operation{name: "DeleteTestset", label: "delete_testset"}
	opGetMetric           = operation{name: "GetMetric", label: "get_metric"}
	opUpdateMetric        = operation{name: "UpdateMetric", label: "update_metric"}
	opDeleteMetric        = operation{name: "DeleteMetric", label: "delete_metric"}
	opListMetrics         = operation{name: "ListMetrics", label: "list_metrics"}
)
