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

// Package judgetest is a fake OpenAI-compatible judge for tests and
// benchmarks: an httptest server of POST /v1/chat/completions that checks
// each request against the chat-completions contract as OpenAI, vLLM and
// Ollama document it (model, messages of system, user and assistant roles,
// temperature, max_tokens), answers by a rule, and can be slow, refuse,
// answer garbage or megabytes, and rate-limit with Retry-After.
package judgetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Request is a chat-completions request as the fake decoded it.
type Request struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature *float64  `json:"temperature"`
	MaxTokens   *int      `json:"max_tokens,omitempty"`
	// Authorization is the request's header.
	Authorization string `json:"-"`
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Prompt is the last user message.
func (r Request) Prompt() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// OutputType is what the system message asks for: boolean, int or float.
func (r Request) OutputType() string {
	sys := r.Messages[0].Content
	switch {
	case strings.Contains(sys, "true or false"):
		return "boolean"
	case strings.Contains(sys, "whole number from 1 to 5"):
		return "int"
	}
	return "float"
}

// Reply is what the fake answers: Content as the first choice's message,
// or Status (with Body, and Retry-After when RetryAfter is set) instead;
// Delay before answering.
type Reply struct {
	Content    string
	Status     int
	Body       string
	RetryAfter string
	Delay      time.Duration
}

// Rule answers a request.
type Rule func(Request) Reply

// Judge is the fake.
type Judge struct {
	*httptest.Server
	// Key, when set, is the bearer key every request must carry.
	Key string

	mu                    sync.Mutex
	rule                  Rule
	requests              []Request
	inFlight, maxInFlight atomic.Int64
}

// New starts a fake judge answering by rule (Passing when nil).
func New(rule Rule) *Judge {
	if rule == nil {
		rule = Passing
	}
	j := &Judge{rule: rule}
	j.Server = httptest.NewServer(http.HandlerFunc(j.serve))
	return j
}

// URL is the base URL a judge is configured with: <server>/v1.
func (j *Judge) URL() string { return j.Server.URL + "/v1" }

// SetRule changes how the fake answers.
func (j *Judge) SetRule(rule Rule) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.rule = rule
}

// Requests are the valid requests the fake answered, in order.
func (j *Judge) Requests() []Request {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Request(nil), j.requests...)
}

// MaxInFlight is the most requests the fake held at once.
func (j *Judge) MaxInFlight() int { return int(j.maxInFlight.Load()) }

// Passing scores every record as passing: true, 5 or 1.0.
func Passing(r Request) Reply {
	score := map[string]string{"boolean": "true", "int": "5", "float": "1.0"}[r.OutputType()]
	return Reply{Content: `{"score": ` + score + `, "reasoning": "The response does what was asked."}`}
}

// Slow answers as Passing after d.
func Slow(d time.Duration) Rule {
	return func(r Request) Reply {
		reply := Passing(r)
		reply.Delay = d
		return reply
	}
}

// Garbage answers no score at all.
func Garbage(Request) Reply {
	return Reply{Content: "I think it is rather good, all things considered."}
}

func (j *Judge) serve(w http.ResponseWriter, r *http.Request) {
	n := j.inFlight.Add(1)
	defer j.inFlight.Add(-1)
	for m := j.maxInFlight.Load(); n > m && !j.maxInFlight.CompareAndSwap(m, n); m = j.maxInFlight.Load() {
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		openAIError(w, http.StatusNotFound, "not_found_error", "unknown endpoint "+r.Method+" "+r.URL.Path)
		return
	}
	if j.Key != "" && r.Header.Get("Authorization") != "Bearer "+j.Key {
		// A careless server echoes what it got: the client must not repeat it.
		openAIError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided: "+r.Header.Get("Authorization"))
		return
	}
	req, why := decode(r)
	if why != "" {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", why)
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	j.mu.Lock()
	j.requests = append(j.requests, req)
	rule := j.rule
	j.mu.Unlock()
	reply := rule(req)
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if reply.Status != 0 {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		_, _ = w.Write([]byte(reply.Body))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": reply.Content}}},
		"usage": map[string]any{"prompt_tokens": len(req.Prompt()) / 4, "completion_tokens": len(reply.Content) / 4,
			"total_tokens": (len(req.Prompt()) + len(reply.Content)) / 4},
	})
}

// decode reads a request strictly against the chat-completions contract.
func decode(r *http.Request) (Request, string) {
	var req Request
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return req, "Content-Type must be application/json, not " + ct
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, 4<<20)); err != nil {
		return req, "the body cannot be read: " + err.Error()
	}
	d := json.NewDecoder(&buf)
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		return req, "the body is not a chat completion request: " + err.Error()
	}
	switch {
	case req.Model == "":
		return req, "model is required"
	case len(req.Messages) == 0:
		return req, "messages must not be empty"
	case req.Temperature == nil || *req.Temperature < 0 || *req.Temperature > 2:
		return req, "temperature must be a number from 0 to 2"
	case req.MaxTokens != nil && *req.MaxTokens < 1:
		return req, "max_tokens must be positive"
	}
	for i, m := range req.Messages {
		if m.Role != "system" && m.Role != "user" && m.Role != "assistant" {
			return req, fmt.Sprintf("messages[%d].role must be system, user or assistant", i)
		}
	}
	return req, ""
}

// openAIError writes an error in the OpenAI form, {"error": {...}}.
func openAIError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": kind}})
}
