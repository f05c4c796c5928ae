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

package validate

import (
	"context"
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	apiextensionsfeatures "k8s.io/apiextensions-apiserver/pkg/features"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage/names"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// strategy is the customresource registry's strategy (k8s.io/apiextensions-
// apiserver/pkg/registry/customresource: strategy.go, validator.go) for a CRD
// without a scale subresource, composed from the same validation packages.
// That package itself cannot be imported without the API server's etcd
// storage, which would triple the plugin's size; the suite in api/v1alpha1
// runs every admission case through both and compares the field errors.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator

	namespaced bool
	kind       schema.GroupVersionKind
	hasStatus  bool
	schema     apiservervalidation.SchemaValidator
	structural *structuralschema.Structural
	cel        *cel.Validator
}

func newStrategy(kind schema.GroupVersionKind, namespaced, hasStatus bool,
	validator apiservervalidation.SchemaValidator, structural *structuralschema.Structural) *strategy {
	return &strategy{
		ObjectTyper:   crdserverscheme.NewUnstructuredObjectTyper(),
		NameGenerator: names.SimpleNameGenerator,
		namespaced:    namespaced,
		kind:          kind,
		hasStatus:     hasStatus,
		schema:        validator,
		structural:    structural,
		cel:           cel.NewValidator(structural, true, celconfig.PerCallLimit),
	}
}

func (s *strategy) NamespaceScoped() bool                                     { return s.namespaced }
func (s *strategy) Canonicalize(runtime.Object)                               {}
func (s *strategy) AllowCreateOnUpdate(context.Context) bool                  { return false }
func (s *strategy) AllowUnconditionalUpdate(context.Context) bool             { return false }
func (s *strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// PrepareForCreate drops status when it is a subresource and starts the
// generation at 1.
func (s *strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	u := obj.(*unstructured.Unstructured)
	if s.hasStatus {
		delete(u.Object, "status")
	}
	u.SetGeneration(1)
}

// PrepareForUpdate keeps the stored status when it is a subresource and
// bumps the generation when anything but metadata changed.
func (s *strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	if s.hasStatus {
		if status, ok := o.Object["status"]; ok {
			u.Object["status"] = status
		} else {
			delete(u.Object, "status")
		}
	}
	if !apiequality.Semantic.DeepEqual(withoutMetadata(u.Object), withoutMetadata(o.Object)) {
		u.SetGeneration(o.GetGeneration() + 1)
	}
}

func withoutMetadata(content map[string]any) map[string]any {
	out := make(map[string]any, len(content))
	for k, v := range content {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}

// Validate is the registry strategy's Validate.
func (s *strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	u := obj.(*unstructured.Unstructured)
	if errs := s.validateTypeMeta(u); len(errs) > 0 {
		return errs
	}
	meta, errs := objectMeta(u)
	if len(errs) > 0 {
		return errs
	}
	errs = metavalidation.ValidateObjectMetaDeclaratively(ctx, operation.Create, meta, nil, s.namespaced,
		metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"), utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta))
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.Object, s.schema)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, s.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.structural, u.Object)...)
	return append(errs, s.validateCEL(ctx, errs, u.Object, nil)...)
}

// ValidateUpdate is the registry strategy's ValidateUpdate, with ratcheting
// when its feature gate is on (the default).
func (s *strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	var (
		options    []apiservervalidation.ValidationOption
		celOptions []cel.Option
	)
	if utilfeature.DefaultFeatureGate.Enabled(apiextensionsfeatures.CRDValidationRatcheting) {
		correlated := common.NewCorrelatedObject(u.Object, o.Object, &model.Structural{Structural: s.structural})
		options = append(options, apiservervalidation.WithRatcheting(correlated))
		celOptions = append(celOptions, cel.WithRatcheting(correlated))
	}
	if errs := s.validateTypeMeta(u); len(errs) > 0 {
		return errs
	}
	meta, errs := objectMeta(u)
	if len(errs) > 0 {
		return errs
	}
	oldMeta, errs := objectMeta(o)
	if len(errs) > 0 {
		return errs
	}
	errs = metavalidation.ValidateObjectMetaDeclaratively(ctx, operation.Update, meta, oldMeta, s.namespaced,
		nil, field.NewPath("metadata"), utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta))
	errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, u.Object, o.Object, s.schema, options...)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, s.structural, false)...)
	if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, s.structural, o.Object); len(oldErrs) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.structural, u.Object)...)
	}
	return append(errs, s.validateCEL(ctx, errs, u.Object, o.Object, celOptions...)...)
}

func (s *strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// validateCEL runs the x-kubernetes-validations rules unless errs already
// hold an error that makes their cost unbounded, as the API server does.
func (s *strategy) validateCEL(ctx context.Context, errs field.ErrorList, obj, old any, opts ...cel.Option) field.ErrorList {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.ErrorList{field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
		}
	}
	celErrs, _ := s.cel.Validate(ctx, nil, s.structural, obj, old, celconfig.RuntimeCELCostBudget, opts...)
	return celErrs
}

func (s *strategy) validateTypeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != s.kind.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), fmt.Sprintf("must be %v", s.kind.Kind)))
	}
	if want := s.kind.GroupVersion().String(); u.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), fmt.Sprintf("must be %v", want)))
	}
	return errs
}

func objectMeta(u *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	raw, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return &metav1.ObjectMeta{}, nil
	}
	meta := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, meta); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return meta, nil
}
