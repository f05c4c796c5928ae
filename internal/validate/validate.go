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

// Package validate admits custom resources offline the way the API server
// admits them, with the API server's own code (k8s.io/apiextensions-apiserver):
// the decoder's pruning and metadata coercion, structural defaulting, the
// OpenAPI schema, every x-kubernetes-validations rule (transition rules on
// updates) and the generic metadata checks. It runs against the CRDs that
// `make manifests` generates, compiled in through config/crd.
package validate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/config/crd"
)

// DefaultNamespace stands in for a namespaced object's missing namespace, as
// kubectl's context would fill it in; no rule looks at its value.
const DefaultNamespace = "default"

// Validator admits the objects of a set of CRDs' served versions.
type Validator struct {
	kinds map[schema.GroupVersionKind]*kindValidator
}

// kindValidator is what the API server builds per served version of a CRD.
type kindValidator struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	structural *structuralschema.Structural
	strategy   *strategy
}

// New returns a Validator for the CRDs compiled into the binary.
func New() (*Validator, error) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		data, err := crd.Bases.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, c); err != nil {
			return nil, fmt.Errorf("reading the CRD %s: %w", f, err)
		}
		crds = append(crds, c)
	}
	return NewForCRDs(crds)
}

// NewForCRDs returns a Validator for crds, built as the API server's
// customresource handler builds its storage for each served version.
func NewForCRDs(crds []*apiextensionsv1.CustomResourceDefinition) (*Validator, error) {
	v := &Validator{kinds: map[schema.GroupVersionKind]*kindValidator{}}
	for _, c := range crds {
		for _, ver := range c.Spec.Versions {
			if !ver.Served {
				continue
			}
			k, err := newKindValidator(c, ver)
			if err != nil {
				return nil, fmt.Errorf("the CRD %s, version %s: %w", c.Name, ver.Name, err)
			}
			v.kinds[k.gvk] = k
		}
	}
	return v, nil
}

func newKindValidator(c *apiextensionsv1.CustomResourceDefinition, ver apiextensionsv1.CustomResourceDefinitionVersion) (*kindValidator, error) {
	gvk := schema.GroupVersionKind{Group: c.Spec.Group, Version: ver.Name, Kind: c.Spec.Names.Kind}
	val, err := apihelpers.GetSchemaForVersion(c, ver.Name)
	if err != nil || val == nil {
		return nil, errors.Join(errors.New("no schema"), err)
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	structural = structural.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(structural); err != nil {
		return nil, err
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	sub, err := apihelpers.GetSubresourcesForVersion(c, ver.Name)
	if err != nil {
		return nil, err
	}
	namespaced := c.Spec.Scope == apiextensionsv1.NamespaceScoped
	s := newStrategy(gvk, namespaced, sub != nil && sub.Status != nil, validator, structural)
	return &kindValidator{gvk: gvk, namespaced: namespaced, structural: structural, strategy: s}, nil
}

// Handles reports whether gvk is a kind the Validator admits.
func (v *Validator) Handles(gvk schema.GroupVersionKind) bool {
	_, ok := v.kinds[gvk]
	return ok
}

// Create admits obj as the API server admits a create: the result is the
// object as it would be stored (pruned, defaulted), and the error is the
// API server's (a BadRequest for unknown fields, as with kubectl's strict
// field validation; an Invalid with one cause per field error), nil when
// the server would accept it. obj is not modified.
func (v *Validator) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	k, ok := v.kinds[obj.GroupVersionKind()]
	if !ok {
		return nil, fmt.Errorf("no CRD for %s", obj.GroupVersionKind())
	}
	u, err := k.decode(obj)
	if err != nil {
		return u, err
	}
	if u.GetName() == "" && u.GetGenerateName() != "" {
		u.SetName(names.SimpleNameGenerator.GenerateName(u.GetGenerateName()))
	}
	rest.FillObjectMetaSystemFields(u)
	k.strategy.PrepareForCreate(ctx, u)
	if errs := rest.ValidateCreate(ctx, u, k.strategy); len(errs) > 0 {
		return u, apierrors.NewInvalid(k.gvk.GroupKind(), u.GetName(), errs)
	}
	return u, nil
}

// Update admits obj as an update of old, the object as stored (the result
// of Create or a live read), the way the API server admits a replace:
// transition rules (oldSelf) and ratcheting see old. The result is the
// object as it would be stored.
func (v *Validator) Update(ctx context.Context, obj, old *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	k, ok := v.kinds[obj.GroupVersionKind()]
	if !ok {
		return nil, fmt.Errorf("no CRD for %s", obj.GroupVersionKind())
	}
	u, err := k.decode(obj)
	if err != nil {
		return u, err
	}
	// The server reads old back from storage, through the same decoder.
	stored, err := k.decode(old)
	if err != nil {
		return u, fmt.Errorf("the old object: %w", err)
	}
	// A manifest standing for the stored object (from --base) gets what
	// storage would have given it.
	if stored.GetUID() == "" {
		rest.FillObjectMetaSystemFields(stored)
	}
	if stored.GetResourceVersion() == "" {
		stored.SetResourceVersion("1")
	}
	if stored.GetGeneration() == 0 {
		stored.SetGeneration(1)
	}
	// What a replace keeps from the stored object, as the REST store and
	// BeforeUpdate do.
	u.SetName(stored.GetName())
	u.SetNamespace(stored.GetNamespace())
	u.SetUID(stored.GetUID())
	u.SetCreationTimestamp(stored.GetCreationTimestamp())
	u.SetResourceVersion(stored.GetResourceVersion())
	u.SetGeneration(stored.GetGeneration())
	k.strategy.PrepareForUpdate(ctx, u, stored)
	if errs := rest.ValidateUpdate(ctx, u, stored, k.strategy); len(errs) > 0 {
		return u, apierrors.NewInvalid(k.gvk.GroupKind(), u.GetName(), errs)
	}
	return u, nil
}

// decode is what the API server's decoder does to a request body of the
// kind: metadata coercion, pruning of unknown fields (reported, as strict
// field validation does), dropping nulls, then structural defaulting.
func (k *kindValidator) decode(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u := obj.DeepCopy()
	if k.namespaced && u.GetNamespace() == "" {
		u.SetNamespace(DefaultNamespace)
	}
	objectMeta, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object,
		schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return u, apierrors.NewBadRequest(err.Error())
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, k.structural, true,
		structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, k.structural)
	ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, k.structural, false,
		schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if ferr != nil {
		return u, apierrors.NewBadRequest(ferr.Error())
	}
	unknown = append(unknown, paths...)
	u.SetGroupVersionKind(k.gvk)
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return u, apierrors.NewBadRequest(err.Error())
		}
	}
	if len(unknown) > 0 {
		return u, strictDecodingError(unknown)
	}
	structuraldefaulting.Default(u.Object, k.structural)
	return u, nil
}

// strictDecodingError is the API server's answer to unknown fields under
// fieldValidation=Strict, kubectl's default.
func strictDecodingError(paths []string) error {
	errs := make([]error, len(paths))
	for i, p := range paths {
		errs[i] = fmt.Errorf(`unknown field "%s"`, p)
	}
	return apierrors.NewBadRequest(runtime.NewStrictDecodingError(errs).Error())
}

// Causes returns the field errors of an error Create or Update returned, in
// the API server's order, as "<field>: <message>"; nil for other errors.
func Causes(err error) []string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		out = append(out, strings.TrimPrefix(c.Field+": "+c.Message, ": "))
	}
	return out
}

// Decode reads one YAML or JSON document the way kubectl sends it and the
// API server decodes it: YAML to JSON, then JSON to unstructured content
// (whole numbers int64, others float64). A document need not be an object
// of any kind (a kustomization.yaml is not), but it must be a mapping.
func Decode(doc []byte) (*unstructured.Unstructured, error) {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var content map[string]any
	if err := utiljson.Unmarshal(data, &content); err != nil {
		return nil, fmt.Errorf("not a YAML mapping: %w", err)
	}
	return &unstructured.Unstructured{Object: content}, nil
}
