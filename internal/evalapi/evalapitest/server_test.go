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

package evalapitest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

// unauthorizedBody is the description's example of UnauthenticatedError.
const unauthorizedBody = `{"code":"UNAUTHORIZED","message":"Invalid or missing authentication token","details":{}}`

// answer is what the Server sent back.
type answer struct {
	status int
	header http.Header
	body   string
}

var _ = Describe("Server", func() {
	var fake *evalapitest.Server

	BeforeEach(func() {
		fake = evalapitest.New()
		DeferCleanup(fake.Close)
	})

	// send sends a raw request with the default key and a JSON body, unless told otherwise.
	send := func(method, path, body string, edit ...func(*http.Request)) (answer, error) {
		req, err := http.NewRequest(method, fake.URL()+path, strings.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+evalapitest.DefaultKey)
		req.Header.Set("Content-Type", "application/json")
		for _, f := range edit {
			f(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return answer{}, err
		}
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, resp.Header, string(data)}, err
	}
	do := func(method, path, body string, edit ...func(*http.Request)) answer {
		a, err := send(method, path, body, edit...)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		return a
	}
	create := func(body string) answer { return do(http.MethodPost, "/projects/p1/metrics", body) }
	withAuth := func(v string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", v) }
	}
	// fields returns the fields of a VALIDATION_ERROR answer.
	fields := func(a answer) []string {
		var e struct {
			Code    string
			Details struct {
				Errors []struct{ Field, Message string }
			}
		}
		ExpectWithOffset(1, json.Unmarshal([]byte(a.body), &e)).To(Succeed(), a.body)
		ExpectWithOffset(1, a.status).To(Equal(http.StatusBadRequest))
		ExpectWithOffset(1, e.Code).To(Equal(evalapi.CodeValidation))
		fs := make([]string, 0, len(e.Details.Errors))
		for _, fe := range e.Details.Errors {
			ExpectWithOffset(1, fe.Message).NotTo(BeEmpty())
			fs = append(fs, fe.Field)
		}
		return fs
	}

	It("answers a create with 201 and the response form, and records it", func() {
		a := create(`{"name":"m","evalType":"human","outputType":"boolean"}`)
		Expect(a.status).To(Equal(http.StatusCreated))
		Expect(a.header.Get("Content-Type")).To(Equal("application/json"))
		Expect(a.body).To(Equal(`{"id":"met_00000001","name":"m","description":null,"evalType":"human","outputType":"boolean","guidelines":""}`))

		a = create(`{"name":"n","evalType":"ai","outputType":"int","promptTemplate":"p","passingThreshold":4.0}`)
		Expect(a.body).To(Equal(`{"id":"met_00000002","name":"n","description":null,"evalType":"ai","outputType":"int","guidelines":"","promptTemplate":"p","evalModelName":"gpt-4o","temperature":0,"passingThreshold":4}`))

		Expect(fake.Creates()).To(Equal(2))
		Expect(fake.Calls(evalapitest.OpCreateMetric)).To(Equal(2))
		created := fake.CreatedMetrics()
		Expect(created[0].ProjectID).To(Equal("p1"))
		Expect(string(created[1].Body)).To(Equal(`{"name":"n","evalType":"ai","outputType":"int","promptTemplate":"p","passingThreshold":4.0}`))
		Expect(created[1].Metric.ID).To(Equal("met_00000002"))
	})

	It("lists the projects the key's tenant used, paged, for the connection probe", func() {
		for _, p := range []string{"p2", "p1", "p3"} {
			Expect(do(http.MethodPost, "/projects/"+p+"/metrics", `{"name":"m","evalType":"human","outputType":"boolean"}`).status).
				To(Equal(http.StatusCreated))
		}
		a := do(http.MethodGet, "/projects?limit=2", "")
		Expect(a.status).To(Equal(http.StatusOK))
		Expect(a.body).To(MatchJSON(`{"data":[{"id":"p1","name":null,"description":null},{"id":"p2","name":null,"description":null}],
			"nextCursor":"` + nextCursorOf(a.body) + `","hasMore":true,"total":3}`))
		last := do(http.MethodGet, "/projects?limit=2&cursor="+nextCursorOf(a.body), "")
		Expect(last.body).To(MatchJSON(`{"data":[{"id":"p3","name":null,"description":null}],"nextCursor":null,"hasMore":false,"total":3}`))
		Expect(do(http.MethodGet, "/projects?limit=0", "").status).To(Equal(http.StatusBadRequest))
		Expect(fake.Calls(evalapitest.OpListProjects)).To(Equal(3))
	})

	It("answers deletions with success and records them", func() {
		a := do(http.MethodPost, "/testcases/bulk-delete", `{"ids":["tc1","tc2"]}`)
		Expect(a.status).To(Equal(http.StatusOK))
		Expect(a.body).To(Equal(`{"success":true}`))
		a = do(http.MethodDelete, "/testsets/ts%2F1", "")
		Expect(a.status).To(Equal(http.StatusOK))
		Expect(a.body).To(Equal(`{"success":true}`))
		Expect(fake.DeletedTestcases()).To(Equal([]string{"tc1", "tc2"}))
		Expect(fake.DeletedTestsets()).To(Equal([]string{"ts/1"}))
	})

	It("answers 401 to a missing, malformed or unknown key, and counts the call", func() {
		for _, auth := range []string{"", "ak_unknown-0123456789", "Basic " + evalapitest.DefaultKey, "Bearer ak_unknown-0123456789"} {
			a := do(http.MethodDelete, "/testsets/ts1", "", withAuth(auth))
			Expect(a.status).To(Equal(http.StatusUnauthorized), auth)
			Expect(a.body).To(Equal(unauthorizedBody))
		}
		Expect(fake.Calls(evalapitest.OpDeleteTestset)).To(Equal(4))
		Expect(fake.DeletedTestsets()).To(BeEmpty())
	})

	It("accepts the keys set at runtime and no others", func() {
		fake.SetKeys("ak_new1-0123456789ab", "ak_new2-0123456789ab")
		Expect(do(http.MethodDelete, "/testsets/ts1", "").status).To(Equal(http.StatusUnauthorized))
		Expect(do(http.MethodDelete, "/testsets/ts1", "", withAuth("Bearer ak_new2-0123456789ab")).status).To(Equal(http.StatusOK))
	})

	DescribeTable("validates a create as the API does",
		func(body string, wantFields ...string) {
			Expect(fields(create(body))).To(ConsistOf(wantFields))
			Expect(fake.Creates()).To(BeZero())
		},
		Entry("empty object", `{}`, "name", "evalType", "outputType"),
		Entry("unknown evalType and outputType", `{"name":"m","evalType":"robot","outputType":"text"}`, "evalType", "outputType"),
		Entry("ai without promptTemplate", `{"name":"m","evalType":"ai","outputType":"int"}`, "promptTemplate"),
		Entry("ai with an empty promptTemplate", `{"name":"m","evalType":"ai","outputType":"int","promptTemplate":""}`, "promptTemplate"),
		Entry("ai fields on a human metric", `{"name":"m","evalType":"human","outputType":"int","promptTemplate":"p","evalModelName":"x","temperature":1}`,
			"promptTemplate", "evalModelName", "temperature"),
		Entry("temperature above 2", `{"name":"m","evalType":"ai","outputType":"int","promptTemplate":"p","temperature":2.5}`, "temperature"),
		Entry("temperature below 0", `{"name":"m","evalType":"ai","outputType":"int","promptTemplate":"p","temperature":-0.1}`, "temperature"),
		Entry("int threshold not whole", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":4.5}`, "passingThreshold"),
		Entry("int threshold 0", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":0}`, "passingThreshold"),
		Entry("int threshold 6", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":6}`, "passingThreshold"),
		Entry("float threshold above 1", `{"name":"m","evalType":"human","outputType":"float","passingThreshold":1.5}`, "passingThreshold"),
		Entry("float threshold below 0", `{"name":"m","evalType":"human","outputType":"float","passingThreshold":-0.5}`, "passingThreshold"),
		Entry("boolean with a threshold", `{"name":"m","evalType":"human","outputType":"boolean","passingThreshold":1}`, "passingThreshold"),
		Entry("unknown field", `{"name":"m","evalType":"human","outputType":"int","color":"red"}`, "body"),
		Entry("wrong type", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":"4"}`, "passingThreshold"),
		Entry("trailing data", `{"name":"m","evalType":"human","outputType":"int"} {}`, "body"),
		Entry("not JSON", `name=m`, "body"),
	)

	DescribeTable("accepts the edges of each range",
		func(body string) { Expect(create(body).status).To(Equal(http.StatusCreated)) },
		Entry("int threshold 1", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":1}`),
		Entry("int threshold 5.0", `{"name":"m","evalType":"human","outputType":"int","passingThreshold":5.0}`),
		Entry("float threshold 0", `{"name":"m","evalType":"human","outputType":"float","passingThreshold":0}`),
		Entry("float threshold 1", `{"name":"m","evalType":"human","outputType":"float","passingThreshold":1}`),
		Entry("temperature 0 and description null", `{"name":"m","description":null,"evalType":"ai","outputType":"boolean","promptTemplate":"p","temperature":0}`),
		Entry("temperature 2", `{"name":"m","evalType":"ai","outputType":"boolean","promptTemplate":"p","temperature":2}`),
	)

	DescribeTable("validates a bulk deletion",
		func(body string, wantField string) {
			a := do(http.MethodPost, "/testcases/bulk-delete", body)
			Expect(fields(a)).To(ConsistOf(wantField))
			Expect(fake.DeletedTestcases()).To(BeEmpty())
		},
		Entry("no ids", `{}`, "ids"),
		Entry("empty ids", `{"ids":[]}`, "ids"),
		Entry("an empty id", `{"ids":["tc1",""]}`, "ids[1]"),
		Entry("ids not strings", `{"ids":[1]}`, "ids"),
	)

	It("answers every other problem with an ApiError", func() {
		a := do(http.MethodPost, "/projects/p1/metrics", `{}`, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") })
		Expect(a.status).To(Equal(http.StatusUnsupportedMediaType))
		Expect(a.body).To(ContainSubstring(`"code":"UNSUPPORTED_MEDIA_TYPE"`))

		a = create(`{"name":"` + strings.Repeat("x", 1<<20) + `"}`)
		Expect(a.status).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(a.body).To(ContainSubstring(`"code":"PAYLOAD_TOO_LARGE"`))

		a = do(http.MethodPut, "/projects/p1/metrics", "")
		Expect(a.status).To(Equal(http.StatusMethodNotAllowed))
		Expect(a.header.Get("Allow")).To(Equal("POST, GET"))
		Expect(a.body).To(ContainSubstring(`"code":"METHOD_NOT_ALLOWED"`))

		a = do(http.MethodGet, "/metricz/m1", "")
		Expect(a.status).To(Equal(http.StatusNotFound))
		Expect(a.body).To(Equal(`{"code":"NOT_FOUND","message":"No such operation","details":{}}`))
	})

	Describe("faults", func() {
		It("plays queued faults in order, one per request of their operation", func() {
			fake.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Status500, evalapitest.Status429("3"), evalapitest.Status401)
			a := do(http.MethodPost, "/testcases/bulk-delete", `{"ids":["tc1"]}`)
			Expect(a.status).To(Equal(http.StatusOK), "another operation is not affected")

			a = do(http.MethodDelete, "/testsets/ts1", "")
			Expect(a.status).To(Equal(http.StatusInternalServerError))
			Expect(a.body).To(Equal(`{"code":"INTERNAL_ERROR","message":"An unexpected error occurred while processing your request.","details":{}}`))
			a = do(http.MethodDelete, "/testsets/ts1", "")
			Expect(a.status).To(Equal(http.StatusTooManyRequests))
			Expect(a.header.Get("Retry-After")).To(Equal("3"))
			Expect(a.body).To(ContainSubstring(`"code":"RATE_LIMITED"`))
			a = do(http.MethodDelete, "/testsets/ts1", "")
			Expect(a.body).To(Equal(unauthorizedBody))
			Expect(fake.DeletedTestsets()).To(BeEmpty())

			Expect(do(http.MethodDelete, "/testsets/ts1", "").status).To(Equal(http.StatusOK))
			Expect(fake.Calls(evalapitest.OpDeleteTestset)).To(Equal(4))
		})

		DescribeTable("answers an injected status with its own code",
			func(status int, code string) {
				fake.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Status(status))
				a := do(http.MethodDelete, "/testsets/ts1", "")
				Expect(a.status).To(Equal(status))
				var e struct {
					Code, Message string
					Details       map[string]any
				}
				Expect(json.Unmarshal([]byte(a.body), &e)).To(Succeed(), a.body)
				Expect(e.Code).To(Equal(code))
				Expect(e.Message).NotTo(BeEmpty())
				Expect(e.Details).NotTo(BeNil())
				Expect(fake.DeletedTestsets()).To(BeEmpty())
			},
			Entry("400", http.StatusBadRequest, "VALIDATION_ERROR"),
			Entry("403", http.StatusForbidden, "FORBIDDEN"),
			Entry("404", http.StatusNotFound, "NOT_FOUND"),
			Entry("409", http.StatusConflict, "CONFLICT"),
			Entry("500", http.StatusInternalServerError, "INTERNAL_ERROR"),
			Entry("503", http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE"),
		)

		It("drops the connection on Reset without committing", func() {
			fake.InjectFaults(evalapitest.OpCreateMetric, evalapitest.Reset)
			_, err := send(http.MethodPost, "/projects/p1/metrics", `{"name":"m","evalType":"human","outputType":"int"}`)
			Expect(err).To(MatchError(ContainSubstring("EOF")))
			Expect(fake.Calls(evalapitest.OpCreateMetric)).To(Equal(1))
			Expect(fake.Creates()).To(BeZero())
		})

		It("commits, then drops the connection, on CommitThenReset", func() {
			fake.InjectFaults(evalapitest.OpBulkDeleteTestcases, evalapitest.CommitThenReset)
			_, err := send(http.MethodPost, "/testcases/bulk-delete", `{"ids":["tc1"]}`)
			Expect(err).To(HaveOccurred())
			Expect(fake.DeletedTestcases()).To(Equal([]string{"tc1"}))
		})

		It("answers success false to a deletion on SuccessFalse, and a create normally", func() {
			fake.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.SuccessFalse)
			fake.InjectFaults(evalapitest.OpCreateMetric, evalapitest.SuccessFalse)
			Expect(do(http.MethodDelete, "/testsets/ts1", "").body).To(Equal(`{"success":false}`))
			Expect(fake.DeletedTestsets()).To(BeEmpty())
			Expect(create(`{"name":"m","evalType":"human","outputType":"int"}`).status).To(Equal(http.StatusCreated))
		})

		It("still authenticates and validates under SuccessFalse", func() {
			fake.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.SuccessFalse)
			Expect(do(http.MethodDelete, "/testsets/ts1", "", withAuth("")).status).To(Equal(http.StatusUnauthorized))
		})

		It("answers late on Slow, and Close cuts the wait short", func() {
			fake.InjectFaults(evalapitest.OpDeleteTestset, evalapitest.Slow(50*time.Millisecond), evalapitest.Slow(time.Hour))
			start := time.Now()
			Expect(do(http.MethodDelete, "/testsets/ts1", "").status).To(Equal(http.StatusOK))
			Expect(time.Since(start)).To(BeNumerically(">=", 50*time.Millisecond))

			errs := make(chan error, 1)
			go func() {
				_, err := send(http.MethodDelete, "/testsets/ts2", "")
				errs <- err
			}()
			Eventually(func() int { return fake.Calls(evalapitest.OpDeleteTestset) }).Should(Equal(2))
			closed := make(chan struct{})
			go func() {
				fake.Close()
				close(closed)
			}()
			Eventually(closed).Within(5 * time.Second).Should(BeClosed())
			Eventually(errs).Within(5 * time.Second).Should(Receive())
		})

		It("adds the latency it is given to every request", func() {
			fake.SetLatency(50 * time.Millisecond)
			start := time.Now()
			Expect(do(http.MethodDelete, "/testsets/ts1", "").status).To(Equal(http.StatusOK))
			Expect(time.Since(start)).To(BeNumerically(">=", 50*time.Millisecond))
		})

		It("fails a seeded random fraction of the requests, reproducibly", func() {
			statuses := func(seed int64) []int {
				s := evalapitest.New()
				defer s.Close()
				s.FailRandomly(0.5, seed, evalapitest.Status500, evalapitest.Status429("1"))
				got := make([]int, 0, 40)
				for i := range cap(got) {
					req, err := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s/testsets/ts%d", s.URL(), i), nil)
					Expect(err).NotTo(HaveOccurred())
					req.Header.Set("Authorization", "Bearer "+evalapitest.DefaultKey)
					resp, err := http.DefaultClient.Do(req)
					Expect(err).NotTo(HaveOccurred())
					Expect(resp.Body.Close()).To(Succeed())
					got = append(got, resp.StatusCode)
				}
				return got
			}
			first := statuses(42)
			Expect(first).To(ContainElements(http.StatusOK, http.StatusInternalServerError, http.StatusTooManyRequests))
			Expect(statuses(42)).To(Equal(first))

			fake.FailRandomly(1, 1, evalapitest.Status500)
			Expect(do(http.MethodDelete, "/testsets/ts1", "").status).To(Equal(http.StatusInternalServerError))
			fake.FailRandomly(0, 1)
			Expect(do(http.MethodDelete, "/testsets/ts1", "").status).To(Equal(http.StatusOK))
		})
	})

	It("serves concurrent requests with unique ids", func() {
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				defer GinkgoRecover()
				for range 4 {
					Expect(create(`{"name":"m","evalType":"heuristic","outputType":"float"}`).status).To(Equal(http.StatusCreated))
				}
			})
		}
		wg.Wait()
		ids := map[string]bool{}
		for _, m := range fake.CreatedMetrics() {
			ids[m.Metric.ID] = true
		}
		Expect(ids).To(HaveLen(64))
		Expect(fake.Calls(evalapitest.OpCreateMetric)).To(Equal(64))
	})

	Describe("the rest of a Metric's life", func() {
		// aiInt is a create with every field set to a value other than its default.
		const aiInt = `{"name":"m","description":"d","evalType":"ai","outputType":"int","guidelines":"g","promptTemplate":"p","evalModelName":"claude","temperature":0.5,"passingThreshold":3}`
		const aiIntResponse = `{"id":"met_00000001","name":"m","description":"d","evalType":"ai","outputType":"int","guidelines":"g","promptTemplate":"p","evalModelName":"claude","temperature":0.5,"passingThreshold":3}`

		// created creates a Metric in project p1 and returns its id.
		created := func(body string) string {
			a := create(body)
			ExpectWithOffset(1, a.status).To(Equal(http.StatusCreated), a.body)
			var m evalapi.Metric
			ExpectWithOffset(1, json.Unmarshal([]byte(a.body), &m)).To(Succeed())
			return m.ID
		}
		get := func(id string) answer { return do(http.MethodGet, "/metrics/"+id, "") }
		patch := func(id, body string) answer { return do(http.MethodPatch, "/metrics/"+id, body) }
		// stored is the Metric the Server holds under id, as JSON.
		stored := func(id string) string {
			m, ok := fake.Metric(id)
			ExpectWithOffset(1, ok).To(BeTrue(), id)
			data, err := json.Marshal(m)
			ExpectWithOffset(1, err).NotTo(HaveOccurred())
			return string(data)
		}
		list := func(projectID, query string) (evalapi.MetricPage, answer) {
			a := do(http.MethodGet, "/projects/"+projectID+"/metrics"+query, "")
			ExpectWithOffset(1, a.status).To(Equal(http.StatusOK), a.body)
			var p evalapi.MetricPage
			ExpectWithOffset(1, json.Unmarshal([]byte(a.body), &p)).To(Succeed())
			return p, a
		}
		names := func(p evalapi.MetricPage) []string {
			out := make([]string, 0, len(p.Data))
			for _, m := range p.Data {
				out = append(out, m.Name)
			}
			return out
		}

		It("answers a GET with the response form", func() {
			id := created(`{"name":"m","evalType":"human","outputType":"float"}`)
			a := get(id)
			Expect(a.status).To(Equal(http.StatusOK))
			Expect(a.body).To(Equal(`{"id":"met_00000001","name":"m","description":null,"evalType":"human","outputType":"float","guidelines":"","passingThreshold":0.9}`))
			Expect(fake.Calls(evalapitest.OpGetMetric)).To(Equal(1))
		})

		It("answers 404 NOT_FOUND to every operation on an unknown id", func() {
			for _, method := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
				a := do(method, "/metrics/met_missing", `{"evalType":"human","outputType":"int"}`)
				Expect(a.status).To(Equal(http.StatusNotFound), method)
				Expect(a.body).To(Equal(`{"code":"NOT_FOUND","message":"Metric not found","details":{"metricId":"met_missing"}}`), method)
			}
			for _, op := range []string{evalapitest.OpGetMetric, evalapitest.OpUpdateMetric, evalapitest.OpDeleteMetric} {
				Expect(fake.Calls(op)).To(Equal(1), op)
			}
		})

		DescribeTable("applies a PATCH as the API does",
			func(body, want string) {
				id := created(aiInt)
				a := patch(id, body)
				Expect(a.status).To(Equal(http.StatusOK), a.body)
				Expect(a.body).To(Equal(want))
				Expect(stored(id)).To(Equal(want))
				Expect(fake.Calls(evalapitest.OpUpdateMetric)).To(Equal(1))
			},
			Entry("fields not sent keep their value", `{"evalType":"ai","outputType":"int","name":"n","temperature":2}`,
				`{"id":"met_00000001","name":"n","description":"d","evalType":"ai","outputType":"int","guidelines":"g","promptTemplate":"p","evalModelName":"claude","temperature":2,"passingThreshold":3}`),
			Entry("nothing but the variant changes nothing", `{"evalType":"ai","outputType":"int"}`, aiIntResponse),
			Entry("an explicit null clears the description", `{"evalType":"ai","outputType":"int","description":null}`,
				`{"id":"met_00000001","name":"m","description":null,"evalType":"ai","outputType":"int","guidelines":"g","promptTemplate":"p","evalModelName":"claude","temperature":0.5,"passingThreshold":3}`),
			Entry("a new outputType resets passingThreshold, whose scale changed", `{"evalType":"ai","outputType":"float"}`,
				`{"id":"met_00000001","name":"m","description":"d","evalType":"ai","outputType":"float","guidelines":"g","promptTemplate":"p","evalModelName":"claude","temperature":0.5,"passingThreshold":0.9}`),
			Entry("boolean drops passingThreshold", `{"evalType":"ai","outputType":"boolean"}`,
				`{"id":"met_00000001","name":"m","description":"d","evalType":"ai","outputType":"boolean","guidelines":"g","promptTemplate":"p","evalModelName":"claude","temperature":0.5}`),
			Entry("another evalType drops the ai fields", `{"evalType":"human","outputType":"int","guidelines":""}`,
				`{"id":"met_00000001","name":"m","description":"d","evalType":"human","outputType":"int","guidelines":"","passingThreshold":3}`),
		)

		// The golden answers below are the examples of the API description
		// (evaluation-api-v2-metrics.yaml), ids aside. Its "Created AI Metric"
		// answers a promptTemplate other than the one its request sends; the
		// answer here holds the one sent.
		It("answers the description's examples", func() {
			const accuracy = `"name":"Response Accuracy","description":"Evaluates if the response is factually accurate","outputType":"boolean","evalType":"ai","guidelines":"Check if the response contains factually correct information"`
			id := created(`{` + accuracy + `,"promptTemplate":"Please evaluate if the following response is factually accurate: {{outputs.response}}","evalModelName":"gpt-4o","temperature":0.1}`)
			Expect(get(id).body).To(MatchJSON(`{"id":"` + id + `",` + accuracy + `,"promptTemplate":"Please evaluate if the following response is factually accurate: {{outputs.response}}","evalModelName":"gpt-4o","temperature":0.1}`))

			const template = `Using the following guidelines, evaluate the response: {{ guidelines }}\n\nResponse: {{ outputs.response }}\n\nIdeal answer: {{ expected.idealResponse }}`
			a := patch(id, `{"evalType":"ai","outputType":"boolean","promptTemplate":"`+template+`"}`)
			Expect(a.status).To(Equal(http.StatusOK), a.body)
			Expect(a.body).To(MatchJSON(`{"id":"` + id + `",` + accuracy + `,"evalModelName":"gpt-4o","promptTemplate":"` + template + `","temperature":0.1}`))

			a = patch(id, `{"evalType":"ai","outputType":"boolean","name":"Updated Metric Name"}`)
			Expect(a.status).To(Equal(http.StatusOK), a.body)
			Expect(a.body).To(ContainSubstring(`"name":"Updated Metric Name"`))
			Expect(a.body).To(ContainSubstring(template))

			a = patch(id, `{"evalType":"human","outputType":"int","passingThreshold":4}`)
			Expect(a.status).To(Equal(http.StatusOK), a.body)
			Expect(a.body).To(MatchJSON(`{"id":"` + id + `","name":"Updated Metric Name","description":"Evaluates if the response is factually accurate","outputType":"int","evalType":"human","guidelines":"Check if the response contains factually correct information","passingThreshold":4}`))

			quality := created(`{"name":"Response Quality","description":"Human review of response quality","evalType":"human","guidelines":"Rate the response quality between 0 and 1.","outputType":"float","passingThreshold":0.85}`)
			Expect(get(quality).body).To(MatchJSON(`{"id":"` + quality + `","name":"Response Quality","description":"Human review of response quality","evalType":"human","guidelines":"Rate the response quality between 0 and 1.","outputType":"float","passingThreshold":0.85}`))

			human := create(`{"name":"Response Quality","description":"Human evaluation of response quality","outputType":"int","evalType":"human","guidelines":"Rate the quality of the response on a scale of 1-5","passingThreshold":3}`)
			Expect(human.status).To(Equal(http.StatusCreated), human.body)
			Expect(human.body).To(MatchJSON(`{"id":"met_00000003","name":"Response Quality","description":"Human evaluation of response quality","outputType":"int","evalType":"human","guidelines":"Rate the quality of the response on a scale of 1-5","passingThreshold":3}`))
			heuristic := create(`{"name":"Non-Empty Response","description":"Checks if response is not empty","guidelines":"Checks if response is not empty","outputType":"boolean","evalType":"heuristic"}`)
			Expect(heuristic.status).To(Equal(http.StatusCreated), heuristic.body)
			Expect(heuristic.body).To(MatchJSON(`{"id":"met_00000004","name":"Non-Empty Response","description":"Checks if response is not empty","guidelines":"Checks if response is not empty","outputType":"boolean","evalType":"heuristic"}`))
		})

		It("keeps a tenant to its own projects and Metrics, and records which key sent what", func() {
			const other = "ak_other-0123456789abcdef"
			fake.AddTenant(other)
			asOther := withAuth("Bearer " + other)
			id := created(`{"name":"m","evalType":"human","outputType":"int"}`) // p1 is the first tenant's now
			before := stored(id)

			notFound := `{"code":"NOT_FOUND","message":"Metric not found","details":{"metricId":"` + id + `"}}`
			Expect(do(http.MethodGet, "/metrics/"+id, "", asOther).body).To(Equal(notFound))
			Expect(do(http.MethodPatch, "/metrics/"+id, `{"evalType":"human","outputType":"int","name":"x"}`, asOther).body).To(Equal(notFound))
			Expect(do(http.MethodDelete, "/metrics/"+id, "", asOther).body).To(Equal(notFound))
			projectNotFound := `{"code":"NOT_FOUND","message":"Project not found","details":{"projectId":"p1"}}`
			Expect(do(http.MethodPost, "/projects/p1/metrics", `{"name":"n","evalType":"human","outputType":"int"}`, asOther).body).To(Equal(projectNotFound))
			Expect(do(http.MethodGet, "/projects/p1/metrics", "", asOther).body).To(Equal(projectNotFound))
			Expect(stored(id)).To(Equal(before))
			Expect(fake.Creates()).To(Equal(1))

			a := do(http.MethodPost, "/projects/p2/metrics", `{"name":"n","evalType":"human","outputType":"int"}`, asOther)
			Expect(a.status).To(Equal(http.StatusCreated), a.body)
			Expect(do(http.MethodGet, "/metrics/met_00000002", "").status).To(Equal(http.StatusNotFound), "nor the first tenant the other's")
			Expect(do(http.MethodGet, "/projects/p2/metrics", "").status).To(Equal(http.StatusNotFound))

			Expect(fake.CreatedMetrics()[0].Key).To(Equal(evalapitest.DefaultKey))
			Expect(fake.CreatedMetrics()[1].Key).To(Equal(other))
			Expect(fake.Requests()[:3]).To(Equal([]evalapitest.Request{
				{Op: evalapitest.OpCreateMetric, Key: evalapitest.DefaultKey, ProjectID: "p1"},
				{Op: evalapitest.OpGetMetric, Key: other, MetricID: id},
				{Op: evalapitest.OpUpdateMetric, Key: other, MetricID: id},
			}))
			Expect(fake.Requests()).To(HaveLen(9))
		})

		It("keeps a tenant's projects through a rotation of its keys", func() {
			id := created(`{"name":"m","evalType":"human","outputType":"int"}`)
			const rotated = "ak_rotated-0123456789abcdef"
			fake.SetKeys(rotated)
			Expect(get(id).status).To(Equal(http.StatusUnauthorized))
			Expect(do(http.MethodGet, "/metrics/"+id, "", withAuth("Bearer "+rotated)).status).To(Equal(http.StatusOK))
		})

		It("gives the ai fields a PATCH to ai leaves out their defaults", func() {
			id := created(`{"name":"m","evalType":"heuristic","outputType":"boolean"}`)
			Expect(patch(id, `{"evalType":"ai","outputType":"int","promptTemplate":"q"}`).body).To(Equal(
				`{"id":"met_00000001","name":"m","description":null,"evalType":"ai","outputType":"int","guidelines":"","promptTemplate":"q","evalModelName":"gpt-4o","temperature":0,"passingThreshold":4}`))
		})

		DescribeTable("validates a PATCH like a create, changing nothing when it fails",
			func(createBody, body string, wantFields ...string) {
				id := created(createBody)
				before := stored(id)
				Expect(fields(patch(id, body))).To(ConsistOf(wantFields))
				Expect(stored(id)).To(Equal(before))
			},
			Entry("no evalType", aiInt, `{"outputType":"int"}`, "evalType"),
			Entry("no outputType", aiInt, `{"evalType":"ai"}`, "outputType"),
			Entry("an empty name", aiInt, `{"evalType":"ai","outputType":"int","name":""}`, "name"),
			Entry("an ai field on a human variant", aiInt, `{"evalType":"human","outputType":"int","temperature":1}`, "temperature"),
			Entry("to ai without a promptTemplate", `{"name":"m","evalType":"human","outputType":"int"}`, `{"evalType":"ai","outputType":"int"}`, "promptTemplate"),
			Entry("temperature above 2", aiInt, `{"evalType":"ai","outputType":"int","temperature":2.5}`, "temperature"),
			Entry("int threshold not whole", aiInt, `{"evalType":"ai","outputType":"int","passingThreshold":4.5}`, "passingThreshold"),
			Entry("boolean with a threshold", aiInt, `{"evalType":"ai","outputType":"boolean","passingThreshold":1}`, "passingThreshold"),
			Entry("the id in the body", aiInt, `{"id":"met_2","evalType":"ai","outputType":"int"}`, "body"),
			Entry("a description of the wrong type", aiInt, `{"evalType":"ai","outputType":"int","description":5}`, "description"),
		)

		It("deletes a Metric: 200 and success, then 404", func() {
			id := created(aiInt)
			a := do(http.MethodDelete, "/metrics/"+id, "")
			Expect(a.status).To(Equal(http.StatusOK))
			Expect(a.body).To(Equal(`{"success":true}`))
			_, ok := fake.Metric(id)
			Expect(ok).To(BeFalse())
			Expect(get(id).status).To(Equal(http.StatusNotFound))
			Expect(do(http.MethodDelete, "/metrics/"+id, "").status).To(Equal(http.StatusNotFound))
			Expect(fake.Metrics()).To(BeEmpty())
			Expect(fake.Creates()).To(Equal(1), "the log of creates keeps it")
			Expect(fake.Calls(evalapitest.OpDeleteMetric)).To(Equal(2))
		})

		It("lists a project's Metrics newest first, in pages that later creates do not shift", func() {
			for i := range 5 {
				created(fmt.Sprintf(`{"name":"m%d","evalType":"human","outputType":"int"}`, i+1))
			}
			Expect(do(http.MethodPost, "/projects/p2/metrics", `{"name":"other","evalType":"human","outputType":"int"}`).status).To(Equal(http.StatusCreated))

			page, _ := list("p1", "?limit=2")
			Expect(names(page)).To(Equal([]string{"m5", "m4"}))
			Expect(page.HasMore).To(BeTrue())
			Expect(page.Total).To(HaveValue(Equal(5)))
			Expect(page.NextCursor).NotTo(BeNil())

			created(`{"name":"m6","evalType":"human","outputType":"int"}`)
			page, _ = list("p1", "?limit=2&cursor="+url.QueryEscape(*page.NextCursor))
			Expect(names(page)).To(Equal([]string{"m3", "m2"}))
			Expect(page.Total).To(HaveValue(Equal(6)))

			page, a := list("p1", "?limit=2&cursor="+url.QueryEscape(*page.NextCursor))
			Expect(names(page)).To(Equal([]string{"m1"}))
			Expect(page.HasMore).To(BeFalse())
			Expect(a.body).To(ContainSubstring(`"nextCursor":null,"hasMore":false,"total":6}`))
			Expect(page.Data[0]).To(Equal(fake.Metrics()[0].Metric))

			page, _ = list("p2", "")
			Expect(names(page)).To(Equal([]string{"other"}))
			Expect(fake.Calls(evalapitest.OpListMetrics)).To(Equal(4))
		})

		It("pages 20 Metrics by default, and up to 100", func() {
			for range 101 {
				created(`{"name":"m","evalType":"human","outputType":"boolean"}`)
			}
			page, _ := list("p1", "")
			Expect(page.Data).To(HaveLen(20))
			Expect(page.Data[0].ID).To(Equal("met_00000101"))
			page, _ = list("p1", "?limit=100")
			Expect(page.Data).To(HaveLen(100))
			Expect(page.HasMore).To(BeTrue())
			page, _ = list("p1", "?limit=100&cursor="+url.QueryEscape(*page.NextCursor))
			Expect(page.Data).To(HaveLen(1))
			Expect(page.Data[0].ID).To(Equal("met_00000001"))
		})

		It("answers an empty last page for a project without Metrics", func() {
			_, a := list("p1", "")
			Expect(a.body).To(Equal(`{"data":[],"nextCursor":null,"hasMore":false,"total":0}`))
		})

		DescribeTable("refuses a bad limit or cursor",
			func(query, wantField string) {
				Expect(fields(do(http.MethodGet, "/projects/p1/metrics"+query, ""))).To(ConsistOf(wantField))
			},
			Entry("limit 0", "?limit=0", "limit"),
			Entry("limit 101", "?limit=101", "limit"),
			Entry("limit not a number", "?limit=ten", "limit"),
			Entry("a cursor it never issued", "?cursor=abc", "cursor"),
		)

		It("lets a test edit and remove Metrics as a person in the web UI would", func() {
			id := created(aiInt)
			Expect(fake.EditMetric(id, func(m *evalapi.Metric) {
				m.ID, m.Name, *m.Temperature = "met_other", "edited", 1.5
			})).To(BeTrue())
			Expect(get(id).body).To(Equal(
				`{"id":"met_00000001","name":"edited","description":"d","evalType":"ai","outputType":"int","guidelines":"g","promptTemplate":"p","evalModelName":"claude","temperature":1.5,"passingThreshold":3}`))
			Expect(fake.Metrics()).To(ConsistOf(And(HaveField("ProjectID", "p1"), HaveField("Metric.Name", "edited"))))
			Expect(fake.EditMetric("met_missing", func(*evalapi.Metric) {})).To(BeFalse())

			Expect(fake.RemoveMetric(id)).To(BeTrue())
			Expect(fake.RemoveMetric(id)).To(BeFalse())
			Expect(get(id).status).To(Equal(http.StatusNotFound))
			Expect(fake.Calls(evalapitest.OpGetMetric)).To(Equal(2), "the hooks are not requests")
		})

		It("hands out copies of its Metrics", func() {
			id := created(aiInt)
			m, _ := fake.Metric(id)
			*m.Temperature, *m.Description = 2, "changed"
			fake.Metrics()[0].Metric.PassingThreshold = nil
			Expect(stored(id)).To(Equal(aiIntResponse))
		})

		It("serves only create and the deletions WithoutMetricLifecycle, as an older service", func() {
			fake = evalapitest.New(evalapitest.WithoutMetricLifecycle())
			DeferCleanup(fake.Close)
			id := created(aiInt)
			for _, method := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
				a := do(method, "/metrics/"+id, `{"evalType":"ai","outputType":"int"}`)
				Expect(a.status).To(Equal(http.StatusNotFound), method)
				Expect(a.body).To(Equal(`{"code":"NOT_FOUND","message":"No such operation","details":{}}`), method)
			}
			a := do(http.MethodGet, "/projects/p1/metrics", "")
			Expect(a.status).To(Equal(http.StatusMethodNotAllowed))
			Expect(a.header.Get("Allow")).To(Equal(http.MethodPost))
			for _, op := range []string{evalapitest.OpGetMetric, evalapitest.OpUpdateMetric, evalapitest.OpDeleteMetric, evalapitest.OpListMetrics} {
				Expect(fake.Calls(op)).To(Equal(1), op)
			}
			Expect(stored(id)).To(Equal(aiIntResponse))
			Expect(do(http.MethodDelete, "/testsets/ts1", "").status).To(Equal(http.StatusOK))
		})

		Describe("faults", func() {
			It("plays queued faults on each new operation, gateway faults as a proxy's HTML page", func() {
				id := created(aiInt)
				fake.InjectFaults(evalapitest.OpGetMetric, evalapitest.Status502Gateway, evalapitest.Status504Gateway, evalapitest.GatewayStatus(500))
				fake.InjectFaults(evalapitest.OpListMetrics, evalapitest.Status500)
				fake.InjectFaults(evalapitest.OpUpdateMetric, evalapitest.Status429("2"))
				fake.InjectFaults(evalapitest.OpDeleteMetric, evalapitest.Status401)

				for _, status := range []int{http.StatusBadGateway, http.StatusGatewayTimeout, http.StatusInternalServerError} {
					a := get(id)
					Expect(a.status).To(Equal(status))
					Expect(a.header.Get("Content-Type")).To(HavePrefix("text/html"))
					Expect(a.body).To(ContainSubstring(fmt.Sprintf("<h1>%d %s</h1>", status, http.StatusText(status))))
				}
				Expect(do(http.MethodGet, "/projects/p1/metrics", "").body).To(ContainSubstring(`"code":"INTERNAL_ERROR"`))
				a := patch(id, `{"evalType":"ai","outputType":"int","name":"n"}`)
				Expect(a.status).To(Equal(http.StatusTooManyRequests))
				Expect(a.header.Get("Retry-After")).To(Equal("2"))
				Expect(do(http.MethodDelete, "/metrics/"+id, "").body).To(Equal(unauthorizedBody))
				Expect(stored(id)).To(Equal(aiIntResponse))

				Expect(get(id).status).To(Equal(http.StatusOK))
				Expect(fake.Calls(evalapitest.OpGetMetric)).To(Equal(4))
			})

			It("commits a PATCH or a DELETE, then drops the connection, on CommitThenReset", func() {
				id := created(aiInt)
				fake.InjectFaults(evalapitest.OpUpdateMetric, evalapitest.CommitThenReset)
				fake.InjectFaults(evalapitest.OpDeleteMetric, evalapitest.CommitThenReset)
				_, err := send(http.MethodPatch, "/metrics/"+id, `{"evalType":"ai","outputType":"int","name":"n"}`)
				Expect(err).To(HaveOccurred())
				Expect(stored(id)).To(ContainSubstring(`"name":"n"`))
				_, err = send(http.MethodDelete, "/metrics/"+id, "")
				Expect(err).To(HaveOccurred())
				_, ok := fake.Metric(id)
				Expect(ok).To(BeFalse())
			})

			It("answers success false to DeleteMetric on SuccessFalse, keeping the Metric, and a GET normally", func() {
				id := created(aiInt)
				fake.InjectFaults(evalapitest.OpDeleteMetric, evalapitest.SuccessFalse, evalapitest.SuccessFalse)
				fake.InjectFaults(evalapitest.OpGetMetric, evalapitest.SuccessFalse)
				Expect(do(http.MethodDelete, "/metrics/"+id, "").body).To(Equal(`{"success":false}`))
				Expect(do(http.MethodDelete, "/metrics/met_missing", "").status).To(Equal(http.StatusNotFound))
				Expect(get(id).body).To(Equal(aiIntResponse))
			})
		})
	})
})

// nextCursorOf is the nextCursor of a list answer.
func nextCursorOf(body string) string {
	var page struct {
		NextCursor string `json:"nextCursor"`
	}
	Expect(json.Unmarshal([]byte(body), &page)).To(Succeed())
	return page.NextCursor
}
