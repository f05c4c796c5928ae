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

package gates

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

func release(t *testing.T, system, revision string, version map[string]string) Release {
	t.Helper()
	r, errs := ReleaseOf(system, "revision", revision, version)
	if len(errs) > 0 {
		t.Fatalf("ReleaseOf(%q, %q, %v): %v", system, revision, version, errs)
	}
	return r
}

func TestTheSameReleaseIsTheSameVersionName(t *testing.T) {
	a := release(t, "support-assistant", "7c9f8d6b5", map[string]string{"image": "registry.example.com/sa:v42", "model": "gpt-4o"})
	// The same pairs, given in another order and with the revision among them.
	b := release(t, "support-assistant", "", map[string]string{"model": "gpt-4o", "revision": "7c9f8d6b5",
		"image": "registry.example.com/sa:v42"})
	if a.VersionName() != b.VersionName() {
		t.Errorf("the same config got two names: %s and %s", a.VersionName(), b.VersionName())
	}
	if got := string(a.canonical()); got != `{"image":"registry.example.com/sa:v42","model":"gpt-4o","revision":"7c9f8d6b5"}` {
		t.Errorf("canonical config: %s", got)
	}
	// Pinned: a changed derivation would give every running release a second version.
	if got, want := a.VersionName(), "support-assistant-a5d1df9b7e"; got != want {
		t.Errorf("VersionName() = %s, want %s (the derivation changed: existing releases would get new versions)", got, want)
	}

	for _, other := range []Release{
		release(t, "support-assistant", "7c9f8d6b6", map[string]string{"image": "registry.example.com/sa:v42", "model": "gpt-4o"}),
		release(t, "support-assistant", "7c9f8d6b5", map[string]string{"image": "registry.example.com/sa:v42"}),
		release(t, "search", "7c9f8d6b5", map[string]string{"image": "registry.example.com/sa:v42", "model": "gpt-4o"}),
	} {
		if other.VersionName() == a.VersionName() {
			t.Errorf("%v and %v share the name %s", other, a, a.VersionName())
		}
	}

	long := strings.Repeat("s", validation.DNS1123SubdomainMaxLength)
	x, y := release(t, long, "r1", nil), release(t, long[:250]+"xyz", "r1", nil)
	if len(x.VersionName()) > validation.DNS1123SubdomainMaxLength || x.VersionName() == y.VersionName() {
		t.Errorf("long System names: %q and %q", x.VersionName(), y.VersionName())
	}
}

func TestReleaseOfRefusesWhatIsOutOfBounds(t *testing.T) {
	many := map[string]string{}
	for i := range MaxVersionKeys + 1 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	wide := map[string]string{}
	for i := range MaxVersionKeys - 1 {
		wide[fmt.Sprintf("k%d", i)] = strings.Repeat("v", MaxVersionValueBytes)
	}
	for _, c := range []struct {
		name, system, revision string
		version                map[string]string
		field, message         string
	}{
		{"no System", "", "r1", nil, "system", "must name a System"},
		{"a System name that is no object name", "Support Assistant", "r1", nil, "system", "must name a System"},
		{"nothing identifies the release", "sa", "", nil, "version", "must hold what identifies the release"},
		{"too many keys", "sa", "", many, "version", "has 17 keys: at most 16"},
		{"a key with a space", "sa", "r1", map[string]string{"image ref": "x"}, "version", `"image ref" is not`},
		{"a key too long", "sa", "r1", map[string]string{strings.Repeat("k", 64): "x"}, "version", "1 to 63 letters"},
		{"an empty value", "sa", "r1", map[string]string{"image": ""}, "version.image", "must not be empty"},
		{"a value too long", "sa", "r1", map[string]string{"image": strings.Repeat("i", 513)}, "version.image", "at most 512 bytes"},
		{"a value with a line break", "sa", "r1", map[string]string{"image": "a\nb"}, "version.image", "line breaks"},
		{"a revision with a control character", "sa", "r1\x1b[2J", nil, "version.revision", "control characters"},
		{"the revision given twice", "sa", "r1", map[string]string{"revision": "r2"}, "version.revision", "give it once"},
		{"too many bytes in all", "sa", "r1", wide, "version", "bytes as JSON: at most 4096"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs := ReleaseOf(c.system, "revision", c.revision, c.version)
			for _, e := range errs {
				if e.Field == c.field && strings.Contains(e.Message, c.message) {
					return
				}
			}
			t.Errorf("want %s: %q..., got %v", c.field, c.message, errs)
		})
	}
}

// fixture is a fake API server holding System sa of team-a, and a create
// that counts its calls.
func fixture(t *testing.T) (client.Client, func(context.Context, *v1alpha1.SystemVersion) error, *int) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	system := &v1alpha1.System{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "sa", UID: "uid-1"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(system).Build()
	creates := 0
	return c, func(ctx context.Context, v *v1alpha1.SystemVersion) error { creates++; return c.Create(ctx, v) }, &creates
}

func TestUpsertVersionMakesOneVersionPerRelease(t *testing.T) {
	c, create, creates := fixture(t)
	ctx := context.Background()
	r := release(t, "sa", "7c9f", map[string]string{"image": "registry.example.com/sa:v42"})

	v, created, err := UpsertVersion(ctx, c, create, "team-a", r)
	if err != nil || !created {
		t.Fatalf("first upsert: created %t, %v", created, err)
	}
	owner := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "System", Name: "sa", UID: "uid-1"}
	if v.Name != r.VersionName() || v.Spec.SystemRef.Name != "sa" || v.Labels[SystemLabel] != "sa" ||
		!reflect.DeepEqual(v.OwnerReferences, []metav1.OwnerReference{owner}) {
		t.Errorf("the version: %+v", v.ObjectMeta)
	}
	if _, created, err = UpsertVersion(ctx, c, create, "team-a", r); err != nil || created || *creates != 1 {
		t.Errorf("the same release again: created %t, %d creates, %v", created, *creates, err)
	}
	if _, _, err = UpsertVersion(ctx, c, create, "team-b", r); !errors.Is(err, ErrSystemNotFound) {
		t.Errorf("a System of another namespace: %v", err)
	}
}

func TestUpsertVersionTakesNoOtherVersionOver(t *testing.T) {
	c, create, _ := fixture(t)
	ctx := context.Background()
	other := release(t, "sa", "8d0a", nil)
	taken := &v1alpha1.SystemVersion{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: other.VersionName()},
		Spec: v1alpha1.SystemVersionSpec{SystemRef: v1alpha1.ObjectRef{Name: "sa"}, Config: apiextensionsv1.JSON{Raw: []byte(`{"revision":"other"}`)}}}
	if err := c.Create(ctx, taken); err != nil {
		t.Fatal(err)
	}
	if _, _, err := UpsertVersion(ctx, c, create, "team-a", other); !errors.Is(err, ErrVersionNameTaken) {
		t.Errorf("a name holding another config: %v", err)
	}
}

func TestUpsertVersionLosingARaceFindsTheWinner(t *testing.T) {
	c, _, _ := fixture(t)
	ctx := context.Background()
	raced := release(t, "sa", "9e1b", nil)
	lost := func(ctx context.Context, v *v1alpha1.SystemVersion) error {
		if err := c.Create(ctx, v.DeepCopy()); err != nil {
			return err
		}
		return c.Create(ctx, v)
	}
	if _, created, err := UpsertVersion(ctx, c, lost, "team-a", raced); err != nil || created {
		t.Errorf("a create that lost the race: created %t, %v", created, err)
	}
	var l v1alpha1.SystemVersionList
	if err := c.List(ctx, &l, client.InNamespace("team-a")); err != nil || len(l.Items) != 1 {
		t.Errorf("versions: %d, %v", len(l.Items), err)
	}
}
