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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Defaults and limits of the Client.
const (
	// DefaultTimeout bounds each request when Options.Timeout is unset.
	DefaultTimeout = 10 * time.Second
	// DefaultUserAgent is sent when Options.UserAgent is unset.
	DefaultUserAgent = "eval-operator"
	// maxBodyBytes caps how much of an answer is read.
	maxBodyBytes = 1 << 20
	// maxRetryAfter caps the service's Retry-After, so an absurd value can
	// neither overflow a Duration nor park an object for days.
	maxRetryAfter = time.Hour
	// redacted replaces the key wherever the service echoed it.
	redacted = "[redacted]"
)

// Options configure a Client.
type Options struct {
	// BaseURL is the service's base URL, ending in /api/v2, e.g.
	// https://eval.example.com/api/v2.
	BaseURL string
	// HTTPClient sends the requests. Nil means a client with its own copy of
	// http.DefaultTransport. Redirects are never followed: a redirected POST
	// would be replayed as a GET, and a redirect means BaseURL is wrong.
	HTTPClient *http.Client
	// Timeout bounds each request, from sending it to reading the answer.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// QPS limits the requests sent per second; zero or less means no limit.
	QPS float64
	// Burst is how many requests may be sent at once above QPS; values
	// below 1 mean 1. Ignored without QPS.
	Burst int
	// UserAgent is the User-Agent header; empty means DefaultUserAgent.
	UserAgent string
	// MaxInFlight limits the requests in flight at once; zero or less means
	// no limit. With more reconcile workers than it, the service is kept as
	// busy as it allows while the other workers write to the API server,
	// instead of every worker waiting on the service in turn.
	MaxInFlight int
	// MetricsLabel is the service label of the client's request metrics;
	// empty means "ManagerFlags".
	MetricsLabel string
}

// Client is the Service of a real Evaluation Service, over HTTP. It is safe
// for concurrent use. Every failure is an *Error whose Kind says whether the
// service may have acted on the request; no error text holds the API key.
type Client struct {
	base      *url.URL
	http      *http.Client
	timeout   time.Duration
	limiter   *rate.Limiter
	userAgent string
	// inflight holds a token per request in flight; nil without a limit.
	inflight chan struct{}
	// label is the service label of the request metrics.
	label string
}

var _ Service = (*Client)(nil)

// NewClient returns a Client for opts, or an error when BaseURL is unusable.
func NewClient(opts Options) (*Client, error) {
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:      base,
		http:      withoutRedirects(opts.HTTPClient),
		timeout:   opts.Timeout,
		limiter:   rate.NewLimiter(rate.Inf, 0),
		userAgent: opts.UserAgent,
		label:     opts.MetricsLabel,
	}
	if c.label == "" {
		c.label = "ManagerFlags"
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if opts.QPS > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(opts.QPS), max(opts.Burst, 1))
	}
	if opts.MaxInFlight > 0 {
		c.inflight = make(chan struct{}, opts.MaxInFlight)
	}
	return c, nil
}

// BaseURL is the service's base URL.
func (c *Client) BaseURL() string { return c.base.String() }

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid base URL %q: want http(s)://host/api/v2", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("invalid base URL %q: it must not have a query or fragment", u.Redacted())
	}
	return u, nil
}

func withoutRedirects(hc *http.Client) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Every reconcile worker talks to the same host; the default of 2
		// idle connections would reopen (and re-handshake) most of them.
		t.MaxIdleConnsPerHost = 64
		c.Transport = t
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// CreateMetric sends POST /projects/{projectId}/metrics.
func (c *Client) CreateMetric(ctx context.Context, key APIKey, projectID string, req MetricRequest) (Metric, error) {
	var m Metric
	err := c.call(ctx, key, call{
		op:       opCreateMetric,
		method:   http.MethodPost,
		segments: []string{"projects", projectID, "metrics"},
		body:     req,
		decode:   func(data []byte) error { return decodeMetric(data, &m) },
	})
	return m, err
}

// BulkDeleteTestcases sends POST /testcases/bulk-delete.
func (c *Client) BulkDeleteTestcases(ctx context.Context, key APIKey, ids []string) (SuccessResponse, error) {
	var s SuccessResponse
	err := c.call(ctx, key, call{
		op:       opBulkDeleteTestcases,
		method:   http.MethodPost,
		segments: []string{"testcases", "bulk-delete"},
		body:     BulkDeleteRequest{IDs: ids},
		decode:   func(data []byte) error { return decodeSuccess(data, &s) },
	})
	return s, err
}

// DeleteTestset sends DELETE /testsets/{testsetId}.
func (c *Client) DeleteTestset(ctx context.Context, key APIKey, testsetID string) (SuccessResponse, error) {
	var s SuccessResponse
	err := c.call(ctx, key, call{
		op:       opDeleteTestset,
		method:   http.MethodDelete,
		segments: []string{"testsets", testsetID},
		decode:   func(data []byte) error { return decodeSuccess(data, &s) },
	})
	return s, err
}

// GetMetric sends GET /metrics/{metricId}.
func (c *Client) GetMetric(ctx context.Context, key APIKey, metricID string) (Metric, error) {
	var m Metric
	err := c.call(ctx, key, call{
		op:       opGetMetric,
		method:   http.MethodGet,
		segments: []string{"metrics", metricID},
		decode:   func(data []byte) error { return decodeMetric(data, &m) },
	})
	return m, err
}

// UpdateMetric sends PATCH /metrics/{metricId}.
func (c *Client) UpdateMetric(ctx context.Context, key APIKey, metricID string, req MetricUpdate) (Metric, error) {
	var m Metric
	err := c.call(ctx, key, call{
		op:       opUpdateMetric,
		method:   http.MethodPatch,
		segments: []string{"metrics", metricID},
		body:     req,
		decode:   func(data []byte) error { return decodeMetric(data, &m) },
	})
	return m, err
}

// DeleteMetric sends DELETE /metrics/{metricId}.
func (c *Client) DeleteMetric(ctx context.Context, key APIKey, metricID string) (SuccessResponse, error) {
	var s SuccessResponse
	err := c.call(ctx, key, call{
		op:       opDeleteMetric,
		method:   http.MethodDelete,
		segments: []string{"metrics", metricID},
		decode:   func(data []byte) error { return decodeSuccess(data, &s) },
	})
	return s, err
}

// ListMetrics sends GET /projects/{projectId}/metrics?limit=&cursor=.
func (c *Client) ListMetrics(ctx context.Context, key APIKey, projectID string, opts ListOptions) (MetricPage, error) {
	var p MetricPage
	err := c.call(ctx, key, call{
		op:       opListMetrics,
		method:   http.MethodGet,
		segments: []string{"projects", projectID, "metrics"},
		query:    opts.query(),
		decode:   func(data []byte) error { return decodePage(data, &p, metricID) },
	})
	return p, err
}

// query is the list's query: limit and cursor where set.
func (o ListOptions) query() url.Values {
	query := url.Values{}
	if o.Limit != 0 {
		query.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		query.Set("cursor", o.Cursor)
	}
	return query
}

// ProbeProjects sends GET /projects?limit=1: the cheapest authenticated
// call, which needs no project id, as a connection probe. It succeeds when
// the service answers 200 with a page of projects; the projects are not read.
func (c *Client) ProbeProjects(ctx context.Context, key APIKey) error {
	return c.call(ctx, key, call{
		op:       opListProjects,
		method:   http.MethodGet,
		segments: []string{"projects"},
		query:    url.Values{"limit": {"1"}},
		decode: func(data []byte) error {
			var page struct {
				Data []json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(data, &page); err != nil {
				return fmt.Errorf("decoding the page: %w", err)
			}
			if page.Data == nil {
				return errNoData
			}
			return nil
		},
	})
}

// call is one request of an operation.
type call struct {
	op       serviceOp
	method   string
	segments []string   // unescaped path segments below the base URL
	query    url.Values // nil: no query
	body     any        // nil: no body
	decode   func([]byte) error
}

// answer is what came back from a request that reached the transport.
type answer struct {
	resp *http.Response
	body []byte
	// bodyErr is set when the body could not be read whole.
	bodyErr error
}

func (c *Client) call(ctx context.Context, key APIKey, cl call) error {
	if !key.Valid() {
		return invalidKey(cl.op)
	}
	req, err := c.newRequest(cl, key)
	if err != nil {
		return &Error{Kind: KindRejected, Op: cl.op.name, Err: err}
	}
	if err := c.limiter.Wait(ctx); err != nil {
		return &Error{Kind: KindNotSent, Op: cl.op.name, Err: fmt.Errorf("waiting for the client-side rate limit: %w", err)}
	}
	release, err := c.acquire(ctx)
	if err != nil {
		return &Error{Kind: KindNotSent, Op: cl.op.name, Err: err}
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	ans, wrote, err := c.send(ctx, req, cl.op)
	if err != nil {
		return &Error{Kind: transportKind(wrote), Op: cl.op.name, Err: err}
	}
	return ans.check(cl, key)
}

// acquire waits, at most the request timeout, for a place among the
// requests in flight; release gives it back.
func (c *Client) acquire(ctx context.Context) (release func(), err error) {
	if c.inflight == nil {
		return func() {}, nil
	}
	wait, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	select {
	case c.inflight <- struct{}{}:
		return func() { <-c.inflight }, nil
	case <-wait.Done():
		return nil, fmt.Errorf("waiting for one of the %d places for requests in flight: %w", cap(c.inflight), wait.Err())
	}
}

// newRequest builds the request without a context; call adds it.
func (c *Client) newRequest(cl call, key APIKey) (*http.Request, error) {
	target, err := c.endpoint(cl.segments)
	if err != nil {
		return nil, err
	}
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	body := io.Reader(http.NoBody)
	if cl.body != nil {
		data, err := json.Marshal(cl.body)
		if err != nil {
			return nil, fmt.Errorf("encoding the request: %w", err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequest(cl.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+string(key))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// endpoint joins the escaped segments to the base URL. Empty, "." and ".."
// segments are refused: they would address another resource.
func (c *Client) endpoint(segments []string) (string, error) {
	escaped := make([]string, len(segments))
	for i, s := range segments {
		if s == "" || s == "." || s == ".." {
			return "", fmt.Errorf("invalid path segment %q", s)
		}
		escaped[i] = url.PathEscape(s)
	}
	return c.base.JoinPath(escaped...).String(), nil
}

// send does the request and reads the answer. wrote reports whether the
// request was ever written whole, which tells a request the service cannot
// have seen from one it may have acted on.
func (c *Client) send(ctx context.Context, req *http.Request, op serviceOp) (ans answer, wrote bool, err error) {
	var written atomic.Bool
	trace := &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				written.Store(true)
			}
		},
	}
	req = req.WithContext(httptrace.WithClientTrace(ctx, trace))
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		observe(c.label, op, 0, start)
		return answer{}, written.Load(), err
	}
	defer func() { _ = resp.Body.Close() }()
	ans = answer{resp: resp}
	ans.body, ans.bodyErr = readCapped(resp.Body)
	observe(c.label, op, resp.StatusCode, start)
	return ans, true, nil
}

// transportKind classifies a request that got no answer. Dial, DNS and TLS
// failures, and a context that ended first, all happen before the request is
// written; once it was written the service may have acted on it.
func transportKind(wrote bool) ErrorKind {
	if wrote {
		return KindOutcomeUnknown
	}
	return KindNotSent
}

var errBodyTooLarge = fmt.Errorf("the answer is larger than %d bytes", maxBodyBytes)

func readCapped(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(data) > maxBodyBytes {
		return nil, errBodyTooLarge
	}
	return data, nil
}

// check turns the answer into the call's result or its *Error.
func (a answer) check(cl call, key APIKey) error {
	status := a.resp.StatusCode
	if status < 200 || status > 299 {
		apiErr := decodeAPIError(a.body, key)
		return &Error{
			Kind:       statusKind(status, apiErr),
			Op:         cl.op.name,
			StatusCode: status,
			API:        apiErr,
			RetryAfter: parseRetryAfter(a.resp.Header.Get("Retry-After"), time.Now()),
		}
	}
	err := a.bodyErr
	if err == nil {
		err = cl.decode(a.body)
	}
	if err != nil {
		// The service said yes but what it said is lost: a create may have been committed.
		return &Error{Kind: KindOutcomeUnknown, Op: cl.op.name, StatusCode: status, Err: err}
	}
	return nil
}

// statusKind classifies an error answer; apiErr is its decoded body, if any.
func statusKind(status int, apiErr *APIError) ErrorKind {
	switch {
	case status == http.StatusUnauthorized:
		return KindUnauthorized
	case status == http.StatusTooManyRequests:
		return KindRateLimited
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		return KindNotFound
	case status == http.StatusServiceUnavailable, status == http.StatusRequestTimeout:
		// 408: the request was not read whole, so nothing was acted on.
		return KindUnavailable
	case status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
		// A gateway answered; it may have forwarded the request before it failed.
		return KindOutcomeUnknown
	case status >= 500 && fromService(apiErr):
		return KindUnavailable
	case status >= 500:
		// Not the service's own body, so a gateway answered, as above.
		return KindOutcomeUnknown
	default:
		// Other 4xx, and 3xx: the request, or the base URL, must change.
		return KindRejected
	}
}

// fromService reports whether e is a whole ApiError, as only the service
// itself sends: a code, a message and a details object.
func fromService(e *APIError) bool {
	return e != nil && e.Code != "" && e.Message != "" && e.Details != nil
}

// decodeAPIError returns the ApiError in body, or nil when body is not one
// (a proxy's HTML page, say). A service that echoes the key in its error
// must not leak it into conditions and events, so the key is redacted first.
func decodeAPIError(body []byte, key APIKey) *APIError {
	body = bytes.ReplaceAll(body, []byte(key), []byte(redacted))
	var e APIError
	if json.Unmarshal(body, &e) != nil || e.Code == "" {
		return nil
	}
	return &e
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP-date.
// It returns 0 when the header is absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

var (
	errNoMetricID = errors.New("the answer has no metric id")
	errNoID       = errors.New("the answer has an item without an id")
	errNoSuccess  = errors.New("the answer has no success field")
	errNoData     = errors.New("the answer has no data")
	errNoHasMore  = errors.New("the answer has no hasMore field")
	errNoCursor   = errors.New("the answer has more items but no nextCursor")
)

func decodeMetric(data []byte, m *Metric) error {
	if err := json.Unmarshal(data, m); err != nil {
		return fmt.Errorf("decoding the metric: %w", err)
	}
	if m.ID == "" {
		return errNoMetricID
	}
	return nil
}

func decodeSuccess(data []byte, s *SuccessResponse) error {
	var body struct {
		Success *bool `json:"success"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	if body.Success == nil {
		return errNoSuccess
	}
	s.Success = *body.Success
	return nil
}

// decodePage decodes a list answer whose items id names: data, hasMore
// and, when there is more, nextCursor are required, and every item has an id.
func decodePage[T any](data []byte, p *Page[T], id func(T) string) error {
	var body struct {
		Data       []T     `json:"data"`
		NextCursor *string `json:"nextCursor"`
		HasMore    *bool   `json:"hasMore"`
		Total      *int    `json:"total"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return fmt.Errorf("decoding the page: %w", err)
	}
	switch {
	case body.Data == nil:
		return errNoData
	case body.HasMore == nil:
		return errNoHasMore
	case *body.HasMore && (body.NextCursor == nil || *body.NextCursor == ""):
		return errNoCursor
	}
	for _, item := range body.Data {
		if id(item) == "" {
			return errNoID
		}
	}
	*p = Page[T]{Data: body.Data, NextCursor: body.NextCursor, HasMore: *body.HasMore, Total: body.Total}
	return nil
}

func metricID(m Metric) string           { return m.ID }
func testsetID(t Testset) string         { return t.ID }
func testcaseID(t Testcase) string       { return t.ID }
func runID(r Run) string                 { return r.ID }
func recordID(r RecordWithScores) string { return r.ID }

// decodeOne decodes an answer holding one item that id names.
func decodeOne[T any](data []byte, v *T, id func(T) string) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	if id(*v) == "" {
		return errNoID
	}
	return nil
}
