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
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Pick is the value at path in the JSON answer data: path is a dotted path
// with optional indexes, e.g. `choices[0].message.content` (a leading `$`
// or `.` is allowed). An empty path keeps the whole answer, and an answer
// that is not JSON is then kept as a string (a plain-text system).
func Pick(data []byte, path string) (json.RawMessage, error) {
	steps, err := parsePath(path)
	if err != nil {
		return nil, err
	}
	if len(steps) == 0 && !json.Valid(data) {
		if !utf8.Valid(data) {
			return nil, fmt.Errorf("the answer is neither JSON nor UTF-8 text")
		}
		return json.Marshal(string(data))
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %w", err)
	}
	for i, st := range steps {
		var ok bool
		if v, ok = st.apply(v); !ok {
			return nil, fmt.Errorf("the answer has no %s", formatPath(steps[:i+1]))
		}
	}
	return json.Marshal(v)
}

// CheckPath says whether path is a Pick path.
func CheckPath(path string) error {
	_, err := parsePath(path)
	return err
}

// step is one step of a path: a key, or an index when key is "".
type step struct {
	key   string
	index int
}

func (s step) apply(v any) (any, bool) {
	if s.key != "" {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok = m[s.key]
		return v, ok
	}
	a, ok := v.([]any)
	if !ok || s.index >= len(a) {
		return nil, false
	}
	return a[s.index], true
}

// maxPathSteps bounds a path.
const maxPathSteps = 32

// parsePath parses a Pick path.
func parsePath(path string) ([]step, error) {
	p := strings.TrimPrefix(strings.TrimPrefix(path, "$"), ".")
	if p == "" {
		return nil, nil
	}
	var steps []step
	for part := range strings.SplitSeq(p, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			steps = append(steps, step{key: key})
		}
		for rest != "" {
			n, after, ok := strings.Cut(rest, "]")
			i, err := strconv.Atoi(n)
			if !ok || err != nil || i < 0 || (after != "" && after[0] != '[') {
				return nil, fmt.Errorf("path %q: %q is not a key or [index]", path, part)
			}
			steps = append(steps, step{index: i})
			rest = strings.TrimPrefix(after, "[")
		}
		if key == "" && !strings.Contains(part, "[") {
			return nil, fmt.Errorf("path %q has an empty key", path)
		}
	}
	if len(steps) > maxPathSteps {
		return nil, fmt.Errorf("path %q has more than %d steps", path, maxPathSteps)
	}
	return steps, nil
}

// formatPath writes steps back as a path, for messages.
func formatPath(steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		if s.key != "" {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		} else {
			fmt.Fprintf(&b, "[%d]", s.index)
		}
	}
	return b.String()
}
