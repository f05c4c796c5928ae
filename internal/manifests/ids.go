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

package manifests

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// RecordedID is the remote id a live Metric holds: its metric-id
// annotation, else status.id (the operator restores one from the other;
// either is final). "" when it has none yet.
func RecordedID(m *v1alpha1.Metric) string {
	if id := m.Annotations[v1alpha1.MetricIDAnnotation]; id != "" {
		return id
	}
	return m.Status.ID
}

// ID is the remote id of one Metric object.
type ID struct {
	Namespace string
	Name      string
	ID        string
}

// IDsOf are the recorded ids of ms, in their order, skipping Metrics that
// have none yet (they would be created anywhere).
func IDsOf(ms []v1alpha1.Metric) []ID {
	var ids []ID
	for i := range ms {
		if id := RecordedID(&ms[i]); id != "" {
			ids = append(ids, ID{Namespace: ms[i].Namespace, Name: ms[i].Name, ID: id})
		}
	}
	return ids
}

// component is a kustomize Component: a kustomization that a base pulls in
// with `components: [dir]`.
type component struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Patches    []patch `json:"patches"`
}

type patch struct {
	Target target `json:"target"`
	Patch  string `json:"patch"`
}

type target struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// IDComponent is a kustomize Component that sets the metric-id annotation
// of each Metric in ids, so applying the repository to another cluster adopts
// the remote Metrics instead of creating them.
//
// Each patch selects its Metric by a target rather than naming it in a plain
// strategic-merge patch: kustomize fails a build on a plain patch whose
// object is missing (a Metric made by hand, not in Git), while a target that
// matches nothing is skipped. Targets carry a namespace only for names that
// occur in more than one namespace: kustomize matches targets before a
// kustomization's `namespace:` sets it, so a namespace would miss every
// object that gets its namespace that way.
func IDComponent(ids []ID) ([]byte, error) {
	namespaces := map[string]map[string]bool{}
	for _, id := range ids {
		if namespaces[id.Name] == nil {
			namespaces[id.Name] = map[string]bool{}
		}
		namespaces[id.Name][id.Namespace] = true
	}
	c := component{APIVersion: "kustomize.config.k8s.io/v1alpha1", Kind: "Component", Patches: []patch{}}
	for _, id := range ids {
		t := target{
			Group:   v1alpha1.GroupVersion.Group,
			Version: v1alpha1.GroupVersion.Version,
			Kind:    "Metric",
			Name:    id.Name,
		}
		if len(namespaces[id.Name]) > 1 {
			t.Namespace = id.Namespace
		}
		body, err := yaml.Marshal(map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(),
			"kind":       "Metric",
			"metadata": map[string]any{
				"name":        id.Name,
				"annotations": map[string]string{v1alpha1.MetricIDAnnotation: id.ID},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("encoding the patch of Metric %s/%s: %w", id.Namespace, id.Name, err)
		}
		c.Patches = append(c.Patches, patch{Target: t, Patch: string(body)})
	}
	out, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding the kustomize Component: %w", err)
	}
	return out, nil
}
