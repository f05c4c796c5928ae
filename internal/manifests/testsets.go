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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// testcasesKey is the ConfigMap key an imported Testset reads.
const testcasesKey = "testcases.jsonl"

// maxConfigMapData is what a ConfigMap holds at most (etcd's bound on one
// object, less room for its metadata).
const maxConfigMapData = 1000 << 10

// Testset is one remote Testset as a repository keeps it: its manifest,
// which reads its testcases from a ConfigMap that kustomize's
// configMapGenerator makes from the JSON Lines file.
type Testset struct {
	Testset v1alpha1.Testset
	// Lines are its testcases' data as JSON Lines, in the service's order.
	Lines []byte
	// Testcases is how many lines.
	Testcases int
}

// ImportTestsets lists project projectID's Testsets and their testcases and
// returns each as a Testset manifest that adopts it (testset-id annotation)
// with its testcases as JSON Lines. keyField must name a field every
// testcase has, once per Testset: it is how the operator tells them apart.
func ImportTestsets(ctx context.Context, svc evalapi.Service, key evalapi.APIKey, keyField string, opts ImportOptions) (
	[]Testset, error) {
	sets, err := listAll(fmt.Sprintf("the Testsets of project %q", opts.ProjectID),
		func(o evalapi.ListOptions) (evalapi.Page[evalapi.Testset], error) {
			return svc.ListTestsets(ctx, key, opts.ProjectID, o)
		})
	if err != nil {
		return nil, err
	}
	named := make([]remoteName, len(sets))
	for i, t := range sets {
		named[i] = remoteName{ID: t.ID, Name: t.Name}
	}
	names, err := objectNames("Testset", named)
	if err != nil {
		return nil, err
	}
	out := make([]Testset, 0, len(sets))
	for _, t := range sets {
		cases, err := listAll(fmt.Sprintf("the testcases of Testset %q", t.ID),
			func(o evalapi.ListOptions) (evalapi.Page[evalapi.Testcase], error) {
				return svc.ListTestcases(ctx, key, t.ID, o)
			})
		if err != nil {
			return nil, err
		}
		var lines bytes.Buffer
		for _, c := range cases {
			lines.Write(convert.Canonical(c.JSONData))
			lines.WriteByte('\n')
		}
		if _, err := testcases.FromLines(bytes.NewReader(lines.Bytes()), keyField); err != nil {
			return nil, fmt.Errorf("Testset %q (%s): %w: --key-field must name a field every testcase has, with a value unique in its Testset",
				t.Name, t.ID, err)
		}
		out = append(out, Testset{Testset: testsetManifest(t, names[t.ID], keyField, opts), Lines: lines.Bytes(),
			Testcases: len(cases)})
	}
	slices.SortFunc(out, func(a, b Testset) int { return strings.Compare(a.Testset.Name, b.Testset.Name) })
	return out, nil
}

func testsetManifest(t evalapi.Testset, name, keyField string, opts ImportOptions) v1alpha1.Testset {
	fields := func(names []string) []v1alpha1.FieldName {
		out := make([]v1alpha1.FieldName, len(names))
		for i, n := range names {
			out[i] = v1alpha1.FieldName(n)
		}
		return out
	}
	obj := v1alpha1.Testset{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Testset"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: opts.Namespace,
			Annotations: map[string]string{v1alpha1.TestsetIDAnnotation: t.ID}},
		Spec: v1alpha1.TestsetSpec{
			ProjectID: v1alpha1.ResourceID(opts.ProjectID), Name: v1alpha1.LineText(t.Name),
			Description: v1alpha1.Text(t.Description), KeyField: v1alpha1.FieldName(keyField),
			FieldMapping: v1alpha1.TestsetFieldMapping{Inputs: fields(t.FieldMapping.Inputs),
				Expected: fields(t.FieldMapping.Expected), Metadata: fields(t.FieldMapping.Metadata)},
			ConfigMapRef: &v1alpha1.ConfigMapTestcases{Name: name + "-testcases", Key: testcasesKey},
		},
	}
	if len(t.JSONSchema) > 0 && string(t.JSONSchema) != "null" {
		obj.Spec.JSONSchema = &runtime.RawExtension{Raw: t.JSONSchema}
	}
	if opts.Secret != "" {
		obj.Spec.APIKeySecretRef = &v1alpha1.SecretKeySelector{Name: opts.Secret}
	}
	if opts.Observe {
		obj.Spec.ManagementPolicies = []v1alpha1.ManagementAction{v1alpha1.ManagementObserve}
	}
	return obj
}

// testsetManifestFile is a Testset as a repository holds it: no status.
type testsetManifestFile struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta    `json:"metadata"`
	Spec            v1alpha1.TestsetSpec `json:"spec"`
}

// WriteTestsetDir writes each Testset to dir as <name>.yaml and its
// testcases as <name>.jsonl, and a kustomization.yaml that lists the
// manifests and generates each one's ConfigMap from its file. dir must hold
// no kustomization.yaml yet. It returns the Testsets whose testcases are
// over what a ConfigMap holds: serve those from Git through Flux instead.
func WriteTestsetDir(dir string, sets []Testset) (tooLarge []string, err error) {
	kustomization := filepath.Join(dir, "kustomization.yaml")
	if _, err := os.Stat(kustomization); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s exists: import Testsets into a directory of their own", kustomization)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	type generator struct {
		Name  string   `json:"name"`
		Files []string `json:"files"`
	}
	k := struct {
		APIVersion         string         `json:"apiVersion"`
		Kind               string         `json:"kind"`
		Resources          []string       `json:"resources"`
		ConfigMapGenerator []generator    `json:"configMapGenerator"`
		GeneratorOptions   map[string]any `json:"generatorOptions"`
	}{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization",
		// The Testsets name their ConfigMaps: no hash suffix.
		GeneratorOptions: map[string]any{"disableNameSuffixHash": true}}
	for _, s := range sets {
		name := s.Testset.Name
		data, err := yaml.Marshal(testsetManifestFile{TypeMeta: s.Testset.TypeMeta, Metadata: s.Testset.ObjectMeta, Spec: s.Testset.Spec})
		if err != nil {
			return nil, fmt.Errorf("encoding Testset %s: %w", name, err)
		}
		for file, content := range map[string][]byte{name + ".yaml": data, name + ".jsonl": s.Lines} {
			if err := os.WriteFile(filepath.Join(dir, file), content, 0o600); err != nil {
				return nil, fmt.Errorf("writing %s: %w", file, err)
			}
		}
		k.Resources = append(k.Resources, name+".yaml")
		k.ConfigMapGenerator = append(k.ConfigMapGenerator,
			generator{Name: s.Testset.Spec.ConfigMapRef.Name, Files: []string{testcasesKey + "=" + name + ".jsonl"}})
		if len(s.Lines) > maxConfigMapData {
			tooLarge = append(tooLarge, name)
		}
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return nil, fmt.Errorf("encoding the kustomization: %w", err)
	}
	if err := os.WriteFile(kustomization, data, 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", kustomization, err)
	}
	return tooLarge, nil
}
