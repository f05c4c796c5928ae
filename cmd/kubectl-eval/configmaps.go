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
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/internal/validate"
)

// configMapSource finds the ConfigMap a Testset's configMapRef names: name
// is the one found (it may carry kustomize's hash suffix), ok false when
// there is none.
type configMapSource interface {
	configMap(ctx context.Context, namespace, ref string) (name string, data map[string]string, ok bool, err error)
}

// configMaps are the ConfigMaps among the manifests, by namespace and name:
// rendered ones, and those a kustomization's configMapGenerator makes from
// its files when the manifests are not rendered.
type configMaps map[[2]string]map[string]string

// hashSuffix is what kustomize's configMapGenerator appends to a name: a
// dash and ten characters of the data's hash.
var hashSuffix = regexp.MustCompile(`^-[a-z0-9]{10}$`)

// add records d if it is a ConfigMap, or the ConfigMaps its generators make
// if it is a Kustomization; read reads a generator's file (from the disk,
// or at the --base revision). namespace is for objects without one.
func (cms configMaps) add(d validate.Document, namespace string, read func(string) ([]byte, error)) {
	u := d.Object
	switch {
	case u.GetAPIVersion() == "v1" && u.GetKind() == "ConfigMap":
		data, _, _ := unstructured.NestedStringMap(u.Object, "data")
		cms[[2]string{orDefault(u.GetNamespace(), namespace), u.GetName()}] = data
	case u.GetKind() == "Kustomization" && strings.HasPrefix(u.GetAPIVersion(), "kustomize.config.k8s.io/"):
		cms.generate(d, namespace, read)
	}
}

// generate records the ConfigMaps a kustomization's configMapGenerator
// makes (files and literals), under their names without a hash. A file it
// cannot read leaves that ConfigMap out: the plan then says its testcases
// are compared when synced.
func (cms configMaps) generate(d validate.Document, namespace string, read func(string) ([]byte, error)) {
	gens, _, _ := unstructured.NestedSlice(d.Object.Object, "configMapGenerator")
	kNamespace, _, _ := unstructured.NestedString(d.Object.Object, "namespace")
	dir := filepath.Dir(d.File)
	for _, g := range gens {
		gen, ok := g.(map[string]any)
		if !ok {
			continue
		}
		name, _, _ := unstructured.NestedString(gen, "name")
		ns, _, _ := unstructured.NestedString(gen, "namespace")
		files, _, _ := unstructured.NestedStringSlice(gen, "files")
		literals, _, _ := unstructured.NestedStringSlice(gen, "literals")
		data := map[string]string{}
		complete := true
		for _, f := range files {
			key, path, found := strings.Cut(f, "=")
			if !found {
				key, path = filepath.Base(f), f
			}
			content, err := read(filepath.Join(dir, path))
			if err != nil {
				complete = false
				break
			}
			data[key] = string(content)
		}
		for _, l := range literals {
			if key, value, found := strings.Cut(l, "="); found {
				data[key] = value
			}
		}
		if complete && name != "" {
			cms[[2]string{orDefault(ns, orDefault(kNamespace, namespace)), name}] = data
		}
	}
}

// configMap finds ref in namespace: by its name, else the one ConfigMap
// named ref plus kustomize's hash suffix.
func (cms configMaps) configMap(_ context.Context, namespace, ref string) (string, map[string]string, bool, error) {
	if data, ok := cms[[2]string{namespace, ref}]; ok {
		return ref, data, true, nil
	}
	found := ""
	for k := range cms {
		if k[0] == namespace && strings.HasPrefix(k[1], ref) && hashSuffix.MatchString(k[1][len(ref):]) {
			if found != "" {
				return "", nil, false, fmt.Errorf("ConfigMaps %s and %s both are %s with a hash suffix", found, k[1], ref)
			}
			found = k[1]
		}
	}
	if found == "" {
		return "", nil, false, nil
	}
	return found, cms[[2]string{namespace, found}], true, nil
}

// liveConfigMaps reads a Testset's ConfigMap from the cluster.
type liveConfigMaps struct{ c client.Client }

func (l liveConfigMaps) configMap(ctx context.Context, namespace, ref string) (string, map[string]string, bool, error) {
	var cm corev1.ConfigMap
	err := l.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil, false, nil
	case err != nil:
		return "", nil, false, fmt.Errorf("reading ConfigMap %s/%s from the cluster: %w", namespace, ref, err)
	}
	return ref, cm.Data, true, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// kustomizeNamespaces gives each document without a namespace the namespace
// of the kustomization.yaml in its directory, if that sets one, as
// `kustomize build` would: so that unrendered directories resolve a
// Testset's ConfigMap and a run's references in the right namespace.
func kustomizeNamespaces(docs []validate.Document) {
	byDir := map[string]string{}
	for _, d := range docs {
		if d.Object.GetKind() == "Kustomization" && strings.HasPrefix(d.Object.GetAPIVersion(), "kustomize.config.k8s.io/") {
			if ns, _, _ := unstructured.NestedString(d.Object.Object, "namespace"); ns != "" {
				byDir[filepath.Dir(d.File)] = ns
			}
		}
	}
	for _, d := range docs {
		if ns, ok := byDir[filepath.Dir(d.File)]; ok && d.Object.GetNamespace() == "" && d.Object.GetKind() != "Kustomization" {
			d.Object.SetNamespace(ns)
		}
	}
}
