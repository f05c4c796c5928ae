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

package evalapitest

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// The Metric model of the API description (evaluation-api-v2-metrics.yaml),
// written from it alone: the request bodies of createMetric and
// updateMetric, the defaults of the nine variants, the response form. It
// shares nothing with the operator's conversions, so that a test of those
// against this Server checks them against the description rather than
// against themselves. evalapi.Metric is used only as the plain data of the
// response form.

// Values and defaults of the description.
const (
	evalAI        = "ai"
	evalHuman     = "human"
	evalHeuristic = "heuristic"
	outputInt     = "int"
	outputFloat   = "float"
	outputBoolean = "boolean"

	defaultModel          = "gpt-4o"
	defaultTemperature    = 0.0
	defaultIntThreshold   = 4.0
	defaultFloatThreshold = 0.9
)

var (
	evalTypes   = []string{evalAI, evalHuman, evalHeuristic}
	outputTypes = []string{outputInt, outputFloat, outputBoolean}
)

// metricBody is the body of a create or a PATCH. A field is nil when it was
// not sent or sent as null; sent tells the two apart.
type metricBody struct {
	Name             *string  `json:"name"`
	Description      *string  `json:"description"`
	EvalType         *string  `json:"evalType"`
	OutputType       *string  `json:"outputType"`
	Guidelines       *string  `json:"guidelines"`
	PromptTemplate   *string  `json:"promptTemplate"`
	EvalModelName    *string  `json:"evalModelName"`
	Temperature      *float64 `json:"temperature"`
	PassingThreshold *float64 `json:"passingThreshold"`

	sent map[string]bool
}

// nullable lists the fields whose schema allows null.
var nullable = []string{"description"}

// readSent records which fields the JSON object body holds, null ones too.
func (b *metricBody) readSent(body []byte) {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(body, &fields) // body already decoded as an object
	b.sent = make(map[string]bool, len(fields))
	for f := range fields {
		b.sent[f] = true
	}
}

// nulls reports the fields sent as null whose schema does not allow it.
func (b *metricBody) nulls() []fieldError {
	values := map[string]bool{
		"name": b.Name != nil, "evalType": b.EvalType != nil, "outputType": b.OutputType != nil,
		"guidelines": b.Guidelines != nil, "promptTemplate": b.PromptTemplate != nil,
		"evalModelName": b.EvalModelName != nil, "temperature": b.Temperature != nil,
		"passingThreshold": b.PassingThreshold != nil,
	}
	var errs []fieldError
	for _, f := range sortedKeys(values) {
		if b.sent[f] && !values[f] && !slices.Contains(nullable, f) {
			errs = append(errs, fieldError{Field: f, Message: f + " must not be null"})
		}
	}
	return errs
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validate applies the rules of a create: the fields every variant
// requires, then those of the variant evalType and outputType name.
func (b *metricBody) validate() []fieldError {
	errs := b.nulls()
	check := func(ok bool, field, message string) {
		if !ok {
			errs = append(errs, fieldError{Field: field, Message: message})
		}
	}
	evalType, outputType := deref(b.EvalType), deref(b.OutputType)
	ai := evalType == evalAI
	check(deref(b.Name) != "", "name", "name is required")
	check(slices.Contains(evalTypes, evalType), "evalType", "evalType must be one of ai, human, heuristic")
	check(slices.Contains(outputTypes, outputType), "outputType", "outputType must be one of int, float, boolean")
	check(!ai || deref(b.PromptTemplate) != "", "promptTemplate", "promptTemplate is required when evalType is ai")
	check(ai || b.PromptTemplate == nil, "promptTemplate", "promptTemplate is only allowed when evalType is ai")
	check(ai || b.EvalModelName == nil, "evalModelName", "evalModelName is only allowed when evalType is ai")
	check(ai || b.Temperature == nil, "temperature", "temperature is only allowed when evalType is ai")
	if t := b.Temperature; t != nil {
		check(*t >= 0 && *t <= 2, "temperature", "temperature must be from 0 to 2")
	}
	if t := b.PassingThreshold; t != nil {
		switch outputType {
		case outputBoolean:
			check(false, "passingThreshold", "passingThreshold is not allowed when outputType is boolean")
		case outputInt:
			check(*t >= 1 && *t <= 5 && *t == math.Trunc(*t), "passingThreshold",
				"passingThreshold must be a whole number from 1 to 5 when outputType is int")
		case outputFloat:
			check(*t >= 0 && *t <= 1, "passingThreshold", "passingThreshold must be from 0 to 1 when outputType is float")
		}
	}
	return errs
}

// resource is the Metric a valid body makes under id: what was sent, and
// the description's default for every field of the variant left out
// (description null, guidelines empty, evalModelName gpt-4o, temperature 0,
// passingThreshold 4 for int and 0.9 for float).
func (b *metricBody) resource(id string) evalapi.Metric {
	m := evalapi.Metric{
		ID:          id,
		Name:        deref(b.Name),
		Description: clonePtr(b.Description),
		EvalType:    deref(b.EvalType),
		OutputType:  deref(b.OutputType),
		Guidelines:  deref(b.Guidelines),
	}
	if m.EvalType == evalAI {
		m.PromptTemplate = clonePtr(b.PromptTemplate)
		m.EvalModelName = or(b.EvalModelName, defaultModel)
		m.Temperature = or(b.Temperature, defaultTemperature)
	}
	switch m.OutputType {
	case outputInt:
		m.PassingThreshold = or(b.PassingThreshold, defaultIntThreshold)
	case outputFloat:
		m.PassingThreshold = or(b.PassingThreshold, defaultFloatThreshold)
	}
	return m
}

// patched is the body of a create that makes what the PATCH b does to
// stored. The PATCH names the variant; a field it sends replaces the stored
// one, null included for the description. A field it leaves out keeps its
// stored value where the value still means the same: the ai fields while
// the Metric stays ai, passingThreshold while outputType stays (its scale
// is outputType's). Left out otherwise, a field gets its default.
func (b *metricBody) patched(stored evalapi.Metric) metricBody {
	out := *b
	out.sent = nil
	if !b.sent["name"] {
		out.Name = &stored.Name
	}
	if !b.sent["description"] {
		out.Description = stored.Description
	}
	if !b.sent["guidelines"] {
		out.Guidelines = &stored.Guidelines
	}
	if stored.EvalType == evalAI && deref(b.EvalType) == evalAI {
		if !b.sent["promptTemplate"] {
			out.PromptTemplate = stored.PromptTemplate
		}
		if !b.sent["evalModelName"] {
			out.EvalModelName = stored.EvalModelName
		}
		if !b.sent["temperature"] {
			out.Temperature = stored.Temperature
		}
	}
	if stored.OutputType == deref(b.OutputType) && !b.sent["passingThreshold"] {
		out.PassingThreshold = stored.PassingThreshold
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// or is a copy of *p, or def when p is nil.
func or[T any](p *T, def T) *T {
	if p != nil {
		def = *p
	}
	return &def
}

// cloneMetric copies m and the values it points to.
func cloneMetric(m evalapi.Metric) evalapi.Metric {
	m.Description = clonePtr(m.Description)
	m.PromptTemplate = clonePtr(m.PromptTemplate)
	m.EvalModelName = clonePtr(m.EvalModelName)
	m.Temperature = clonePtr(m.Temperature)
	m.PassingThreshold = clonePtr(m.PassingThreshold)
	return m
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
