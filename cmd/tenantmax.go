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

package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/eval-operator/eval-operator/internal/kinds"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
)

// tenantMaxFlag is --rest-tenant-max: Kind=N pairs, comma-separated or
// given again, over the default budget; a kind not named keeps its default.
type tenantMaxFlag struct{ budget tenancy.Budget }

func (f *tenantMaxFlag) String() string {
	if f == nil || f.budget == nil {
		return ""
	}
	pairs := make([]string, 0, len(f.budget))
	for _, k := range kinds.Budgeted() { // the registry's order, not the map's
		if n, ok := f.budget[k.Kind]; ok {
			pairs = append(pairs, k.Kind+"="+strconv.Itoa(n))
		}
	}
	return strings.Join(pairs, ",")
}

func (f *tenantMaxFlag) Set(value string) error {
	for pair := range strings.SplitSeq(value, ",") {
		kind, count, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return fmt.Errorf("%q is not Kind=N", pair)
		}
		if err := f.setKind(kind, count); err != nil {
			return err
		}
	}
	return nil
}

// setKind sets the budget of kind, which must be one a namespace holds a
// bounded number of, to count, a positive integer.
func (f *tenantMaxFlag) setKind(kind, count string) error {
	if k, ok := kinds.Of(kind); !ok || k.TenantMax == 0 {
		return fmt.Errorf("%q is not a kind with a budget; they are %s", kind, budgetedKinds())
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return fmt.Errorf("%s=%s: the budget must be a positive integer", kind, count)
	}
	f.budget[kind] = n
	return nil
}

func budgetedKinds() string {
	budgeted := kinds.Budgeted()
	names := make([]string, 0, len(budgeted))
	for _, k := range budgeted {
		names = append(names, k.Kind)
	}
	return strings.Join(names, ", ")
}

// deprecatedTenantMax are the flags, one per kind, that --rest-tenant-max
// replaced; they still set their kind's budget.
var deprecatedTenantMax = map[string]string{
	"rest-tenant-max-metrics":            "Metric",
	"rest-tenant-max-testsets":           "Testset",
	"rest-tenant-max-evaluation-runs":    "EvaluationRun",
	"rest-tenant-max-testset-deletions":  "TestsetDeletion",
	"rest-tenant-max-testcase-deletions": "TestcaseDeletion",
}

// addTenantMaxFlags adds --rest-tenant-max, filling budget, and its
// deprecated aliases.
func addTenantMaxFlags(fs *flag.FlagSet, budget tenancy.Budget) {
	f := &tenantMaxFlag{budget: budget}
	fs.Var(f, "rest-tenant-max",
		"Objects of each kind a namespace may hold before the REST server refuses a create (403 QUOTA_EXCEEDED): "+
			"`Kind=N` pairs, comma-separated or given again; a kind not named keeps its default.")
	for name, kind := range deprecatedTenantMax {
		fs.Func(name, "Deprecated: use --rest-tenant-max="+kind+"=N instead; takes an `int`.", func(count string) error {
			return f.setKind(kind, count)
		})
	}
}
