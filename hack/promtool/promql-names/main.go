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

// Command promql-names prints, one a line and sorted, the metric names that
// the PromQL expressions in the given files select: every "expr" field of a
// Prometheus rules file (YAML) or a Grafana dashboard (JSON). The test that
// checks them against a running manager's /metrics runs it (test/e2e).
package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

// grafanaVariables stand in for Grafana's interval variables, which are not PromQL.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

func main() {
	names, err := metricNames(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "promql-names:", err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(names, "\n"))
}

func metricNames(files []string) ([]string, error) {
	p := parser.NewParser(parser.Options{})
	var names []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		exprs := collectExprs(doc, nil)
		if len(exprs) == 0 {
			return nil, fmt.Errorf("%s: no expr fields", file)
		}
		for _, e := range exprs {
			expr, err := p.ParseExpr(grafanaVariables.Replace(e))
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", file, e, err)
			}
			parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok && selectorName(vs) != "" {
					names = append(names, selectorName(vs))
				}
				return nil
			})
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// selectorName is the metric name a selector matches, from its name or its
// __name__ matcher.
func selectorName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == labels.MetricName {
			return m.Value
		}
	}
	return ""
}

// labelValues matches a Grafana variable's query label_values(<selector>, <label>).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)

// collectExprs appends every string under an "expr" key, and the selector
// of every label_values query of a Grafana variable, at any depth.
func collectExprs(v any, exprs []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			s, ok := child.(string)
			if ok && k == "expr" {
				exprs = append(exprs, s)
				continue
			}
			if m := labelValues.FindStringSubmatch(s); ok && k == "query" && m != nil {
				exprs = append(exprs, m[1])
				continue
			}
			exprs = collectExprs(child, exprs)
		}
	case []any:
		for _, child := range v {
			exprs = collectExprs(child, exprs)
		}
	}
	return exprs
}
