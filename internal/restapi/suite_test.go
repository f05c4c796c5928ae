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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/test/framework"
)

func TestRestAPI(t *testing.T) {
	RegisterFailHandler(Fail)
	// client-go reports a forbidden list or watch through klog only. klog's
	// logger is global and read by every informer, so it is set once,
	// before any runs.
	klog.SetLogger(funcr.New(func(prefix, args string) { _, _ = klogged.Write([]byte(prefix + args + "\n")) },
		funcr.Options{}))
	RunSpecs(t, "REST API Suite")
}

var (
	h      *harness
	spec   *openapi3.T
	router routers.Router
	// logs holds everything the manager and the servers logged, request
	// logs (V(1)) included, so the suite can check that no key leaked.
	logs = &framework.Buffer{}
	// klogged holds what client-go logged through klog.
	klogged = &framework.Buffer{}
)

var _ = BeforeSuite(func() {
	log := funcr.New(func(prefix, args string) {
		_, _ = fmt.Fprintln(io.MultiWriter(GinkgoWriter, logs), prefix, args)
	}, funcr.Options{Verbosity: 1})
	ctrl.SetLogger(log)
	// Answers wait on reconciler round trips, slow under -race on a busy machine.
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(20 * time.Millisecond)
	var err error
	spec, router, err = loadOpenAPI()
	Expect(err).NotTo(HaveOccurred())
	h, err = startHarness(log)
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if h == nil {
		return
	}
	// Every Metric and deletion the specs stored from tenants' requests is
	// still there (envtest deletes no namespace).
	Expect(framework.KubectlGetYAML(context.Background(), h.kubeconfig)).To(Succeed())
	Expect(h.stop()).To(Succeed())
	Expect(logs.String()).To(ContainSubstring(`"msg"="Request"`), "request logs are captured")
	keys := framework.IssuedKeys()
	Expect(keys).NotTo(BeEmpty(), "the suite's keys come from framework.NewKey")
	for what, text := range map[string]string{"logs": logs.String(), "client-go logs": klogged.String()} {
		key, how := framework.Revealed(text, keys)
		Expect(how).To(BeEmpty(), "the key %s... appears %s in the %s", key[:max(strings.LastIndex(key, "_"), 0)], how, what)
	}
})

// loadOpenAPI loads and validates the server's OpenAPI document.
func loadOpenAPI() (*openapi3.T, routers.Router, error) {
	doc, err := OpenAPIDocument()
	if err != nil {
		return nil, nil, err
	}
	t, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		return nil, nil, err
	}
	// The router matches servers against absolute URLs only; the document's
	// server is relative, so the requests checked are made against this host.
	t.Servers = openapi3.Servers{{URL: "http://localhost" + BasePath}}
	r, err := legacy.NewRouter(t) // validates the document
	return t, r, err
}

// send sends rq to the server under test and checks that the answer
// conforms to the OpenAPI document.
func send(rq request) reply {
	GinkgoHelper()
	return sendTo(h.url, rq)
}

func sendTo(baseURL string, rq request) reply {
	GinkgoHelper()
	rep, err := h.do(context.Background(), baseURL, rq)
	Expect(err).NotTo(HaveOccurred())
	Expect(conformance(rq, rep)).To(Succeed(), "answer: %d %s", rep.status, rep.body)
	if rq.key != "" {
		Expect(string(rep.body)).NotTo(ContainSubstring(rq.key), "the answer holds the key")
	}
	return rep
}

// conformance validates an answer against the OpenAPI document: with the
// documented operation when there is one, else (unknown route or method) as
// an ApiError.
func conformance(rq request, rep reply) error {
	req, err := http.NewRequest(rq.method, "http://localhost"+rq.path, nil)
	if err != nil {
		return err
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		if rep.status != http.StatusNotFound && rep.status != http.StatusMethodNotAllowed {
			return err
		}
		return spec.Components.Schemas["ApiError"].Value.VisitJSON(decodeAny(rep.body))
	}
	return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 rep.status,
		Header:                 rep.header,
		Body:                   io.NopCloser(bytes.NewReader(rep.body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
}

// requestConforms validates a request against the OpenAPI document.
func requestConforms(rq request) error {
	req, err := http.NewRequest(rq.method, "http://localhost"+rq.path, strings.NewReader(rq.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range rq.header {
		req.Header.Set(k, v)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		return err
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	})
}

func decodeAny(b []byte) any {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	return v
}

// apiErrorOf decodes an ApiError answer.
func apiErrorOf(rep reply) map[string]any {
	GinkgoHelper()
	var e map[string]any
	Expect(json.Unmarshal(rep.body, &e)).To(Succeed(), "body: %s", rep.body)
	return e
}
