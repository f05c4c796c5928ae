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
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Output types, as a Metric's outputType names them.
const (
	Boolean = "boolean"
	Int     = "int"
	Float   = "float"
)

// MaxReasoningRunes bounds the judge's reasoning kept with a score.
const MaxReasoningRunes = 280

// Score is a judge's score in the form the API stores a score in: one of
// binaryScore, intScore or floatScore, with the reasoning.
type Score struct {
	BinaryScore *bool    `json:"binaryScore,omitempty"`
	IntScore    *int     `json:"intScore,omitempty"`
	FloatScore  *float64 `json:"floatScore,omitempty"`
	Reasoning   string   `json:"reasoning,omitempty"`
}

// instructions is the system message that asks for outputType's answer.
func instructions(outputType string) string {
	var what string
	switch outputType {
	case Boolean:
		what = "true or false"
	case Int:
		what = "a whole number from 1 to 5"
	default:
		what = "a number from 0 to 1"
	}
	return "You are an evaluator. Judge the response as the user's instructions say. Answer with only a JSON object, " +
		`{"score": <` + what + `>, "reasoning": "<one or two sentences>"}, and nothing else.`
}

// again is the user message that asks once more after an unreadable answer.
func again(outputType string, why string) string {
	return "That answer could not be read (" + why + "). " + instructions(outputType)
}

// Parse reads a judge's answer for outputType: a JSON object with score
// and reasoning, possibly inside a code fence or surrounded by words. A
// score given as a string ("true", "4") is read too; anything out of the
// type's range is unreadable, and why says so.
func Parse(outputType, answer string) (s Score, why string) {
	start, end := strings.Index(answer, "{"), strings.LastIndex(answer, "}")
	if start < 0 || end < start {
		return s, "no JSON object in the answer"
	}
	var got struct {
		Score     json.RawMessage `json:"score"`
		Reasoning any             `json:"reasoning"`
	}
	if err := json.Unmarshal([]byte(answer[start:end+1]), &got); err != nil {
		return s, "the answer's JSON object is malformed"
	}
	raw := strings.Trim(strings.TrimSpace(string(got.Score)), `"`)
	if raw == "" || raw == "null" {
		return s, "the answer has no score"
	}
	if s, why = scoreOf(outputType, raw); why != "" {
		return s, why
	}
	if r, ok := got.Reasoning.(string); ok {
		s.Reasoning = short(r)
	}
	return s, ""
}

// scoreOf reads raw, a score's JSON without quotes, for outputType.
func scoreOf(outputType, raw string) (s Score, why string) {
	switch outputType {
	case Boolean:
		b, err := strconv.ParseBool(strings.ToLower(raw))
		if err != nil {
			return s, "the score is not true or false"
		}
		s.BinaryScore = &b
	case Int:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || f != math.Trunc(f) || f < 1 || f > 5 {
			return s, "the score is not a whole number from 1 to 5"
		}
		n := int(f)
		s.IntScore = &n
	default:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			return s, "the score is not a number from 0 to 1"
		}
		s.FloatScore = &f
	}
	return s, ""
}

// short is reasoning on one line, at most MaxReasoningRunes characters,
// without control characters.
func short(r string) string {
	r = strings.Join(strings.FieldsFunc(r, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }), " ")
	if runes := []rune(r); len(runes) > MaxReasoningRunes {
		r = string(runes[:MaxReasoningRunes-1]) + "…"
	}
	return r
}
