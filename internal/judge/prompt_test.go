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
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRenderFillsTheServicePlaceholders(t *testing.T) {
	rec := Record{Inputs: json.RawMessage(`{"q":"Why?","ctx":{"lang":"en"},"n":3}`),
		Outputs: json.RawMessage(`{"answer":"Because."}`), Expected: json.RawMessage(`{"answer":null}`)}
	for _, c := range []struct{ template, want string }{
		{"{{inputs.q}} {{ outputs.answer }}", "Why? Because."},
		{"{{inputs.ctx.lang}} {{inputs.ctx}} {{inputs.n}}", `en {"lang":"en"} 3`},
		{"[{{expected.answer}}][{{inputs.missing}}][{{unknown}}][{{inputs}}]", "[][][][]"},
		{"{{allInputs}}", "ctx: {\"lang\":\"en\"}\nn: 3\nq: Why?"},
		{"{{all.outputs}}", "answer: Because."},
		{"{% if x %}{{inputs.q | upper}}", "{% if x %}{{inputs.q | upper}}"},
	} {
		if got, _ := Render(c.template, "", rec); got != c.want {
			t.Errorf("Render(%q) = %q, want %q", c.template, got, c.want)
		}
	}
	if got, placed := Render("A {{gradingInstructionsAndExamples}}", "be kind", rec); got != "A be kind" || !placed {
		t.Errorf("guidelines: %q, %v", got, placed)
	}
}

func TestRenderBoundsAHugeRecord(t *testing.T) {
	huge := strings.Repeat("é", 1<<20)
	raw, _ := json.Marshal(map[string]string{"text": huge})
	got, _ := Render(strings.Repeat("{{outputs.text}}", 20), "", Record{Outputs: raw})
	if len(got) > MaxPromptBytes {
		t.Errorf("a prompt of %d bytes, want at most %d", len(got), MaxPromptBytes)
	}
	one, _ := Render("{{outputs.text}}", "", Record{Outputs: raw})
	if len(one) > MaxValueBytes || !strings.HasSuffix(one, "[...]") {
		t.Errorf("a value of %d bytes, want at most %d and marked as cut", len(one), MaxValueBytes)
	}
	kept := Shrink(raw, 64<<10)
	if len(kept) > 64<<10 || !json.Valid(kept) {
		t.Errorf("Shrink kept %d bytes (valid JSON: %v), want at most 64 KiB of JSON", len(kept), json.Valid(kept))
	}
}

func TestParseReadsEachOutputType(t *testing.T) {
	for _, c := range []struct {
		outputType, answer, want string
	}{
		{Boolean, `{"score": true, "reasoning": "ok"}`, `{"binaryScore":true,"reasoning":"ok"}`},
		{Boolean, `Sure! {"score": "False"}`, `{"binaryScore":false}`},
		{Int, `{"score": 3.0}`, `{"intScore":3}`},
		{Float, "```json\n{\"score\": 0.25, \"reasoning\": \"line one\\nline two\"}\n```", `{"floatScore":0.25,"reasoning":"line one line two"}`},
		{Int, `{"score": 6}`, "the score is not a whole number from 1 to 5"},
		{Int, `{"score": 2.5}`, "the score is not a whole number from 1 to 5"},
		{Float, `{"score": 1.5}`, "the score is not a number from 0 to 1"},
		{Boolean, `{"score": "maybe"}`, "the score is not true or false"},
		{Boolean, `{"reasoning": "no score"}`, "the answer has no score"},
		{Boolean, `I refuse to grade this.`, "no JSON object in the answer"},
		{Boolean, `{"score": tru`, "no JSON object in the answer"},
		{Boolean, `{"score": tru}`, "the answer's JSON object is malformed"},
	} {
		s, why := Parse(c.outputType, c.answer)
		got := why
		if why == "" {
			b, _ := json.Marshal(s)
			got = string(b)
		}
		if got != c.want {
			t.Errorf("Parse(%s, %q) = %s, want %s", c.outputType, c.answer, got, c.want)
		}
	}
	s, _ := Parse(Boolean, `{"score": true, "reasoning": "`+strings.Repeat("a", 5000)+`"}`)
	if n := len([]rune(s.Reasoning)); n > MaxReasoningRunes {
		t.Errorf("reasoning of %d characters kept, want at most %d", n, MaxReasoningRunes)
	}
}

func TestQueuesKeepASlowKeyFromHoldingAnother(t *testing.T) {
	q := NewQueues(8)
	release := make(chan struct{})
	defer close(release)
	for range 4 {
		if !q.Submit("slow", 2, func() { <-release }) {
			t.Fatal("the slow key's queue refused a task it has room for")
		}
	}
	done := make(chan struct{})
	if !q.Submit("fast", 2, func() { close(done) }) {
		t.Fatal("the fast key's queue refused a task")
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the fast key's task waited for the slow key's")
	}
	for q.Submit("slow", 2, func() { <-release }) {
	}
	var mu sync.Mutex
	mu.Lock()
	if !q.Submit("other", 1, mu.Unlock) {
		t.Fatal("a full queue of one key refused another key's task")
	}
}
