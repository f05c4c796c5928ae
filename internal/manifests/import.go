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

// Package manifests turns Metrics between their three homes: the service
// (import), the cluster (export of the recorded ids) and the manifests a
// GitOps repository holds. The kubectl-eval plugin is its command line.
package manifests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// listPageSize is the largest page the service serves, so an import of a
// big project takes as few requests as possible.
const listPageSize = 100

// ListAll returns every Metric of project projectID, following nextCursor
// from the first page to the last, newest first.
func ListAll(ctx context.Context, svc evalapi.Service, key evalapi.APIKey, projectID string) ([]evalapi.Metric, error) {
	return listAll(fmt.Sprintf("the Metrics of project %q", projectID), func(opts evalapi.ListOptions) (evalapi.Page[evalapi.Metric], error) {
		return svc.ListMetrics(ctx, key, projectID, opts)
	})
}

// listAll reads every page of what, from the first to the last.
func listAll[T any](what string, page func(evalapi.ListOptions) (evalapi.Page[T], error)) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	opts := evalapi.ListOptions{Limit: listPageSize}
	for {
		p, err := page(opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", what, err)
		}
		all = append(all, p.Data...)
		if p.NextCursor == nil || *p.NextCursor == "" {
			return all, nil
		}
		// A service that hands back a cursor it already gave would loop forever.
		if seen[*p.NextCursor] {
			return nil, fmt.Errorf("listing %s: the service repeated cursor %q", what, *p.NextCursor)
		}
		seen[*p.NextCursor] = true
		opts.Cursor = *p.NextCursor
	}
}

// ImportOptions say where imported Metrics go.
type ImportOptions struct {
	// ProjectID is the project the Metrics were listed from.
	ProjectID string
	// Namespace is the manifests' namespace; empty leaves it to whoever
	// applies them (kubectl -n, a kustomization's namespace).
	Namespace string
	// Secret names the Secret holding the API key, for apiKeySecretRef; empty
	// leaves the operator's --default-api-key-secret in charge.
	Secret string
	// Observe makes the manifests read-only mirrors (managementPolicies
	// ["Observe"]): the cluster reads the Metrics and never changes them.
	Observe bool
}

// Imported is one Metric manifest per remote Metric, in the order of
// found, each carrying its remote id in the metric-id annotation so that
// applying it adopts the remote Metric instead of creating one. Its spec
// asks for exactly what the service holds, so adoption changes nothing.
func Imported(found []evalapi.Metric, opts ImportOptions) ([]v1alpha1.Metric, error) {
	named := make([]remoteName, len(found))
	for i, m := range found {
		named[i] = remoteName{ID: m.ID, Name: m.Name}
	}
	names, err := objectNames("Metric", named)
	if err != nil {
		return nil, err
	}
	out := make([]v1alpha1.Metric, 0, len(found))
	for _, m := range found {
		obj := v1alpha1.Metric{
			TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Metric"},
			ObjectMeta: metav1.ObjectMeta{
				Name:        names[m.ID],
				Namespace:   opts.Namespace,
				Annotations: map[string]string{v1alpha1.MetricIDAnnotation: m.ID},
			},
			Spec: convert.SpecFor(opts.ProjectID, requestOf(m)),
		}
		// "" is the service's default: leave it out of the manifest.
		if obj.Spec.Guidelines != nil && *obj.Spec.Guidelines == "" {
			obj.Spec.Guidelines = nil
		}
		if opts.Secret != "" {
			obj.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: opts.Secret}
		}
		if opts.Observe {
			obj.Spec.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementObserve}
		}
		out = append(out, obj)
	}
	return out, nil
}

// requestOf is the request form of m: a PATCH that keeps m's variant and
// sends nothing else keeps every field, so merging it is exactly m.
func requestOf(m evalapi.Metric) evalapi.MetricRequest {
	return evalapi.MergeUpdate(m, evalapi.MetricUpdate{EvalType: m.EvalType, OutputType: m.OutputType})
}

// maxNameLength keeps names short enough to read and to use as label values.
const maxNameLength = 63

// hashLength is how many hex digits of the id's hash tell apart Metrics
// whose names clash.
const hashLength = 8

var notNameChars = regexp.MustCompile(`[^a-z0-9]+`)

// remoteName is a remote object's id and name.
type remoteName struct{ ID, Name string }

// objectNames gives each remote object of kind a metadata.name (a DNS-1123
// label) derived from its remote name, by remote id. Objects whose names
// clash all get a suffix from a hash of their id, so a name depends only on
// the object itself and its namesakes, not on the listing order.
func objectNames(kind string, found []remoteName) (map[string]string, error) {
	bases := make(map[string]string, len(found))
	count := map[string]int{}
	for _, m := range found {
		if _, dup := bases[m.ID]; dup {
			return nil, fmt.Errorf("the service listed %s %q twice", kind, m.ID)
		}
		bases[m.ID] = nameBase(m.Name, strings.ToLower(kind))
		count[bases[m.ID]]++
	}
	names := make(map[string]string, len(found))
	taken := map[string]string{}
	for _, m := range found {
		name := bases[m.ID]
		if count[name] > 1 {
			name = withSuffix(name, idHash(m.ID))
		}
		if other, clash := taken[name]; clash {
			return nil, fmt.Errorf("found %ss %q and %q would both be named %q: rename one of them in the service", kind, other, m.ID, name)
		}
		taken[name] = m.ID
		names[m.ID] = name
	}
	return names, nil
}

// nameBase is name lowercased and stripped of accents, with every run of
// other characters than letters and digits turned into one dash, cut to
// maxNameLength; fallback when nothing is left.
func nameBase(name, fallback string) string {
	plain := strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(strings.ToLower(name)))
	base := strings.Trim(notNameChars.ReplaceAllString(plain, "-"), "-")
	if base == "" {
		base = fallback
	}
	return strings.TrimRight(base[:min(len(base), maxNameLength)], "-")
}

// withSuffix is base-suffix, base cut so that the whole fits maxNameLength.
func withSuffix(base, suffix string) string {
	keep := maxNameLength - len(suffix) - 1
	return strings.TrimRight(base[:min(len(base), keep)], "-") + "-" + suffix
}

func idHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])[:hashLength]
}

// SortByName orders Metrics by namespace and name, so output does not
// depend on the order of a listing.
func SortByName(ms []v1alpha1.Metric) {
	slices.SortFunc(ms, func(a, b v1alpha1.Metric) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}
