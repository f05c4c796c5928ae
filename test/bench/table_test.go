//go:build bench

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

package bench

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

// table is the benchmark's report: rows of measure, value, reference and ratio.
type table struct {
	notes []string
	rows  [][4]string
}

func (t *table) note(format string, args ...any) {
	t.notes = append(t.notes, fmt.Sprintf(format, args...))
}

// add appends a row; reference and ratio may be empty.
func (t *table) add(measure, value, reference, ratio string) {
	t.rows = append(t.rows, [4]string{measure, value, reference, ratio})
}

func (t *table) markdown() string {
	var sb strings.Builder
	sb.WriteString("| Measure | Value | Floor / reference | Ratio |\n|---|---|---|---|\n")
	for _, r := range t.rows {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3])
	}
	for _, n := range t.notes {
		sb.WriteString("\n" + n + "\n")
	}
	return sb.String()
}

func runtimeCPUs() int { return runtime.NumCPU() }

// rate formats n operations in d as a duration and a rate.
func rate(n int, d time.Duration) string {
	return fmt.Sprintf("%.2f s (%.0f/s)", d.Seconds(), float64(n)/d.Seconds())
}

func ratio(a, b time.Duration) string { return fmt.Sprintf("%.2fx", a.Seconds()/b.Seconds()) }

func perObject(count int64, n int) string { return fmt.Sprintf("%.2f", float64(count)/float64(n)) }

func mib(bytes int64) string { return fmt.Sprintf("%.0f MiB", float64(bytes)/(1<<20)) }

// percentiles returns the p50 and p99 of latencies, in milliseconds.
func percentiles(latencies []time.Duration) (p50, p99 float64) {
	s := slices.Clone(latencies)
	slices.Sort(s)
	at := func(p float64) float64 {
		return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000
	}
	return at(0.50), at(0.99)
}
