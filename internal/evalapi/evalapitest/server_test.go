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
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
)

const unauthorizedBody = `{"code":"UNAUTHORIZED","message":"The authentication token is invalid or missing","details":{}}`

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
		for _, auth := range []string{"", "ak_unknown", "Basic " + evalapitest.DefaultKey, "Bearer ak_unknown"} {
			a := do(http.MethodDelete, "/testsets/ts1", "", withAuth(auth))
			Expect(a.status).To(Equal(http.StatusUnauthorized), auth)
			Expect(a.body).To(Equal(unauthorizedBody))
		}
		Expect(fake.Calls(evalapitest.OpDeleteTestset)).To(Equal(4))
		Expect(fake.DeletedTestsets()).To(BeEmpty())
	})

	It("accepts the keys set at runtime and no others", func() {
		fake.SetKeys("ak_new1", "ak_new2")
		Expect(do(http.MethodDelete, "/testsets/ts1", "").status).To(Equal(http.StatusUnauthorized))
		Expect(do(http.MethodDelete, "/testsets/ts1", "", withAuth("Bearer ak_new2")).status).To(Equal(http.StatusOK))
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

		a = do(http.MethodGet, "/projects/p1/metrics", "")
		Expect(a.status).To(Equal(http.StatusMethodNotAllowed))
		Expect(a.header.Get("Allow")).To(Equal(http.MethodPost))
		Expect(a.body).To(ContainSubstring(`"code":"METHOD_NOT_ALLOWED"`))

		a = do(http.MethodGet, "/metrics/m1", "")
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
			Expect(a.body).To(Equal(`{"code":"INTERNAL_ERROR","message":"Internal server error","details":{}}`))
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
})
