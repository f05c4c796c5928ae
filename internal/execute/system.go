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

// Package execute is the shipped executor of an EvaluationRun (kubectl eval
// exec): it asks the system under test over HTTP for each testcase of the
// run's Testset, writes one record per testcase through the Evaluation
// Service API (the service's, or the cluster's REST server, same wire
// protocol), and scores the run's heuristic Metrics from declarative checks.
// A record is written at most once: what the run already holds is read
// first, and a write whose outcome is unknown is looked up, not repeated.
package execute

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// System is how the system under test is called for one testcase.
type System struct {
	// URL is where each testcase is sent.
	URL string
	// Method is the HTTP method; POST when empty.
	Method string
	// Headers are sent with every call (values may come from a Secret
	// through the environment; they never appear in errors or logs).
	Headers http.Header
	// Body builds the request body from the testcase: {{json .inputs}} is
	// the whole inputs object, {{json .inputs.question}} one of its fields.
	Body *template.Template
	// Output picks the answer's output (see Pick); "" keeps the whole answer.
	Output string
	// Timeout bounds each attempt, from sending to the last byte read.
	Timeout time.Duration
	// Attempts is how many times a call is tried (429, 5xx, a reset or a
	// timeout are tried again); at least 1.
	Attempts int
	// MaxBackoff bounds the wait between attempts, Retry-After included.
	MaxBackoff time.Duration
	// MaxAnswerBytes bounds an answer; a longer one is an error.
	MaxAnswerBytes int64
	// HTTP sends the calls.
	HTTP *http.Client
}

// ParseBody parses a body template; its functions are json (a value as
// JSON) and string (a value as a JSON string, whatever its type).
func ParseBody(text string) (*template.Template, error) {
	t, err := template.New("body").Option("missingkey=error").Funcs(template.FuncMap{
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		"string": func(v any) (string, error) {
			s, ok := v.(string)
			if !ok {
				b, err := json.Marshal(v)
				if err != nil {
					return "", err
				}
				s = string(b)
			}
			b, err := json.Marshal(s)
			return string(b), err
		},
	}).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("the body template: %w", err)
	}
	return t, nil
}

// callError is a failed call; retry says whether another attempt may
// succeed, after (when set) is the system's Retry-After.
type callError struct {
	msg   string
	retry bool
	after time.Duration
}

func (e *callError) Error() string { return e.msg }

// Answer is what the system answered for one testcase.
type Answer struct {
	// Output is the picked output, JSON.
	Output json.RawMessage
	// Latency is the successful attempt's duration.
	Latency time.Duration
	// Attempts is how many attempts were made.
	Attempts int
}

// Call asks the system for tc, trying again on 429, 5xx, resets and
// timeouts with exponential backoff (Retry-After honoured, within
// MaxBackoff), until Attempts are spent or ctx ends.
func (s *System) Call(ctx context.Context, tc Testcase) (Answer, error) {
	body, err := s.body(tc)
	if err != nil {
		return Answer{}, err
	}
	var last error
	for attempt := 1; ; attempt++ {
		start := time.Now()
		out, err := s.once(ctx, body)
		if err == nil {
			return Answer{Output: out, Latency: time.Since(start), Attempts: attempt}, nil
		}
		last = err
		var ce *callError
		if ctx.Err() != nil || !errors.As(err, &ce) || !ce.retry || attempt >= s.Attempts {
			return Answer{Attempts: attempt}, fmt.Errorf("after %d attempt(s): %w", attempt, last)
		}
		if err := sleep(ctx, s.backoff(attempt, ce.after)); err != nil {
			return Answer{Attempts: attempt}, fmt.Errorf("after %d attempt(s): %w", attempt, last)
		}
	}
}

// body is tc's request body.
func (s *System) body(tc Testcase) ([]byte, error) {
	if s.Body == nil {
		return nil, nil
	}
	var inputs, expected any
	if err := json.Unmarshal(tc.Inputs, &inputs); err != nil {
		return nil, fmt.Errorf("the testcase's inputs are not JSON: %w", err)
	}
	if len(tc.Expected) > 0 {
		if err := json.Unmarshal(tc.Expected, &expected); err != nil {
			return nil, fmt.Errorf("the testcase's expected values are not JSON: %w", err)
		}
	}
	var buf bytes.Buffer
	if err := s.Body.Execute(&buf, map[string]any{"id": tc.ID, "inputs": inputs, "expected": expected}); err != nil {
		return nil, fmt.Errorf("building the body: %w", err)
	}
	return buf.Bytes(), nil
}

// once makes one attempt.
func (s *System) once(ctx context.Context, body []byte) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, s.Method, s.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("the system's request: %w", err)
	}
	for k, vs := range s.Headers {
		req.Header[k] = vs
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return nil, &callError{msg: "calling the system: " + transportReason(ctx, err, s.Timeout), retry: true}
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, s.MaxAnswerBytes+1))
	switch {
	case err != nil:
		return nil, &callError{msg: "reading the system's answer: " + transportReason(ctx, err, s.Timeout), retry: true}
	case int64(len(data)) > s.MaxAnswerBytes:
		return nil, &callError{msg: fmt.Sprintf("the system's answer is over %d bytes", s.MaxAnswerBytes)}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, &callError{msg: "the system answered " + resp.Status, retry: true,
			after: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	case resp.StatusCode >= 300:
		return nil, &callError{msg: "the system answered " + resp.Status}
	}
	out, err := Pick(data, s.Output)
	if err != nil {
		return nil, &callError{msg: "the system's answer: " + err.Error()}
	}
	return out, nil
}

// transportReason says why a call got no answer, without the URL (it may
// carry a token in its query).
func transportReason(ctx context.Context, err error, timeout time.Duration) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "no answer within " + timeout.String()
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return "the connection closed before the answer ended"
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap().Error()
	}
	return err.Error()
}

// backoff is the wait before attempt+1: the system's Retry-After when it
// gave one, else 250ms doubled per attempt with jitter; at most MaxBackoff.
func (s *System) backoff(attempt int, after time.Duration) time.Duration {
	d := after
	if d <= 0 {
		d = 250 * time.Millisecond << min(attempt-1, 10)
		d += rand.N(d / 2) //nolint:gosec // jitter, not a secret
	}
	return min(d, s.MaxBackoff)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
