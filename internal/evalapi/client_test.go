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

package evalapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

const key = evalapi.APIKey("ak_s3cr3t-must-never-leak")

// apiErrorBody is an error answer as only the service itself sends it.
const apiErrorBody = `{"code":"INTERNAL_ERROR","message":"An unexpected error occurred","details":{}}`

func newClient(baseURL string, configure ...func(*evalapi.Options)) *evalapi.Client {
	opts := evalapi.Options{BaseURL: baseURL}
	for _, f := range configure {
		f(&opts)
	}
	c, err := evalapi.NewClient(opts)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// asError returns err as the *evalapi.Error every failure must be.
func asError(err error) *evalapi.Error {
	var e *evalapi.Error
	ExpectWithOffset(1, errors.As(err, &e)).To(BeTrue(), "not an *evalapi.Error: %v", err)
	return e
}

// serve starts an ad-hoc upstream for answers the fake never gives.
func serve(h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	DeferCleanup(srv.Close)
	return srv.URL + "/api/v2"
}

// refusedURL is a base URL nothing listens on.
func refusedURL() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := l.Addr().String()
	Expect(l.Close()).To(Succeed())
	return "http://" + addr + "/api/v2"
}

var _ = Describe("Client", func() {
	var (
		ctx    context.Context
		fake   *evalapitest.Server
		client *evalapi.Client
	)

	BeforeEach(func() {
		ctx = context.Background()
		fake = evalapitest.New(evalapitest.WithKeys(string(key)))
		DeferCleanup(fake.Close)
		client = newClient(fake.URL())
	})

	// Each operation, as a function of the key, with its fake operation name.
	operations := map[string]func(*evalapi.Client, evalapi.APIKey) error{
		evalapitest.OpCreateMetric: func(c *evalapi.Client, k evalapi.APIKey) error {
			_, err := c.CreateMetric(context.Background(), k, "proj-1", evalapitest.MinimalRequest("human", "boolean"))
			return err
		},
		evalapitest.OpBulkDeleteTestcases: func(c *evalapi.Client, k evalapi.APIKey) error {
			_, err := c.BulkDeleteTestcases(context.Background(), k, []string{"tc1", "tc2"})
			return err
		},
		evalapitest.OpDeleteTestset: func(c *evalapi.Client, k evalapi.APIKey) error {
			_, err := c.DeleteTestset(context.Background(), k, "ts1")
			return err
		},
		evalapitest.OpGetMetric: func(c *evalapi.Client, k evalapi.APIKey) error {
			_, err := c.GetMetric(context.Background(), k, "met_1")
			return err
		},
		evalapitest.OpUpdateMetric: func(c *evalapi.Client, k evalapi.APIKey) error {
			_, err := c.UpdateMetric(context.Background(), k, "met_1", evalapi.MetricUpdate{EvalType: "human", OutputType: "int"})
			return err
		},
		evalapitest.OpDeleteMetric: func(c *evalapi.Client, k evalapi.APIKey) error {
			_, err := c.DeleteMetric(context.Background(), k, "met_1")
			return err
		},
		evalapitest.OpListMetrics: func(c *evalapi.Client, k evalapi.APIKey) error {
			_, err := c.ListMetrics(context.Background(), k, "proj-1", evalapi.ListOptions{})
			return err
		},
	}
	// opNames are the operations in a stable order, for table entries.
	opNames := slices.Sorted(maps.Keys(operations))

	DescribeTable("sends each variant as the API expects and returns the response form",
		func(req evalapi.MetricRequest, wantBody string) {
			m, err := client.CreateMetric(ctx, key, "proj-1", req)
			Expect(err).NotTo(HaveOccurred())
			created := fake.CreatedMetrics()
			Expect(created).To(HaveLen(1))
			Expect(string(created[0].Body)).To(Equal(wantBody))
			Expect(created[0].ProjectID).To(Equal("proj-1"))
			Expect(m.ID).NotTo(BeEmpty())
			Expect(m).To(Equal(created[0].Metric))
		},
		Entry("ai/int with every field",
			evalapi.MetricRequest{
				Name: "helpfulness", Description: ptr("How helpful"), EvalType: "ai", OutputType: "int",
				Guidelines: ptr("Be kind"), PromptTemplate: ptr("Rate {{outputs.response}}"),
				EvalModelName: ptr("gpt-4o-mini"), Temperature: ptr(0.5), PassingThreshold: ptr(4.0),
			},
			`{"name":"helpfulness","description":"How helpful","evalType":"ai","outputType":"int","guidelines":"Be kind","promptTemplate":"Rate {{outputs.response}}","evalModelName":"gpt-4o-mini","temperature":0.5,"passingThreshold":4}`),
		Entry("ai/float with zero temperature and threshold, which are sent",
			evalapi.MetricRequest{Name: "m", EvalType: "ai", OutputType: "float", PromptTemplate: ptr("p"), Temperature: ptr(0.0), PassingThreshold: ptr(0.0)},
			`{"name":"m","evalType":"ai","outputType":"float","promptTemplate":"p","temperature":0,"passingThreshold":0}`),
		Entry("ai/boolean, optionals omitted", evalapitest.MinimalRequest("ai", "boolean"),
			`{"name":"m","evalType":"ai","outputType":"boolean","promptTemplate":"Rate {{outputs.response}}"}`),
		Entry("human/int", evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "int", PassingThreshold: ptr(5.0)},
			`{"name":"m","evalType":"human","outputType":"int","passingThreshold":5}`),
		Entry("human/float", evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "float", PassingThreshold: ptr(0.75)},
			`{"name":"m","evalType":"human","outputType":"float","passingThreshold":0.75}`),
		Entry("human/boolean", evalapi.MetricRequest{Name: "m", EvalType: "human", OutputType: "boolean", Guidelines: ptr("Pass if polite")},
			`{"name":"m","evalType":"human","outputType":"boolean","guidelines":"Pass if polite"}`),
		Entry("heuristic/int", evalapitest.MinimalRequest("heuristic", "int"),
			`{"name":"m","evalType":"heuristic","outputType":"int"}`),
		Entry("heuristic/float", evalapi.MetricRequest{Name: "m", Description: ptr(""), EvalType: "heuristic", OutputType: "float", PassingThreshold: ptr(1.0)},
			`{"name":"m","description":"","evalType":"heuristic","outputType":"float","passingThreshold":1}`),
		Entry("heuristic/boolean", evalapi.MetricRequest{Name: "m", Description: ptr("exact match"), EvalType: "heuristic", OutputType: "boolean"},
			`{"name":"m","description":"exact match","evalType":"heuristic","outputType":"boolean"}`),
	)

	It("deletes testcases and testsets, escaping path segments", func() {
		s, err := client.BulkDeleteTestcases(ctx, key, []string{"tc1", "tc/2"})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Success).To(BeTrue())
		s, err = client.DeleteTestset(ctx, key, "ts/1 x?y#z")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Success).To(BeTrue())
		_, err = client.CreateMetric(ctx, key, "proj 1/%2F", evalapitest.MinimalRequest("human", "int"))
		Expect(err).NotTo(HaveOccurred())

		Expect(fake.DeletedTestcases()).To(Equal([]string{"tc1", "tc/2"}))
		Expect(fake.DeletedTestsets()).To(Equal([]string{"ts/1 x?y#z"}))
		Expect(fake.CreatedMetrics()[0].ProjectID).To(Equal("proj 1/%2F"))
	})

	It("refuses path segments that would address another resource, sending nothing", func() {
		for _, id := range []string{"", ".", ".."} {
			_, err := client.DeleteTestset(ctx, key, id)
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindRejected), "id %q", id)
			Expect(asError(err).StatusCode).To(BeZero())
		}
		Expect(fake.Calls(evalapitest.OpDeleteTestset)).To(BeZero())
	})

	It("accepts a base URL with a trailing slash", func() {
		_, err := newClient(fake.URL()+"/").DeleteTestset(ctx, key, "ts1")
		Expect(err).NotTo(HaveOccurred())
		Expect(fake.DeletedTestsets()).To(Equal([]string{"ts1"}))
	})

	It("refuses unusable base URLs", func() {
		for _, u := range []string{"", "ftp://h/api/v2", "http:///api/v2", "http://h/api/v2?x=1", "://"} {
			_, err := evalapi.NewClient(evalapi.Options{BaseURL: u})
			Expect(err).To(HaveOccurred(), "base URL %q", u)
		}
	})

	It("keeps at most MaxInFlight requests in flight, and sends nothing for a request that cannot get a place", func() {
		arrived, release := make(chan struct{}, 8), make(chan struct{})
		base := serve(func(w http.ResponseWriter, _ *http.Request) {
			arrived <- struct{}{}
			<-release
			_, _ = w.Write([]byte(`{"success":true}`))
		})
		c := newClient(base, func(o *evalapi.Options) { o.MaxInFlight = 2 })
		errs := make(chan error, 3)
		for range 3 {
			go func() { _, err := c.DeleteTestset(ctx, key, "ts1"); errs <- err }()
		}
		Eventually(arrived).Should(HaveLen(2))
		Consistently(arrived, 200*time.Millisecond).Should(HaveLen(2), "the third waits for a place")

		impatient, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err := c.DeleteTestset(impatient, key, "ts1")
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
		Expect(err).To(MatchError(ContainSubstring("places for requests in flight")))

		close(release)
		for range 3 {
			Eventually(errs).Should(Receive(BeNil()))
		}
		Expect(arrived).To(HaveLen(3))
	})

	It("sends the bearer key, JSON headers and its User-Agent", func() {
		headers := make(chan http.Header, 2)
		base := serve(func(w http.ResponseWriter, r *http.Request) {
			headers <- r.Header.Clone()
			_, _ = w.Write([]byte(`{"success":true}`))
		})
		c := newClient(base, func(o *evalapi.Options) { o.UserAgent = "test-agent/1" })

		_, err := c.BulkDeleteTestcases(ctx, key, []string{"tc1"})
		Expect(err).NotTo(HaveOccurred())
		h := <-headers
		Expect(h.Get("Authorization")).To(Equal("Bearer " + string(key)))
		Expect(h.Get("Content-Type")).To(Equal("application/json"))
		Expect(h.Get("Accept")).To(Equal("application/json"))
		Expect(h.Get("User-Agent")).To(Equal("test-agent/1"))

		_, err = c.DeleteTestset(ctx, key, "ts1")
		Expect(err).NotTo(HaveOccurred())
		Expect((<-headers).Get("Content-Type")).To(BeEmpty())
	})

	Describe("errors", func() {
		DescribeTable("classifies each answer the service gives",
			func(fault evalapitest.Fault, wantKind evalapi.ErrorKind, wantStatus int, wantCode string) {
				fake.InjectFaults(evalapitest.OpCreateMetric, fault)
				_, err := client.CreateMetric(ctx, key, "p", evalapitest.MinimalRequest("human", "int"))
				e := asError(err)
				Expect(e.Kind).To(Equal(wantKind))
				Expect(e.Op).To(Equal("CreateMetric"))
				Expect(e.StatusCode).To(Equal(wantStatus))
				Expect(e.API).To(HaveField("Code", wantCode))
				Expect(e.API.Details).NotTo(BeNil())
				Expect(fake.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
				Expect(fake.Creates()).To(BeZero())
			},
			Entry("401", evalapitest.Status401, evalapi.KindUnauthorized, 401, evalapi.CodeUnauthorized),
			Entry("429", evalapitest.Status429(""), evalapi.KindRateLimited, 429, evalapi.CodeRateLimited),
			Entry("500", evalapitest.Status500, evalapi.KindUnavailable, 500, evalapi.CodeInternal),
		)

		// Every operation, with each answer that fails it before the service looks at the request.
		faultEntries := make([]TableEntry, 0, 6*len(opNames))
		for _, op := range opNames {
			faultEntries = append(faultEntries,
				Entry(op+": 401", op, evalapitest.Status401, evalapi.KindUnauthorized, 401, time.Duration(0)),
				Entry(op+": 429 with Retry-After", op, evalapitest.Status429("7"), evalapi.KindRateLimited, 429, 7*time.Second),
				Entry(op+": 500 with the service's ApiError", op, evalapitest.Status500, evalapi.KindUnavailable, 500, time.Duration(0)),
				Entry(op+": 503", op, evalapitest.Status(503), evalapi.KindUnavailable, 503, time.Duration(0)),
				Entry(op+": 502 from a gateway", op, evalapitest.Status502Gateway, evalapi.KindOutcomeUnknown, 502, time.Duration(0)),
				Entry(op+": 504 from a gateway", op, evalapitest.Status504Gateway, evalapi.KindOutcomeUnknown, 504, time.Duration(0)),
			)
		}
		DescribeTable("classifies each failure of each operation",
			func(op string, fault evalapitest.Fault, wantKind evalapi.ErrorKind, wantStatus int, wantRetryAfter time.Duration) {
				fake.InjectFaults(op, fault)
				e := asError(operations[op](client, key))
				Expect(e.Kind).To(Equal(wantKind))
				Expect(e.StatusCode).To(Equal(wantStatus))
				Expect(e.RetryAfter).To(Equal(wantRetryAfter))
				Expect(fake.Calls(op)).To(Equal(1))
			},
			faultEntries,
		)

		DescribeTable("classifies an error answer by its status and body",
			func(status int, body string, want evalapi.ErrorKind) {
				base := serve(func(w http.ResponseWriter, _ *http.Request) {
					w.WriteHeader(status)
					_, _ = w.Write([]byte(body))
				})
				_, err := newClient(base).DeleteMetric(ctx, key, "met_1")
				Expect(evalapi.KindOf(err)).To(Equal(want))
				Expect(asError(err).StatusCode).To(Equal(status))
			},
			Entry("500 with the service's ApiError: retryable", 500, apiErrorBody, evalapi.KindUnavailable),
			Entry("501 with the service's ApiError: retryable", 501, apiErrorBody, evalapi.KindUnavailable),
			Entry("500 with an HTML page: a gateway's", 500, "<html>Internal Server Error</html>", evalapi.KindOutcomeUnknown),
			Entry("500 without a body", 500, "", evalapi.KindOutcomeUnknown),
			Entry("500 with an ApiError without details", 500, `{"code":"INTERNAL_ERROR","message":"m"}`, evalapi.KindOutcomeUnknown),
			Entry("500 with an ApiError with null details", 500, `{"code":"INTERNAL_ERROR","message":"m","details":null}`, evalapi.KindOutcomeUnknown),
			Entry("500 with an ApiError without message", 500, `{"code":"INTERNAL_ERROR","details":{}}`, evalapi.KindOutcomeUnknown),
			Entry("500 with an ApiError without code", 500, `{"message":"m","details":{}}`, evalapi.KindOutcomeUnknown),
			Entry("502 even with an ApiError", 502, apiErrorBody, evalapi.KindOutcomeUnknown),
			Entry("504 even with an ApiError", 504, apiErrorBody, evalapi.KindOutcomeUnknown),
			Entry("507 with an HTML page", 507, "<html>Insufficient Storage</html>", evalapi.KindOutcomeUnknown),
			Entry("503 with an HTML page", 503, "<html>Service Unavailable</html>", evalapi.KindUnavailable),
			Entry("503 with an ApiError", 503, apiErrorBody, evalapi.KindUnavailable),
			Entry("429 with an HTML page", 429, "<html>Too Many Requests</html>", evalapi.KindRateLimited),
			Entry("408 with an ApiError: retryable", 408, `{"code":"REQUEST_TIMEOUT","message":"m","details":{}}`, evalapi.KindUnavailable),
			Entry("408 with an HTML page: retryable", 408, "<html>Request Timeout</html>", evalapi.KindUnavailable),
			Entry("401", 401, `{"code":"UNAUTHORIZED","message":"m","details":{}}`, evalapi.KindUnauthorized),
			Entry("404 with the service's NOT_FOUND", 404, `{"code":"NOT_FOUND","message":"m","details":{}}`, evalapi.KindNotFound),
			Entry("404 with an HTML page", 404, "<html>Not Found</html>", evalapi.KindNotFound),
			Entry("405: not served", 405, `{"code":"METHOD_NOT_ALLOWED","message":"m","details":{}}`, evalapi.KindNotFound),
			Entry("400", 400, `{"code":"VALIDATION_ERROR","message":"m","details":{}}`, evalapi.KindRejected),
			Entry("403", 403, `{"code":"FORBIDDEN","message":"m","details":{}}`, evalapi.KindRejected),
			Entry("409", 409, `{"code":"CONFLICT","message":"m","details":{}}`, evalapi.KindRejected),
		)

		It("reports a key the service does not accept as Unauthorized, with the API's message", func() {
			_, err := client.DeleteTestset(ctx, "ak_some-other-key-0123", "ts1")
			e := asError(err)
			Expect(e.Kind).To(Equal(evalapi.KindUnauthorized))
			Expect(e.API.Message).To(Equal("Invalid or missing authentication token"))
			Expect(fake.DeletedTestsets()).To(BeEmpty())
		})

		It("reports a validation error as Rejected with the decoded details", func() {
			_, err := client.CreateMetric(ctx, key, "p", evalapi.MetricRequest{Name: "m", EvalType: "ai", OutputType: "int"})
			e := asError(err)
			Expect(e.Kind).To(Equal(evalapi.KindRejected))
			Expect(e.StatusCode).To(Equal(400))
			Expect(e.API.Code).To(Equal(evalapi.CodeValidation))
			Expect(e.API.Details).To(HaveKeyWithValue("errors", ConsistOf(
				HaveKeyWithValue("field", "promptTemplate"),
			)))
			Expect(err.Error()).To(ContainSubstring("VALIDATION_ERROR"))
		})

		It("parses Retry-After in seconds", func() {
			fake.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Status429("7"))
			_, err := client.DeleteTestset(ctx, key, "ts1")
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindRateLimited))
			Expect(evalapi.RetryAfterOf(err)).To(Equal(7 * time.Second))
		})

		It("parses Retry-After as an HTTP-date", func() {
			at := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
			fake.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Status429(at))
			_, err := client.DeleteTestset(ctx, key, "ts1")
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindRateLimited))
			Expect(evalapi.RetryAfterOf(err)).To(And(BeNumerically(">", 27*time.Second), BeNumerically("<=", 30*time.Second)))
		})

		It("caps an absurd Retry-After and ignores a past or unreadable one", func() {
			fake.InjectFaults(evalapitest.OpDeleteTestset,
				evalapitest.Status429("99999999999999999"),
				evalapitest.Status429("Mon, 02 Jan 2006 15:04:05 GMT"),
				evalapitest.Status429("soon"))
			_, err := client.DeleteTestset(ctx, key, "ts1")
			Expect(evalapi.RetryAfterOf(err)).To(Equal(time.Hour))
			_, err = client.DeleteTestset(ctx, key, "ts1")
			Expect(evalapi.RetryAfterOf(err)).To(BeZero())
			_, err = client.DeleteTestset(ctx, key, "ts1")
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindRateLimited))
			Expect(evalapi.RetryAfterOf(err)).To(BeZero())
		})

		It("reports a reset after the request was sent as OutcomeUnknown, with nothing committed", func() {
			fake.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Reset)
			_, err := client.CreateMetric(ctx, key, "p", evalapitest.MinimalRequest("human", "int"))
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindOutcomeUnknown))
			Expect(asError(err).StatusCode).To(BeZero())
			Expect(fake.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
			Expect(fake.Creates()).To(BeZero())
		})

		It("reports a create committed before the connection dropped as OutcomeUnknown", func() {
			fake.InjectFaults(evalapitest.OpCreateMetric, evalapitest.CommitThenReset)
			_, err := client.CreateMetric(ctx, key, "p", evalapitest.MinimalRequest("human", "int"))
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindOutcomeUnknown))
			Expect(fake.Creates()).To(Equal(1))
		})

		It("reports a timeout as OutcomeUnknown: the service may still commit", func() {
			c := newClient(fake.URL(), func(o *evalapi.Options) { o.Timeout = 100 * time.Millisecond })
			fake.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Slow(time.Minute))
			_, err := c.CreateMetric(ctx, key, "p", evalapitest.MinimalRequest("human", "int"))
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindOutcomeUnknown))
			Expect(err).To(MatchError(context.DeadlineExceeded))
			Eventually(fake.Creates).Should(Equal(1))
		})

		It("reports a refused connection as NotSent", func() {
			_, err := newClient(refusedURL()).CreateMetric(ctx, key, "p", evalapitest.MinimalRequest("human", "int"))
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
			var opErr *net.OpError
			Expect(errors.As(err, &opErr)).To(BeTrue())
			Expect(opErr.Op).To(Equal("dial"))
		})

		DescribeTable("never sends a key that breaks the key rules",
			func(bad evalapi.APIKey) {
				for op, call := range operations {
					err := call(client, bad)
					Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent), op)
					Expect(err).To(MatchError(evalapi.ErrInvalidKey), op)
					Expect(err.Error()).NotTo(ContainSubstring(strings.TrimSpace(string(bad))), op)
					Expect(fake.Calls(op)).To(BeZero(), op)
				}
			},
			Entry("not ak_", evalapi.APIKey("sk_not-an-api-key-at-all")),
			Entry("a trailing newline", key+"\n"),
			Entry("a space inside", evalapi.APIKey("ak_0123456789 abcdef")),
			Entry("a tab", evalapi.APIKey("ak_0123456789\tabcdef")),
			Entry("non-ASCII", evalapi.APIKey("ak_0123456789abcdé")),
			Entry("a control character", evalapi.APIKey("ak_0123456789abcdef\x7f")),
			Entry("15 characters after ak_", evalapi.APIKey("ak_0123456789abcde")),
		)

		It("sends a key of ak_ and 16 visible ASCII characters", func() {
			_, err := client.DeleteTestset(ctx, "ak_!\"#$%&'()*+,-./~", "ts1")
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindUnauthorized), "sent, and refused by the fake")
		})

		It("reports a cancelled context as NotSent without calling the service", func() {
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			_, err := client.DeleteTestset(cancelled, key, "ts1")
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
			Expect(fake.Calls(evalapitest.OpDeleteTestset)).To(BeZero())
		})

		It("reports an answer it cannot read as OutcomeUnknown: the create may be committed", func() {
			for _, body := range []string{"<html>ok</html>", "{}", "null", `{"id":"met_1"} trailing`, strings.Repeat(" ", 2<<20) + `{"id":"met_1"}`} {
				base := serve(func(w http.ResponseWriter, _ *http.Request) {
					w.WriteHeader(http.StatusCreated)
					_, _ = w.Write([]byte(body))
				})
				_, err := newClient(base).CreateMetric(ctx, key, "p", evalapitest.MinimalRequest("human", "int"))
				Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindOutcomeUnknown), "body %.40q", body)
				Expect(asError(err).StatusCode).To(Equal(http.StatusCreated))
			}
		})

		It("reports a deletion answer without success as OutcomeUnknown", func() {
			base := serve(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"deleted":true}`)) })
			_, err := newClient(base).DeleteTestset(ctx, key, "ts1")
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindOutcomeUnknown))
		})

		It("returns success false as the service said it", func() {
			fake.InjectFaults(evalapitest.OpBulkDeleteTestcases, evalapitest.SuccessFalse)
			s, err := client.BulkDeleteTestcases(ctx, key, []string{"tc1"})
			Expect(err).NotTo(HaveOccurred())
			Expect(s.Success).To(BeFalse())
		})

		It("tolerates an error body that is not an ApiError", func() {
			base := serve(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte("<html>Service Unavailable</html>"))
			})
			_, err := newClient(base).DeleteTestset(ctx, key, "ts1")
			e := asError(err)
			Expect(e.Kind).To(Equal(evalapi.KindUnavailable))
			Expect(e.StatusCode).To(Equal(http.StatusServiceUnavailable))
			Expect(e.API).NotTo(HaveOccurred(), "no ApiError was decoded")
		})

		It("does not follow redirects", func() {
			followed := make(chan struct{}, 1)
			base := serve(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					followed <- struct{}{}
					return
				}
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
			})
			_, err := newClient(base).CreateMetric(ctx, key, "p", evalapitest.MinimalRequest("human", "int"))
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindRejected))
			Expect(asError(err).StatusCode).To(Equal(http.StatusFound))
			Expect(followed).NotTo(Receive())
		})
	})

	Describe("the rest of a Metric's life", func() {
		var id string
		// stored is the Metric the fake holds under id.
		stored := func(id string) evalapi.Metric {
			m, ok := fake.Metric(id)
			ExpectWithOffset(1, ok).To(BeTrue(), id)
			return m
		}

		BeforeEach(func() {
			m, err := client.CreateMetric(ctx, key, "proj-1", evalapitest.MinimalRequest("ai", "int"))
			Expect(err).NotTo(HaveOccurred())
			id = m.ID
		})

		It("reads a Metric", func() {
			Expect(fake.EditMetric(id, func(m *evalapi.Metric) { m.Guidelines = "edited remotely" })).To(BeTrue())
			m, err := client.GetMetric(ctx, key, id)
			Expect(err).NotTo(HaveOccurred())
			Expect(m).To(Equal(stored(id)))
			Expect(m.Guidelines).To(Equal("edited remotely"))
		})

		It("changes a Metric to the desired variant with one PATCH", func() {
			// The whole human/float variant, at the service's defaults where unset.
			want := evalapi.MetricUpdate{Name: ptr("n"), Description: evalapi.NullableFrom[string](nil), EvalType: "human",
				OutputType: "float", Guidelines: ptr("be fair"), PassingThreshold: ptr(0.9)}
			m, err := client.UpdateMetric(ctx, key, id, want)
			Expect(err).NotTo(HaveOccurred())
			Expect(m).To(Equal(evalapi.Metric{ID: id, Name: "n", EvalType: "human", OutputType: "float", Guidelines: "be fair", PassingThreshold: ptr(0.9)}))
			Expect(evalapi.Differs(m, want)).To(BeFalse())
			Expect(stored(id)).To(Equal(m))
			Expect(fake.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
		})

		It("sends PATCH and DELETE to the escaped id, with an explicit null description", func() {
			got := make(chan string, 2)
			base := serve(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				got <- r.Method + " " + r.URL.EscapedPath() + " " + r.Header.Get("Content-Type") + " " + string(body)
				_, _ = w.Write([]byte(`{"id":"met/1","name":"m","description":null,"evalType":"human","outputType":"boolean","guidelines":"","success":true}`))
			})
			c := newClient(base)
			_, err := c.UpdateMetric(ctx, key, "met/1", evalapi.MetricUpdate{EvalType: "human", OutputType: "boolean", Description: evalapi.NullableFrom[string](nil)})
			Expect(err).NotTo(HaveOccurred())
			Expect(<-got).To(Equal(`PATCH /api/v2/metrics/met%2F1 application/json {"description":null,"evalType":"human","outputType":"boolean"}`))
			_, err = c.DeleteMetric(ctx, key, "met/1")
			Expect(err).NotTo(HaveOccurred())
			Expect(<-got).To(Equal(`DELETE /api/v2/metrics/met%2F1  `))
		})

		It("deletes a Metric, and reports a second deletion as NotFound", func() {
			s, err := client.DeleteMetric(ctx, key, id)
			Expect(err).NotTo(HaveOccurred())
			Expect(s.Success).To(BeTrue())
			_, found := fake.Metric(id)
			Expect(found).To(BeFalse())

			_, err = client.DeleteMetric(ctx, key, id)
			e := asError(err)
			Expect(e.Kind).To(Equal(evalapi.KindNotFound))
			Expect(e.StatusCode).To(Equal(http.StatusNotFound))
			Expect(e.API).To(HaveField("Code", evalapi.CodeNotFound))
		})

		It("reports an unknown id as NotFound to every operation on it", func() {
			for _, op := range []string{evalapitest.OpGetMetric, evalapitest.OpUpdateMetric, evalapitest.OpDeleteMetric} {
				e := asError(operations[op](client, key)) // met_1 does not exist
				Expect(e.Kind).To(Equal(evalapi.KindNotFound), op)
				Expect(e.API).To(HaveField("Code", evalapi.CodeNotFound), op)
			}
		})

		It("reports the operations an older service does not serve as NotFound", func() {
			old := evalapitest.New(evalapitest.WithKeys(string(key)), evalapitest.WithoutMetricLifecycle())
			DeferCleanup(old.Close)
			c := newClient(old.URL())
			for op, status := range map[string]int{
				evalapitest.OpGetMetric: 404, evalapitest.OpUpdateMetric: 404, evalapitest.OpDeleteMetric: 404, evalapitest.OpListMetrics: 405,
			} {
				e := asError(operations[op](c, key))
				Expect(e.Kind).To(Equal(evalapi.KindNotFound), op)
				Expect(e.StatusCode).To(Equal(status), op)
				Expect(old.Calls(op)).To(Equal(1), op)
			}
		})

		It("reports a rejected PATCH as Rejected, changing nothing", func() {
			before := stored(id)
			_, err := client.UpdateMetric(ctx, key, id, evalapi.MetricUpdate{EvalType: "human", OutputType: "int", Temperature: ptr(1.0)})
			e := asError(err)
			Expect(e.Kind).To(Equal(evalapi.KindRejected))
			Expect(e.API.Details).To(HaveKeyWithValue("errors", ConsistOf(HaveKeyWithValue("field", "temperature"))))
			Expect(stored(id)).To(Equal(before))
		})

		It("follows nextCursor through a project's Metrics, newest first", func() {
			for range 4 {
				_, err := client.CreateMetric(ctx, key, "proj-1", evalapitest.MinimalRequest("human", "boolean"))
				Expect(err).NotTo(HaveOccurred())
			}
			_, err := client.CreateMetric(ctx, key, "proj-2", evalapitest.MinimalRequest("human", "boolean"))
			Expect(err).NotTo(HaveOccurred())

			var got []evalapi.Metric
			opts := evalapi.ListOptions{Limit: 2}
			for pages := 1; ; pages++ {
				page, err := client.ListMetrics(ctx, key, "proj-1", opts)
				Expect(err).NotTo(HaveOccurred())
				Expect(page.Total).To(HaveValue(Equal(5)))
				got = append(got, page.Data...)
				if !page.HasMore {
					Expect(page.NextCursor).To(BeNil())
					Expect(pages).To(Equal(3))
					break
				}
				opts.Cursor = *page.NextCursor
			}
			var want []evalapi.Metric
			for _, rm := range slices.Backward(fake.Metrics()) {
				if rm.ProjectID == "proj-1" {
					want = append(want, rm.Metric)
				}
			}
			Expect(got).To(Equal(want))
		})

		It("sends limit and cursor only when set, escaped", func() {
			queries := make(chan string, 2)
			base := serve(func(w http.ResponseWriter, r *http.Request) {
				queries <- r.URL.EscapedPath() + "?" + r.URL.RawQuery
				_, _ = w.Write([]byte(`{"data":[],"nextCursor":null,"hasMore":false}`))
			})
			c := newClient(base)
			page, err := c.ListMetrics(ctx, key, "proj 1", evalapi.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(page).To(Equal(evalapi.MetricPage{Data: []evalapi.Metric{}}))
			Expect(<-queries).To(Equal("/api/v2/projects/proj%201/metrics?"))
			_, err = c.ListMetrics(ctx, key, "p", evalapi.ListOptions{Limit: 5, Cursor: "a b&c=/"})
			Expect(err).NotTo(HaveOccurred())
			Expect(<-queries).To(Equal("/api/v2/projects/p/metrics?cursor=a+b%26c%3D%2F&limit=5"))
		})

		It("reports a list answer it cannot read as OutcomeUnknown", func() {
			for _, body := range []string{
				`{}`,
				`{"data":null,"nextCursor":null,"hasMore":false}`,
				`{"data":[],"nextCursor":null}`,
				`{"data":[],"nextCursor":null,"hasMore":true}`,
				`{"data":[{"name":"no id"}],"nextCursor":null,"hasMore":false}`,
				`<html>ok</html>`,
			} {
				base := serve(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) })
				_, err := newClient(base).ListMetrics(ctx, key, "p", evalapi.ListOptions{})
				Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindOutcomeUnknown), body)
			}
		})
	})

	Describe("the API key", func() {
		// expectNoKey fails when the key shows in any rendering of err.
		expectNoKey := func(err error, secret evalapi.APIKey, what string) {
			ExpectWithOffset(1, err).To(HaveOccurred(), what)
			for _, text := range []string{err.Error(), fmt.Sprintf("%v %+v %#v", err, err, err)} {
				ExpectWithOffset(1, text).NotTo(ContainSubstring(string(secret)), what)
			}
		}

		It("never appears in an error, whatever the failure", func() {
			faults := map[string]evalapitest.Fault{
				"401": evalapitest.Status401, "429": evalapitest.Status429("1"), "500": evalapitest.Status500,
				"reset": evalapitest.Reset, "commit-then-reset": evalapitest.CommitThenReset,
				"502": evalapitest.Status502Gateway,
			}
			for op, call := range operations {
				for name, fault := range faults {
					fake.InjectFaults(op, fault)
					// A fresh client each time: Go's transport replays a GET whose
					// reused connection was reset, which would hide the fault.
					expectNoKey(call(newClient(fake.URL()), key), key, op+"/"+name)
				}
				expectNoKey(call(client, "ak_rotated-away-secret"), "ak_rotated-away-secret", op+"/unknown key")
				expectNoKey(call(client, "sk_invalid-secret"), "sk_invalid-secret", op+"/invalid key")
				expectNoKey(call(newClient(refusedURL()), key), key, op+"/refused")
			}
			_, err := client.CreateMetric(ctx, key, "p", evalapi.MetricRequest{Name: "m"})
			expectNoKey(err, key, "rejected")
			fake.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Slow(time.Minute))
			_, err = newClient(fake.URL(), func(o *evalapi.Options) { o.Timeout = 50 * time.Millisecond }).DeleteTestset(ctx, key, "ts1")
			expectNoKey(err, key, "timeout")
		})

		It("is redacted when the service echoes it in an error", func() {
			base := serve(func(w http.ResponseWriter, r *http.Request) {
				auth := r.Header.Get("Authorization")
				w.WriteHeader(http.StatusForbidden)
				_, _ = fmt.Fprintf(w, `{"code":"FORBIDDEN %[1]s","message":"key %[1]s is not allowed","details":{"key":%[1]q}}`, auth)
			})
			_, err := newClient(base).DeleteTestset(ctx, key, "ts1")
			expectNoKey(err, key, "echo")
			e := asError(err)
			Expect(e.Kind).To(Equal(evalapi.KindRejected))
			Expect(e.API.Message).To(Equal("key Bearer [redacted] is not allowed"))
			Expect(fmt.Sprint(e.API.Details)).NotTo(ContainSubstring(string(key)))
		})
	})

	Describe("the client-side rate limit", func() {
		It("sends a burst at once, then waits, giving up when the context would expire first", func() {
			c := newClient(fake.URL(), func(o *evalapi.Options) { o.QPS, o.Burst = 0.5, 2 })
			for range 2 {
				_, err := c.DeleteTestset(ctx, key, "ts1")
				Expect(err).NotTo(HaveOccurred())
			}
			short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			_, err := c.DeleteTestset(short, key, "ts1")
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
			Expect(err.Error()).To(ContainSubstring("rate limit"))
			Expect(fake.Calls(evalapitest.OpDeleteTestset)).To(Equal(2))
		})

		It("sends once the wait is over", func() {
			c := newClient(fake.URL(), func(o *evalapi.Options) { o.QPS = 20 })
			_, err := c.DeleteTestset(ctx, key, "ts1")
			Expect(err).NotTo(HaveOccurred())
			tooShort, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
			defer cancel()
			_, err = c.DeleteTestset(tooShort, key, "ts1")
			Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindNotSent))
			longEnough, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err = c.DeleteTestset(longEnough, key, "ts1")
			Expect(err).NotTo(HaveOccurred())
			Expect(fake.Calls(evalapitest.OpDeleteTestset)).To(Equal(2))
		})
	})

	Describe("metrics", func() {
		// The suite's client is the flags' (--api-url) service.
		requests := func(op, code string) float64 {
			return testutil.ToFloat64(evalapi.UpstreamRequests.WithLabelValues("ManagerFlags", op, code))
		}
		observations := func(op string) uint64 {
			var m dto.Metric
			Expect(evalapi.UpstreamDuration.WithLabelValues("ManagerFlags", op).(prometheus.Histogram).Write(&m)).To(Succeed())
			return m.GetHistogram().GetSampleCount()
		}

		It("counts requests by operation and status, and times them", func() {
			created, failed, dropped := requests("create_metric", "201"), requests("delete_testset", "500"), requests("delete_testset", "error")
			createTimes, deleteTimes := observations("create_metric"), observations("delete_testset")

			_, err := client.CreateMetric(ctx, key, "p", evalapitest.MinimalRequest("human", "int"))
			Expect(err).NotTo(HaveOccurred())
			fake.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Status500, evalapitest.Reset)
			_, _ = client.DeleteTestset(ctx, key, "ts1")
			_, _ = client.DeleteTestset(ctx, key, "ts1")
			_, _ = client.DeleteTestset(ctx, "sk_never-sent", "ts1")

			Expect(requests("create_metric", "201")).To(Equal(created + 1))
			Expect(requests("delete_testset", "500")).To(Equal(failed + 1))
			Expect(requests("delete_testset", "error")).To(Equal(dropped + 1))
			Expect(observations("create_metric")).To(Equal(createTimes + 1))
			Expect(observations("delete_testset")).To(Equal(deleteTimes + 2))
		})

		It("counts the Metric operations under their own labels", func() {
			labels := map[string]string{
				evalapitest.OpGetMetric: "404", evalapitest.OpUpdateMetric: "404", evalapitest.OpDeleteMetric: "404", evalapitest.OpListMetrics: "200",
			}
			before := map[string]float64{}
			for op, code := range labels {
				before[op] = requests(op, code)
			}
			for op := range labels {
				_ = operations[op](client, key)
			}
			for op, code := range labels {
				Expect(requests(op, code)).To(Equal(before[op]+1), op)
			}
		})
	})
})
