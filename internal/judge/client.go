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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// MaxAnswerBytes bounds the body of a judge's answer that is read: a
// judge answering megabytes costs no more.
const MaxAnswerBytes = 1 << 20

// DefaultTimeout bounds a judge request when the Config names no timeout.
const DefaultTimeout = time.Minute

// Config is one judge: where it is, how to reach it and its limits.
type Config struct {
	// URL is the OpenAI-compatible base URL, e.g. http://vllm:8000/v1.
	URL string
	// Key reads the bearer key at each call (a rotated Secret takes effect
	// at once); nil sends no Authorization header.
	Key func(context.Context) (string, error)
	// HTTPClient carries the connection's transport (address rules,
	// proxy, CA bundle).
	HTTPClient *http.Client
	// MaxInFlight and RequestsPerSecond bound the requests to the judge.
	MaxInFlight       int
	RequestsPerSecond float64
	// Timeout bounds each request; MaxTokens each answer.
	Timeout   time.Duration
	MaxTokens int
	// Retries is how many times a 429, 5xx or network failure is retried.
	Retries int
	// Label names the judge in the metrics: its connection.
	Label string
}

// Client is one judge's client, shared by every run that uses it.
type Client struct {
	cfg     Config
	limiter *rate.Limiter
	slots   chan struct{}
	// sleep waits between retries; a test shortens it.
	sleep func(context.Context, time.Duration) error
}

// New returns the client of cfg.
func New(cfg Config) *Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	return &Client{cfg: cfg, limiter: rate.NewLimiter(rate.Limit(cfg.RequestsPerSecond), max(1, cfg.MaxInFlight)),
		slots: make(chan struct{}, max(1, cfg.MaxInFlight)), sleep: sleep}
}

// CloseIdleConnections releases the client's idle connections.
func (c *Client) CloseIdleConnections() { c.cfg.HTTPClient.CloseIdleConnections() }

// MaxInFlight is how many of the client's requests may be in flight.
func (c *Client) MaxInFlight() int { return cap(c.slots) }

// Request is one Metric's question about one record.
type Request struct {
	Model       string
	Temperature float64
	OutputType  string
	Template    string
	Guidelines  string
	Record      Record
}

// Outcome is what judging one record for one Metric came to: a score, or
// Unscored saying why there is none; Requests and Tokens what it cost.
type Outcome struct {
	Score    *Score
	Unscored string
	Requests int
	Tokens   int
}

// ErrBudget is returned by a budget that allows no more requests.
var ErrBudget = errors.New("the run's judge request budget is spent")

// Judge asks the judge for req's score: once, and once more when the
// answer cannot be read. take is asked before each request (retries too)
// and may refuse with ErrBudget or any error, which Judge returns as it
// is, with what was spent so far; a failure the judge caused (a refusal,
// an answer too large, retries exhausted) is an Outcome without a score.
func (c *Client) Judge(ctx context.Context, req Request, take func() error) (Outcome, error) {
	user, placed := Render(req.Template, req.Guidelines, req.Record)
	system := instructions(req.OutputType)
	if !placed && req.Guidelines != "" {
		system += "\n\nGuidelines: " + cut(req.Guidelines, MaxValueBytes)
	}
	messages := []message{{Role: "system", Content: system}, {Role: "user", Content: user}}
	var out Outcome
	for ask := 0; ask < 2; ask++ {
		answer, err := c.complete(ctx, chatRequest{Model: req.Model, Messages: messages, Temperature: req.Temperature,
			MaxTokens: c.cfg.MaxTokens}, &out, take)
		if err != nil {
			var failed *failure
			if errors.As(err, &failed) {
				out.Unscored = failed.Error()
				return out, nil
			}
			return out, err
		}
		s, why := Parse(req.OutputType, answer)
		if why == "" {
			out.Score, out.Unscored = &s, ""
			return out, nil
		}
		observeError(c.cfg.Label, "unreadable")
		out.Unscored = "the judge's answer could not be read twice: " + why
		messages = append(messages, message{Role: "assistant", Content: cut(answer, MaxValueBytes)},
			message{Role: "user", Content: again(req.OutputType, why)})
	}
	return out, nil
}

// failure is the judge's fault: the record gets no score, and saying why
// is safe (no key, bounded).
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

// message, chatRequest and chatResponse are the chat-completions wire
// format as OpenAI, vLLM and Ollama document it.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []message `json:"messages"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// complete sends one chat completion, retrying 429, 5xx and network
// failures with backoff (a Retry-After the judge gives is honoured), and
// returns the first choice's content. Each request is counted in out.
func (c *Client) complete(ctx context.Context, body chatRequest, out *Outcome, take func() error) (string, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		if err := take(); err != nil {
			return "", err
		}
		out.Requests++
		answer, retryAfter, err := c.send(ctx, payload, body.Model, out)
		if err == nil || retryAfter < 0 || attempt >= c.cfg.Retries {
			return answer, err
		}
		wait := backoff(attempt)
		if retryAfter > 0 {
			wait = retryAfter
		}
		if wait > maxRetryAfter {
			return "", &failure{fmt.Sprintf("%s, and asks to wait %s, longer than the judge waits (%s)", err, wait, maxRetryAfter)}
		}
		if err := c.sleep(ctx, wait); err != nil {
			return "", err
		}
	}
}

// maxRetryAfter is the longest Retry-After honoured before giving up.
const maxRetryAfter = 2 * time.Minute

// backoff is the wait before retry attempt+1: 1s, 2s, 4s... at most 30s.
func backoff(attempt int) time.Duration {
	return min(time.Second<<min(attempt, 5), 30*time.Second)
}

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

// send makes one request. retryAfter is negative for a failure not worth
// retrying, the judge's Retry-After (0 when none) for one that is.
func (c *Client) send(ctx context.Context, payload []byte, model string, out *Outcome) (
	answer string, retryAfter time.Duration, err error) {
	if err := c.limiter.Wait(ctx); err != nil {
		return "", -1, err
	}
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return "", -1, ctx.Err()
	}
	defer func() { <-c.slots }()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL+"/chat/completions", bytes.NewReader(payload))
	if err != nil {
		return "", -1, &failure{"the judge's url cannot be used: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	key := ""
	if c.cfg.Key != nil {
		if key, err = c.cfg.Key(ctx); err != nil {
			return "", -1, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
	}
	start := time.Now()
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		observe(c.cfg.Label, model, "error", start)
		observeError(c.cfg.Label, "network")
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", 0, &failure{fmt.Sprintf("the judge did not answer within %s", c.cfg.Timeout)}
		}
		// The transport's error names the URL, never the key.
		return "", 0, &failure{"the judge cannot be reached: " + redact(err.Error(), key)}
	}
	defer func() { _ = resp.Body.Close() }()
	observe(c.cfg.Label, model, strconv.Itoa(resp.StatusCode), start)
	return c.read(resp, key, model, out)
}

// read reads the judge's answer as send returns it.
func (c *Client) read(resp *http.Response, key, model string, out *Outcome) (
	answer string, retryAfter time.Duration, err error) {
	body, tooLarge := readBounded(resp.Body)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		observeError(c.cfg.Label, map[bool]string{true: "rate_limited", false: "server_error"}[resp.StatusCode == 429])
		return "", retryAfterOf(resp.Header), &failure{fmt.Sprintf("the judge answered %d: %s", resp.StatusCode, redact(snippet(body), key))}
	case resp.StatusCode/100 != 2:
		observeError(c.cfg.Label, "refused")
		return "", -1, &failure{fmt.Sprintf("the judge refused the request with %d: %s", resp.StatusCode, redact(snippet(body), key))}
	case tooLarge:
		observeError(c.cfg.Label, "too_large")
		return "", -1, &failure{fmt.Sprintf("the judge's answer is larger than %d bytes", MaxAnswerBytes)}
	}
	var cr chatResponse
	if err := json.Unmarshal(body, &cr); err != nil || len(cr.Choices) == 0 {
		observeError(c.cfg.Label, "malformed")
		return "", -1, &failure{"the judge's answer is not a chat completion"}
	}
	out.Tokens += cr.Usage.PromptTokens + cr.Usage.CompletionTokens
	observeTokens(c.cfg.Label, model, cr.Usage.PromptTokens, cr.Usage.CompletionTokens)
	return cr.Choices[0].Message.Content, 0, nil
}

// readBounded reads at most MaxAnswerBytes of body; tooLarge says there was more.
func readBounded(body io.Reader) (b []byte, tooLarge bool) {
	b, _ = io.ReadAll(io.LimitReader(body, MaxAnswerBytes+1))
	if len(b) > MaxAnswerBytes {
		return b[:MaxAnswerBytes], true
	}
	return b, false
}

// snippet is the start of an error body, printable, for a message.
func snippet(body []byte) string {
	return strconv.Quote(cut(string(body), 200))
}

// redact keeps the key out of what the judge echoed.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// retryAfterOf reads Retry-After in seconds or as an HTTP date; 0 when absent.
func retryAfterOf(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
