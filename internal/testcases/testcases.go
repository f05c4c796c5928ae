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

// Package testcases reads a Testset's testcases from their source (inline
// objects or JSON Lines) into a validated set: every testcase a JSON object
// with a unique, non-empty key. It reads the whole set before anything is
// sent, so bad data never produces a partial sync.
package testcases

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/eval-operator/eval-operator/internal/quote"
)

// Default bounds of a source, the manager's flags' defaults.
const (
	// MaxLineBytes is the largest testcase, one line of JSON Lines.
	MaxLineBytes = 256 << 10
	// MaxTestcases is the most testcases of one set.
	MaxTestcases = 100_000
	// MaxSetBytes is the most data of one set: its JSON Lines as read, and
	// its testcases in canonical form. The set is held in memory while it is
	// compared with the service's.
	MaxSetBytes = 16 << 20
)

// Limits bound what one source may hold; a source over one is bad data.
type Limits struct {
	// Testcases is the most testcases of one set (--testset-max-testcases).
	Testcases int
	// Bytes is the most bytes of one set, read and in canonical form (--testset-max-bytes).
	Bytes int64
	// TestcaseBytes is the largest testcase, one line of JSON Lines (--testset-max-testcase-bytes).
	TestcaseBytes int
}

// DefaultLimits are the limits of the manager's defaults.
var DefaultLimits = Limits{Testcases: MaxTestcases, Bytes: MaxSetBytes, TestcaseBytes: MaxLineBytes}

// OrDefaults fills in the zero fields of l from DefaultLimits.
func (l Limits) OrDefaults() Limits {
	if l.Testcases <= 0 {
		l.Testcases = DefaultLimits.Testcases
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultLimits.Bytes
	}
	if l.TestcaseBytes <= 0 {
		l.TestcaseBytes = DefaultLimits.TestcaseBytes
	}
	return l
}

// Case is one testcase of a source.
type Case struct {
	// Key is the value of the set's key field, as text.
	Key string
	// Data is the testcase's data in canonical form (convert.Canonical).
	Data json.RawMessage
	// Line is its line in the source, from 1; its index from 1 for inline items.
	Line int
}

// Set is a validated source: its testcases in key order and their digest.
type Set struct {
	Cases []Case
	// Digest is "sha256:" and the hex sha256 of the canonical testcases in
	// key order: a source that only reorders or respaces its lines keeps it.
	Digest string
}

// Reasons of an Error.
const (
	ReasonInvalid   = "InvalidTestcases"
	ReasonDuplicate = "DuplicateKey"
	// ReasonOverLimit: the source holds more than a limit allows.
	ReasonOverLimit = "SourceNotReady"
)

// Error is bad data in a source; Reason is a condition reason.
type Error struct {
	Reason  string
	Message string
}

func (e *Error) Error() string { return e.Message }

func invalid(format string, args ...any) *Error {
	return &Error{Reason: ReasonInvalid, Message: fmt.Sprintf(format, args...)}
}

// OverLimit is the Error of a source over a limit.
func OverLimit(format string, args ...any) *Error {
	return &Error{Reason: ReasonOverLimit, Message: fmt.Sprintf(format, args...)}
}

// builder collects the cases of one source.
type builder struct {
	limits   Limits
	keyField string
	what     string
	cases    []Case
	lines    map[string]int
	bytes    int64
}

func newBuilder(limits Limits, keyField, what string) *builder {
	return &builder{limits: limits.OrDefaults(), keyField: keyField, what: what, lines: map[string]int{}}
}

// add validates one testcase's data, at line.
func (b *builder) add(line int, data []byte) error {
	if len(b.cases) == b.limits.Testcases {
		return OverLimit("the source holds more than %d testcases, the limit (--testset-max-testcases)", b.limits.Testcases)
	}
	obj, canonical, err := decodeObject(data)
	if err != nil || obj == nil {
		return invalid("%s %d is not a JSON object: %s", b.what, line, reason(err))
	}
	key, err := keyOf(obj[b.keyField])
	if err != nil {
		return invalid("%s %d: field %q (the keyField) %s", b.what, line, b.keyField, err)
	}
	if first, dup := b.lines[key]; dup {
		return &Error{Reason: ReasonDuplicate, Message: fmt.Sprintf(
			"%s %d and %d have the same %s %s: keys must be unique", b.what, first, line, b.keyField, quote.Prefix(key))}
	}
	c := Case{Key: key, Data: canonical, Line: line}
	if b.bytes += int64(len(c.Data)); b.bytes > b.limits.Bytes {
		return OverLimit("%s %d: the testcases up to it are over %d bytes in all, the limit (--testset-max-bytes)",
			b.what, line, b.limits.Bytes)
	}
	b.lines[key] = line
	b.cases = append(b.cases, c)
	return nil
}

func reason(err error) string {
	if err == nil {
		return "it is null"
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return "it is " + typ.Value
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Sprintf("%s at byte %d", syntax.Error(), syntax.Offset)
	}
	return err.Error()
}

// decodeObject decodes data, which must be one JSON object, and returns it
// with its canonical form (convert.Canonical's: keys sorted, numbers as
// written), from one decode.
func decodeObject(data []byte) (map[string]any, []byte, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, nil, err
	}
	if obj == nil {
		return nil, nil, nil
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("data after the object")
	}
	canonical, err := json.Marshal(obj)
	return obj, canonical, err
}

// keyOf is a key field's value as text: a non-empty string or a number.
func keyOf(v any) (string, error) {
	switch k := v.(type) {
	case nil:
		return "", errors.New("is missing")
	case string:
		if strings.TrimSpace(k) == "" {
			return "", errors.New("is empty")
		}
		return k, nil
	case json.Number:
		return k.String(), nil
	}
	return "", errors.New("must be a string or a number")
}

func (b *builder) set() Set {
	slices.SortFunc(b.cases, func(x, y Case) int { return strings.Compare(x.Key, y.Key) })
	h := sha256.New()
	for _, c := range b.cases {
		h.Write(c.Data)
		h.Write([]byte{'\n'})
	}
	return Set{Cases: b.cases, Digest: "sha256:" + hex.EncodeToString(h.Sum(nil))}
}

// FromItems reads inline testcases, one JSON object per item, within the
// default limits.
func FromItems(items [][]byte, keyField string) (Set, error) {
	return DefaultLimits.FromItems(items, keyField)
}

// FromLines reads JSON Lines within the default limits; see Limits.FromLines.
func FromLines(r io.Reader, keyField string) (Set, error) {
	return DefaultLimits.FromLines(r, keyField)
}

// FromItems reads inline testcases: one JSON object per item.
func (l Limits) FromItems(items [][]byte, keyField string) (Set, error) {
	b := newBuilder(l, keyField, "inline item")
	for i, data := range items {
		if err := b.add(i+1, data); err != nil {
			return Set{}, err
		}
	}
	return b.set(), nil
}

// FromLines reads JSON Lines as a stream: one JSON object per line; blank
// lines are skipped. A line over l.TestcaseBytes, or more than l.Bytes
// read in all, is an error, not a truncation; nothing past the limit is read.
func (l Limits) FromLines(r io.Reader, keyField string) (Set, error) {
	b := newBuilder(l, keyField, "line")
	errOver := OverLimit("the source is over %d bytes, the limit (--testset-max-bytes)", b.limits.Bytes)
	capped := Capped(r, b.limits.Bytes, errOver)
	s := bufio.NewScanner(capped)
	s.Buffer(make([]byte, 0, min(64<<10, b.limits.TestcaseBytes)), b.limits.TestcaseBytes)
	line := 0
	for s.Scan() {
		line++
		data := bytes.TrimSpace(s.Bytes())
		if len(data) == 0 {
			continue
		}
		if err := b.add(line, data); err != nil {
			if capped.exceeded { // the line was cut at the limit
				return Set{}, errOver
			}
			return Set{}, err
		}
	}
	if err := s.Err(); err != nil {
		var bad *Error
		switch {
		case errors.As(err, &bad):
			return Set{}, bad
		case errors.Is(err, bufio.ErrTooLong):
			return Set{}, OverLimit("line %d is over %d bytes, the limit of one testcase (--testset-max-testcase-bytes)",
				line+1, b.limits.TestcaseBytes)
		}
		return Set{}, fmt.Errorf("reading the testcases: %w", err)
	}
	return b.set(), nil
}

// Capped reads at most n bytes of r, and fails with over if r holds more.
func Capped(r io.Reader, n int64, over error) *CappedReader {
	return &CappedReader{r: r, left: n, over: over}
}

// CappedReader is Capped's reader.
type CappedReader struct {
	r        io.Reader
	left     int64
	over     error
	exceeded bool
}

// Exceeded reports whether the reader failed at its cap: the last bytes it
// gave may end mid-way.
func (c *CappedReader) Exceeded() bool { return c.exceeded }

func (c *CappedReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.left <= 0 {
		if n, err := c.r.Read(p[:1]); n > 0 {
			c.exceeded = true
			return 0, c.over
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
