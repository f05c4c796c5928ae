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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eval-operator/eval-operator/internal/judge/judgetest"
)

// newClient is a client of fake, with the waits between retries recorded
// instead of slept.
func newClient(fake *judgetest.Judge, cfg Config) (*Client, *[]time.Duration) {
	cfg.URL = fake.URL()
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = 4
	}
	if cfg.RequestsPerSecond == 0 {
		cfg.RequestsPerSecond = 1000
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Retries == 0 {
		cfg.Retries = 3
	}
	c := New(cfg)
	var mu sync.Mutex
	waits := &[]time.Duration{}
	c.sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*waits = append(*waits, d)
		return nil
	}
	return c, waits
}

func unlimited() error { return nil }

var tone = Request{Model: "qwen2.5-7b-instruct", Temperature: 0.3, OutputType: Int,
	Template:   "Tone {{inputs.tone}}? Response: {{outputs.text}} Ideal: {{expected.text}}\n\n{{ gradingInstructionsAndExamples }}",
	Guidelines: "5 when the tones match.",
	Record: Record{Inputs: json.RawMessage(`{"tone":"formal"}`), Outputs: json.RawMessage(`{"text":"Dear Sir"}`),
		Expected: json.RawMessage(`{"text":"Dear Madam"}`)}}

func TestJudgeSendsAChatCompletionAndReadsTheScore(t *testing.T) {
	fake := judgetest.New(nil)
	defer fake.Close()
	fake.Key = "sk-judge-0123456789"
	c, _ := newClient(fake, Config{MaxTokens: 256, Key: func(context.Context) (string, error) { return fake.Key, nil }})
	out, err := c.Judge(context.Background(), tone, unlimited)
	if err != nil || out.Score == nil || out.Score.IntScore == nil || *out.Score.IntScore != 5 {
		t.Fatalf("Judge = %+v, %v; want intScore 5", out, err)
	}
	if out.Requests != 1 || out.Tokens <= 0 || out.Score.Reasoning == "" {
		t.Errorf("outcome %+v: want 1 request, tokens and reasoning", out)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the fake got %d valid requests, want 1", len(reqs))
	}
	checkToneRequest(t, reqs[0], fake.Key)
}

// checkToneRequest checks the request of tone the fake decoded.
func checkToneRequest(t *testing.T, r judgetest.Request, key string) {
	t.Helper()
	if r.Model != "qwen2.5-7b-instruct" || *r.Temperature != 0.3 || *r.MaxTokens != 256 || r.Authorization != "Bearer "+key {
		t.Errorf("request %+v: want the model, temperature 0.3, max_tokens 256 and the key", r)
	}
	if len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.Messages[1].Role != "user" {
		t.Fatalf("messages %+v: want system then user", r.Messages)
	}
	want := "Tone formal? Response: Dear Sir Ideal: Dear Madam\n\n5 when the tones match."
	if r.Messages[1].Content != want {
		t.Errorf("prompt %q, want %q", r.Messages[1].Content, want)
	}
}

func TestJudgeAsksOnceMoreThenGivesNoScore(t *testing.T) {
	fake := judgetest.New(judgetest.Garbage)
	defer fake.Close()
	c, _ := newClient(fake, Config{})
	out, err := c.Judge(context.Background(), tone, unlimited)
	if err != nil || out.Score != nil || out.Requests != 2 || !strings.Contains(out.Unscored, "could not be read twice") {
		t.Fatalf("Judge = %+v, %v; want no score after 2 requests, with the reason", out, err)
	}
	second := fake.Requests()[1]
	if n := len(second.Messages); n != 4 || second.Messages[2].Role != "assistant" || !strings.Contains(second.Messages[3].Content, "could not be read") {
		t.Errorf("the second ask %+v: want the first answer and a request to answer again", second.Messages)
	}
	// An answer readable the second time is a score.
	asked := 0
	fake.SetRule(func(r judgetest.Request) judgetest.Reply {
		if asked++; asked == 1 {
			return judgetest.Garbage(r)
		}
		return judgetest.Reply{Content: "```json\n{\"score\": \"4\", \"reasoning\": \"close\"}\n```"}
	})
	out, err = c.Judge(context.Background(), tone, unlimited)
	if err != nil || out.Score == nil || *out.Score.IntScore != 4 || out.Unscored != "" {
		t.Fatalf("Judge = %+v, %v; want intScore 4 on the second ask", out, err)
	}
}

func TestJudgeRetriesRateLimitsHonouringRetryAfter(t *testing.T) {
	calls := 0
	fake := judgetest.New(func(r judgetest.Request) judgetest.Reply {
		if calls++; calls <= 2 {
			return judgetest.Reply{Status: 429, RetryAfter: "7", Body: `{"error":{"message":"slow down"}}`}
		}
		return judgetest.Passing(r)
	})
	defer fake.Close()
	c, waits := newClient(fake, Config{})
	out, err := c.Judge(context.Background(), tone, unlimited)
	if err != nil || out.Score == nil || out.Requests != 3 {
		t.Fatalf("Judge = %+v, %v; want a score after 3 requests", out, err)
	}
	if fmt.Sprint(*waits) != "[7s 7s]" {
		t.Errorf("waited %v, want Retry-After's 7s twice", *waits)
	}
}

func TestJudgeGivesUpOnServerErrorsAfterBackoff(t *testing.T) {
	fake := judgetest.New(func(judgetest.Request) judgetest.Reply {
		return judgetest.Reply{Status: 503, Body: "upstream overloaded"}
	})
	defer fake.Close()
	c, waits := newClient(fake, Config{Retries: 3})
	out, err := c.Judge(context.Background(), tone, unlimited)
	if err != nil || out.Score != nil || out.Requests != 4 || !strings.Contains(out.Unscored, "503") {
		t.Fatalf("Judge = %+v, %v; want no score after 4 requests naming the 503", out, err)
	}
	if fmt.Sprint(*waits) != "[1s 2s 4s]" {
		t.Errorf("waited %v, want a growing backoff", *waits)
	}
}

func TestJudgeRefusalIsNotRetried(t *testing.T) {
	fake := judgetest.New(func(judgetest.Request) judgetest.Reply {
		return judgetest.Reply{Status: 400, Body: `{"error":{"message":"content policy"}}`}
	})
	defer fake.Close()
	c, _ := newClient(fake, Config{})
	out, err := c.Judge(context.Background(), tone, unlimited)
	if err != nil || out.Score != nil || out.Requests != 1 || !strings.Contains(out.Unscored, "refused the request with 400") {
		t.Fatalf("Judge = %+v, %v; want one request, no score, the refusal named", out, err)
	}
}

func TestJudgeKeyNeverInAnError(t *testing.T) {
	fake := judgetest.New(nil)
	defer fake.Close()
	fake.Key = "sk-the-right-key-000"
	const wrong = "sk-a-wrong-key-12345"
	c, _ := newClient(fake, Config{Key: func(context.Context) (string, error) { return wrong, nil }})
	out, err := c.Judge(context.Background(), tone, unlimited)
	if err != nil || out.Score != nil || !strings.Contains(out.Unscored, "401") {
		t.Fatalf("Judge = %+v, %v; want the 401 as the reason", out, err)
	}
	if strings.Contains(out.Unscored, wrong) {
		t.Errorf("the reason %q repeats the key the judge echoed", out.Unscored)
	}
}

func TestJudgeAnswerOfMegabytesIsBounded(t *testing.T) {
	fake := judgetest.New(func(judgetest.Request) judgetest.Reply {
		return judgetest.Reply{Content: strings.Repeat("x", 3<<20)}
	})
	defer fake.Close()
	c, _ := newClient(fake, Config{})
	out, err := c.Judge(context.Background(), tone, unlimited)
	if err != nil || out.Score != nil || out.Requests != 1 || !strings.Contains(out.Unscored, "larger than") {
		t.Fatalf("Judge = %+v, %v; want no score and one request for a 3 MiB answer", out, err)
	}
}

func TestJudgeSlowerThanTheTimeoutGivesNoScore(t *testing.T) {
	fake := judgetest.New(judgetest.Slow(2 * time.Second))
	defer fake.Close()
	c, _ := newClient(fake, Config{Timeout: 100 * time.Millisecond, Retries: 1})
	out, err := c.Judge(context.Background(), tone, unlimited)
	if err != nil || out.Score != nil || out.Requests != 2 || !strings.Contains(out.Unscored, "did not answer within 100ms") {
		t.Fatalf("Judge = %+v, %v; want no score after a retry, naming the timeout", out, err)
	}
}

func TestJudgeStopsWhenTheBudgetIsSpent(t *testing.T) {
	fake := judgetest.New(judgetest.Garbage)
	defer fake.Close()
	c, _ := newClient(fake, Config{})
	left := 1
	out, err := c.Judge(context.Background(), tone, func() error {
		if left == 0 {
			return ErrBudget
		}
		left--
		return nil
	})
	if !errors.Is(err, ErrBudget) || out.Requests != 1 || len(fake.Requests()) != 1 {
		t.Fatalf("Judge = %+v, %v; want ErrBudget after the one request the budget allowed", out, err)
	}
}

func TestJudgeHoldsItsRequestsInFlight(t *testing.T) {
	fake := judgetest.New(judgetest.Slow(50 * time.Millisecond))
	defer fake.Close()
	c, _ := newClient(fake, Config{MaxInFlight: 2})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { _, _ = c.Judge(context.Background(), tone, unlimited) })
	}
	wg.Wait()
	if n := fake.MaxInFlight(); n != 2 {
		t.Errorf("the fake held %d requests at once, want maxInFlight 2", n)
	}
}
