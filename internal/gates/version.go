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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// Bounds of a release's version config. It is a tenant's text (flags, a
// webhook's payload) kept in a SystemVersion and sent to the service, so
// it is held well below a SystemVersion's own bound: a few image
// references, a revision and a model name fit many times over.
const (
	MaxVersionKeys       = 16
	MaxVersionKeyLength  = 63
	MaxVersionValueBytes = 512
	MaxVersionBytes      = 4 << 10
)

// SystemLabel on a SystemVersion a gate made names its System, for
// `kubectl get systemversions -l` (when the name is a label value).
const SystemLabel = v1alpha1.Prefix + "system"

// versionKey is the pattern of a config key: letters, digits, '.', '_' and
// '-', starting and ending with a letter or digit.
var versionKey = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)

// Errors of UpsertVersion a caller answers as the tenant's to fix.
var (
	// ErrSystemNotFound: the release names no System of the namespace.
	ErrSystemNotFound = errors.New("no such System")
	// ErrVersionNameTaken: the release's SystemVersion name holds another
	// System's or another config's version.
	ErrVersionNameTaken = errors.New("the SystemVersion's name is taken")
)

// FieldError is a refused part of a release: Field is "system",
// "version" (the config as a whole) or "version.<key>".
type FieldError struct {
	Field, Message string
}

// Release is what identifies a release to a gate: the System (of the
// gate's namespace) it is a version of, and the config that tells it from
// every other release of that System (image references, a pod-template
// hash, a Flagger checksum, a Kargo Freight). The same System and config
// are the same SystemVersion, whichever gate derives them.
type Release struct {
	System string
	Config map[string]string
}

// ReleaseOf is the release of system identified by version and, when not
// empty, revision under the key revisionKey (each gate names its own:
// "revision", Flagger's "checksum"). A version key equal to revisionKey is
// refused rather than silently replaced. The errors name what is refused.
func ReleaseOf(system, revisionKey, revision string, version map[string]string) (Release, []FieldError) {
	r := Release{System: system, Config: make(map[string]string, len(version)+1)}
	var errs []FieldError
	for k, v := range version {
		if k == revisionKey && revision != "" {
			errs = append(errs, FieldError{Field: "version." + k, Message: fmt.Sprintf(
				"is the release's %s, given on its own: give it once", revisionKey)})
			continue
		}
		r.Config[k] = v
	}
	if revision != "" {
		r.Config[revisionKey] = revision
	}
	return r, append(errs, r.check()...)
}

// check names what is out of bounds in r, in a stable order.
func (r Release) check() []FieldError {
	var errs []FieldError
	if msgs := validation.IsDNS1123Subdomain(r.System); len(msgs) > 0 {
		errs = append(errs, FieldError{Field: "system", Message: "must name a System of the namespace: " + msgs[0]})
	}
	switch {
	case len(r.Config) == 0:
		return append(errs, FieldError{Field: "version", Message: "must hold what identifies the release " +
			"(its revision, image references, ...): a System's version needs a config"})
	case len(r.Config) > MaxVersionKeys:
		return append(errs, FieldError{Field: "version", Message: fmt.Sprintf(
			"has %d keys: at most %d", len(r.Config), MaxVersionKeys)})
	}
	keys := make([]string, 0, len(r.Config))
	for k := range r.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := r.Config[k]
		field := "version." + k
		if len(k) > MaxVersionKeyLength || !versionKey.MatchString(k) {
			field = "version"
			errs = append(errs, FieldError{Field: field, Message: fmt.Sprintf("a key must be 1 to %d letters, digits, "+
				"'.', '_' or '-', starting and ending with a letter or digit; %q is not", MaxVersionKeyLength, truncate(k))})
			continue
		}
		switch {
		case v == "":
			errs = append(errs, FieldError{Field: field, Message: "must not be empty"})
		case len(v) > MaxVersionValueBytes || !v1alpha1.ValidLineText(v):
			errs = append(errs, FieldError{Field: field, Message: fmt.Sprintf(
				"must be at most %d bytes and %s", MaxVersionValueBytes, v1alpha1.LineTextRule)})
		}
	}
	if len(errs) == 0 && len(r.canonical()) > MaxVersionBytes {
		errs = append(errs, FieldError{Field: "version", Message: fmt.Sprintf(
			"is %d bytes as JSON: at most %d", len(r.canonical()), MaxVersionBytes)})
	}
	return errs
}

// truncate keeps an error about a refused key short.
func truncate(s string) string {
	if len(s) > MaxVersionKeyLength {
		return s[:MaxVersionKeyLength] + "..."
	}
	return s
}

// canonical is r's config as JSON with its keys sorted (encoding/json
// sorts a map's keys), so the order it was given in changes nothing.
func (r Release) canonical() []byte {
	data, _ := json.Marshal(r.Config) // a map of strings always marshals
	return data
}

// VersionName is the name of r's SystemVersion: the System's name and a
// hash of the System's name and the canonical config. The System is in the
// hash so that two long System names cut to the same prefix stay apart.
func (r Release) VersionName() string {
	h := sha256.New()
	h.Write([]byte(r.System))
	h.Write([]byte{0})
	h.Write(r.canonical())
	const suffix = 1 + 10
	prefix := r.System
	if len(prefix) > validation.DNS1123SubdomainMaxLength-suffix {
		prefix = prefix[:validation.DNS1123SubdomainMaxLength-suffix]
	}
	return prefix + "-" + hex.EncodeToString(h.Sum(nil))[:suffix-1]
}

// version is r's SystemVersion in system's namespace, owned by system:
// deleting the System deletes the versions its gates made (the service
// keeps the remote versions, which earlier runs name).
func (r Release) version(system *v1alpha1.System) *v1alpha1.SystemVersion {
	v := &v1alpha1.SystemVersion{
		ObjectMeta: metav1.ObjectMeta{Namespace: system.Namespace, Name: r.VersionName(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "System",
				Name: system.Name, UID: system.UID}}},
		Spec: v1alpha1.SystemVersionSpec{SystemRef: v1alpha1.ObjectRef{Name: system.Name},
			Config: apiextensionsv1.JSON{Raw: r.canonical()}},
	}
	if len(validation.IsValidLabelValue(system.Name)) == 0 {
		v.Labels = map[string]string{SystemLabel: system.Name}
	}
	return v
}

// UpsertVersion makes sure r's SystemVersion exists in namespace and
// returns it, and whether this call created it. r must have come from
// ReleaseOf without errors. reader reads the System and the version;
// create creates the version (a caller adds its own budget). The System
// must exist in namespace (ErrSystemNotFound); a SystemVersion of the
// same name with another System or config is not taken over
// (ErrVersionNameTaken).
func UpsertVersion(ctx context.Context, reader client.Reader,
	create func(context.Context, *v1alpha1.SystemVersion) error, namespace string, r Release) (
	*v1alpha1.SystemVersion, bool, error) {
	system := &v1alpha1.System{}
	err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: r.System}, system)
	if apierrors.IsNotFound(err) {
		return nil, false, fmt.Errorf("%w: System %s does not exist in %s", ErrSystemNotFound, r.System, namespace)
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading System %s: %w", r.System, err)
	}
	want := r.version(system)
	got := &v1alpha1.SystemVersion{}
	err = reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		err = create(ctx, want)
		if !apierrors.IsAlreadyExists(err) {
			return want, err == nil, err
		}
		// Another gate of the same release made it first: check it as found.
		err = reader.Get(ctx, client.ObjectKeyFromObject(want), got)
		if apierrors.IsNotFound(err) {
			return want, false, nil // made a moment ago, not yet in a cache: the name is the config's
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading SystemVersion %s: %w", want.Name, err)
	}
	if got.Spec.SystemRef.Name != r.System || !sameConfig(got.Spec.Config.Raw, want.Spec.Config.Raw) {
		return nil, false, fmt.Errorf("%w: SystemVersion %s in %s is another System's or config's version; "+
			"this release's version has that name: rename or delete the object", ErrVersionNameTaken, want.Name, namespace)
	}
	return got, false, nil
}

// sameConfig reports whether two configs are the same JSON value.
func sameConfig(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
