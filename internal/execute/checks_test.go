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

package execute

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestChecks(t *testing.T) {
	for _, c := range []struct {
		check, output, expected string
		latency                 time.Duration
		pass                    bool
		why                     string
	}{
		{"m=exact:answer", `"Paris"`, `{"answer":"Paris"}`, 0, true, `output "Paris", expected "Paris"`},
		{"m=exact:answer", `"paris"`, `{"answer":"Paris"}`, 0, false, `output "paris", expected "Paris"`},
		{"m=exact", `{"a":[1,2]}`, `{"answer":{"a":[1,2]}}`, 0, true, ""},
		{"m=exact", `"x"`, `{"a":"x","b":"y"}`, 0, false, "names no expected field and the testcase expects 2"},
		{"m=exact:answer", `"x"`, `{"other":"x"}`, 0, false, `expects no "answer"`},
		{"m=contains:answer", `"The capital is Paris."`, `{"answer":"Paris"}`, 0, true, ""},
		{"m=contains:answer", `"Paris, France"`, `{"answer":["Paris","Europe"]}`, 0, false, `lacks "Europe"`},
		{"m=contains:answer", `42`, `{"answer":"4"}`, 0, false, "not a string"},
		{"m=regex:pattern", `"ID-123"`, `{"pattern":"^ID-[0-9]+$"}`, 0, true, ""},
		{"m=regex:pattern", `"ID-12a"`, `{"pattern":"^ID-[0-9]+$"}`, 0, false, "does not match"},
		{"m=regex:pattern", `"x"`, `{"pattern":"("}`, 0, false, "the expected the pattern"},
		{"m=regex:=^[A-Z]+$", `"ABC"`, `{}`, 0, true, ""},
		{`m=jsonschema:={"type":"object","required":["name"]}`, `{"name":"a"}`, `{}`, 0, true, ""},
		{`m=jsonschema:={"type":"object","required":["name"]}`, `{"nom":"a"}`, `{}`, 0, false, "not valid"},
		{"m=jsonschema:schema", `3`, `{"schema":{"type":"integer","maximum":2}}`, 0, false, "not valid"},
		{"m=jsonschema:schema", `"a"`, `{"schema":{"$ref":"file:///etc/passwd"}}`, 0, false, "the expected the schema"},
		{"m=number:answer:0.01", `3.141`, `{"answer":3.14}`, 0, true, ""},
		{"m=number:answer:0.01", `"3.2"`, `{"answer":3.14}`, 0, false, "output 3.2, expected 3.14 ± 0.01"},
		{"m=number::0", `"x"`, `{"answer":1}`, 0, false, "not both numbers"},
		{"m=latency:1s", `null`, `{}`, 900 * time.Millisecond, true, ""},
		{"m=latency:1s", `null`, `{}`, 1100 * time.Millisecond, false, "answered in 1.1s, bound 1s"},
	} {
		chk, err := ParseCheck(c.check)
		if err != nil {
			t.Fatalf("%s: %v", c.check, err)
		}
		pass, why := chk.Judge(json.RawMessage(c.output), json.RawMessage(c.expected), c.latency, nil)
		if pass != c.pass || !strings.Contains(why, c.why) {
			t.Errorf("%s on %s / %s: %v %q, want %v and %q", c.check, c.output, c.expected, pass, why, c.pass, c.why)
		}
	}
}

func TestParseCheckRefuses(t *testing.T) {
	for s, want := range map[string]string{
		"exact":                                 "want METRIC=KIND",
		"m=similar":                             "the kind must be one of",
		"m=regex":                               "name the expected field holding the pattern",
		"m=regex:=(":                            "the pattern: error parsing regexp",
		"m=regex:=" + strings.Repeat("a", 5000): "over 4096 bytes",
		"m=jsonschema:={":                       "the schema is not JSON",
		`m=jsonschema:={"type":1}`:              "the schema",
		"m=number:answer":                       "want number:[FIELD]:TOLERANCE",
		"m=number:answer:-1":                    "want number:[FIELD]:TOLERANCE",
		"m=latency:soon":                        "want latency:DURATION",
	} {
		_, err := ParseCheck(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCheck(%.40q): %v, want %q", s, err, want)
		}
	}
}

func TestPick(t *testing.T) {
	answer := []byte(`{"choices":[{"message":{"content":"hi"}}],"n":2}`)
	for path, want := range map[string]string{
		"":                             string(answer),
		"n":                            `2`,
		"$.choices[0].message.content": `"hi"`,
		".choices[0]":                  `{"message":{"content":"hi"}}`,
	} {
		got, err := Pick(answer, path)
		if err != nil || string(got) != want {
			t.Errorf("Pick(%q) = %s, %v; want %s", path, got, err, want)
		}
	}
	for path, want := range map[string]string{
		"choices[1].message": "the answer has no choices[1]",
		"n.x":                "the answer has no n.x",
		"choices[x]":         "is not a key or [index]",
		"a..b":               "empty key",
	} {
		if _, err := Pick(answer, path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Pick(%q): %v, want %q", path, err, want)
		}
	}
	if got, err := Pick([]byte("plain text"), ""); err != nil || string(got) != `"plain text"` {
		t.Errorf("a plain-text answer: %s, %v", got, err)
	}
	if _, err := Pick([]byte("<html>"), "answer"); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("garbage: %v", err)
	}
	if _, err := Pick([]byte{0xff, 0xfe}, ""); err == nil {
		t.Error("binary garbage is kept")
	}
}
