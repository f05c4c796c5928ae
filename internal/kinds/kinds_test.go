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

package kinds_test

import (
	"io/fs"
	"reflect"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/config/crd"
	"github.com/eval-operator/eval-operator/internal/kinds"
)

// The list names every CRD make manifests writes, once, with its plural and
// scope: a new kind cannot be left out of what is derived from it.
func TestAllIsEveryCRD(t *testing.T) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	if len(kinds.All) != len(files) {
		t.Errorf("kinds.All has %d kinds, config/crd/bases %d CRDs", len(kinds.All), len(files))
	}
	for _, f := range files {
		data, err := crd.Bases.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var def apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &def); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		i := slices.IndexFunc(kinds.All, func(k kinds.Info) bool { return k.Kind == def.Spec.Names.Kind })
		if i < 0 {
			t.Errorf("kinds.All lacks %s", def.Spec.Names.Kind)
			continue
		}
		k := kinds.All[i]
		if k.Resource != def.Spec.Names.Plural || k.Namespaced != (def.Spec.Scope == apiextensionsv1.NamespaceScoped) {
			t.Errorf("%s: kinds.All says %q, namespaced %t; its CRD %q, %s",
				k.Kind, k.Resource, k.Namespaced, def.Spec.Names.Plural, def.Spec.Scope)
		}
	}
}

func TestUsersMakeObjectsAndListsOfTheirKind(t *testing.T) {
	for _, k := range kinds.Users() {
		if got := reflect.TypeOf(k.New()).Elem().Name(); got != k.Kind {
			t.Errorf("%s: New makes a %s", k.Kind, got)
		}
		if got := reflect.TypeOf(k.NewList()).Elem().Name(); got != k.Kind+"List" {
			t.Errorf("%s: NewList makes a %s", k.Kind, got)
		}
	}
}
