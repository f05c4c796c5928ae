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

package remote

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// httpClient is the Client of a real service: each method is one request,
// sent with the object's key once the service's gate admits it.
type httpClient struct {
	svc    evalapi.Service
	key    *lazyKey
	gate   *gate
	holder types.UID
	// flow is the holder's namespace: its later calls wait in its line.
	flow string
	// started is set once a call of this reconcile got through the gate.
	started bool
	// confirm holds back the first create while the cache lags.
	confirm *confirmation
}

// begin reads the key and passes the gate: the reconcile's first call is
// admitted at once or told when to come back (*Throttled); later calls wait.
func (c *httpClient) begin(ctx context.Context) (evalapi.APIKey, func(), error) {
	key, err := c.key.get(ctx)
	if err != nil {
		return "", nil, err
	}
	var release func()
	if c.started {
		release, err = c.gate.wait(ctx, c.flow)
	} else {
		release, err = c.gate.admit(c.holder)
	}
	if err != nil {
		return "", nil, err
	}
	c.started = true
	return key, release, nil
}

// beginCreate is begin for a create, once the create's service is confirmed.
func (c *httpClient) beginCreate(ctx context.Context) (evalapi.APIKey, func(), error) {
	if err := c.confirm.before(ctx); err != nil {
		return "", nil, err
	}
	return c.begin(ctx)
}

func (c *httpClient) Observe(ctx context.Context, id string, spec *v1alpha1.MetricSpec) (Observation, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return Observation{}, err
	}
	defer release()
	m, err := c.svc.GetMetric(ctx, key, id)
	if err != nil {
		return Observation{}, err
	}
	return Observation{Metric: metricOf(m), UpToDate: convert.Matches(m, spec)}, nil
}

func (c *httpClient) Create(ctx context.Context, spec *v1alpha1.MetricSpec, guard func(context.Context) error) (
	Metric, error,
) {
	key, release, err := c.beginCreate(ctx)
	if err != nil {
		return Metric{}, err
	}
	defer release()
	if err := guard(ctx); err != nil {
		return Metric{}, err
	}
	return held(c.svc.CreateMetric(ctx, key, string(spec.ProjectID), convert.RequestFor(spec)))
}

// held is a Metric the service answered with, or its failure.
func held(m evalapi.Metric, err error) (Metric, error) {
	if err != nil {
		return Metric{}, err
	}
	return metricOf(m), nil
}

func (c *httpClient) BeforeCreate(ctx context.Context, guard func(context.Context) error) error {
	if err := c.confirm.before(ctx); err != nil {
		return err
	}
	return guard(ctx)
}

func (c *httpClient) Update(ctx context.Context, id string, spec *v1alpha1.MetricSpec) (Metric, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return Metric{}, err
	}
	defer release()
	return held(c.svc.UpdateMetric(ctx, key, id, convert.DesiredVariant(spec)))
}

func (c *httpClient) Delete(ctx context.Context, id string) (bool, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return succeeded(c.svc.DeleteMetric(ctx, key, id))
}

func (c *httpClient) List(ctx context.Context, projectID v1alpha1.ResourceID, cursor string, limit int) (Page, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return Page{}, err
	}
	defer release()
	got, err := c.svc.ListMetrics(ctx, key, string(projectID), evalapi.ListOptions{Limit: limit, Cursor: cursor})
	if err != nil {
		return Page{}, err
	}
	page := Page{Metrics: make([]Metric, len(got.Data))}
	for i, m := range got.Data {
		page.Metrics[i] = metricOf(m)
	}
	if got.NextCursor != nil {
		page.Next = *got.NextCursor
	} else {
		page.Truncated = got.HasMore
	}
	return page, nil
}

func (c *httpClient) DeleteTestcases(ctx context.Context, ids []v1alpha1.ResourceID) (Deletion, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return NotDeleted, err
	}
	defer release()
	return deletion(c.svc.BulkDeleteTestcases(ctx, key, convert.IDStrings(ids)))
}

func (c *httpClient) DeleteTestset(ctx context.Context, id v1alpha1.ResourceID) (Deletion, error) {
	key, release, err := c.begin(ctx)
	if err != nil {
		return NotDeleted, err
	}
	defer release()
	return deletion(c.svc.DeleteTestset(ctx, key, string(id)))
}

func deletion(resp evalapi.SuccessResponse, err error) (Deletion, error) {
	if ok, err := succeeded(resp, err); !ok {
		return NotDeleted, err
	}
	return Deleted, nil
}

func succeeded(resp evalapi.SuccessResponse, err error) (bool, error) {
	return err == nil && resp.Success, err
}
