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
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/validate"
)

// exitError carries the process's exit code: 1 for invalid objects, 2 for
// usage errors and unreadable input.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode is the exit code for the error a command returned.
func exitCode(err error) int {
	var e *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.code
	default:
		return 1
	}
}

func usageError(err error) error { return &exitError{code: 2, err: err} }

// checkOptions are the inputs validate and plan share: the manifests, and
// where the old versions that transition rules compare against come from.
type checkOptions struct {
	kube *kubeFlags
	base string
	live bool
}

func (o *checkOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.base, "base", "", "a Git revision: the same paths at it are the old versions, so transition rules run")
	f.BoolVar(&o.live, "live", false, "read the old versions from the cluster (the kubeconfig flags), so transition rules run")
	cmd.MarkFlagsMutuallyExclusive("base", "live")
}

// checked is one object of ours with its admission.
type checked struct {
	validate.Document
	// old is the version it updates (from --base or --live), nil for a create.
	old *unstructured.Unstructured
	// stored is the object as the API server would store it.
	stored *unstructured.Unstructured
	// err is the API server's answer, nil when admitted.
	err error
}

// checkResult is every checked object and the count of documents of other kinds.
type checkResult struct {
	objects []checked
	ignored int
	// configMaps are the ConfigMaps among the manifests, a Testset's source.
	configMaps configMaps
	// oldConfigMaps are where the old versions' ConfigMaps are: the
	// revision's manifests, or the cluster; nil without --base or --live.
	oldConfigMaps configMapSource
}

func (r checkResult) invalid() int {
	n := 0
	for _, c := range r.objects {
		if c.err != nil {
			n++
		}
	}
	return n
}

// oldVersionFunc returns the old version of an object, nil if there is none.
type oldVersionFunc func(context.Context, *unstructured.Unstructured) (*unstructured.Unstructured, error)

// check reads the manifests at paths and admits each object of ours as the
// API server would, as an update of its old version when one is known.
func (o *checkOptions) check(cmd *cobra.Command, paths []string) (checkResult, error) {
	var res checkResult
	docs, err := validate.ReadPaths(paths, cmd.InOrStdin())
	if err != nil {
		return res, usageError(err)
	}
	v, err := validate.New()
	if err != nil {
		return res, err
	}
	olds, oldCMs, namespace, err := o.oldVersions(cmd.Context(), v, paths)
	if err != nil {
		return res, usageError(err)
	}
	res.oldConfigMaps = oldCMs
	kustomizeNamespaces(docs)
	res.configMaps = configMaps{}
	for _, d := range docs {
		res.configMaps.add(d, namespace, os.ReadFile)
	}
	for _, d := range docs {
		if d.Object.GroupVersionKind().Group != v1alpha1.GroupVersion.Group {
			res.ignored++
			continue
		}
		if d.Object.GetNamespace() == "" && namespace != "" {
			d.Object.SetNamespace(namespace)
		}
		c, err := checkOne(cmd.Context(), v, d, olds)
		if err != nil {
			return res, err
		}
		if c.err == nil && d.Object.GetKind() == "Testset" {
			// The operator would stop at bad testcases and send nothing.
			_, _, c.err = sourceSet(cmd.Context(), c.stored, res.configMaps)
		}
		res.objects = append(res.objects, c)
	}
	return res, nil
}

// oldVersions is where the old versions and their Testsets' ConfigMaps
// come from (--base, --live, or nowhere: nil), and the namespace for
// manifests without one.
func (o *checkOptions) oldVersions(ctx context.Context, v *validate.Validator, paths []string) (
	oldVersionFunc, configMapSource, string, error) {
	switch {
	case o.base != "":
		olds, cms, err := o.baseVersions(ctx, v, paths)
		return olds, cms, o.kube.namespace, err
	case o.live:
		c, ns, err := o.kube.client()
		if err != nil {
			return nil, nil, "", err
		}
		return liveVersions(c), liveConfigMaps{c}, ns, nil
	}
	return nil, nil, o.kube.namespace, nil
}

// checkOne admits one object, as an update when olds knows an old version.
func checkOne(ctx context.Context, v *validate.Validator, d validate.Document, olds oldVersionFunc) (checked, error) {
	c := checked{Document: d}
	gvk := d.Object.GroupVersionKind()
	if !v.Handles(gvk) {
		c.err = fmt.Errorf("no matches for kind %q in version %q", gvk.Kind, gvk.GroupVersion())
		return c, nil
	}
	if olds != nil {
		var err error
		if c.old, err = olds(ctx, d.Object); err != nil {
			return c, err
		}
	}
	if c.old != nil {
		c.stored, c.err = v.Update(ctx, d.Object, c.old)
	} else {
		c.stored, c.err = v.Create(ctx, d.Object)
	}
	return c, nil
}

// objectKey matches an object with its old version.
type objectKey struct {
	gk              schema.GroupKind
	namespace, name string
}

func keyOf(u *unstructured.Unstructured) objectKey {
	return objectKey{u.GroupVersionKind().GroupKind(), u.GetNamespace(), u.GetName()}
}

// baseVersions reads the paths at the --base revision and matches objects
// by kind, namespace and name, wherever the file they are in. Each is taken
// as the API server would have stored it (defaulted). The ConfigMaps are
// the revision's, its generators' files read at the revision too.
func (o *checkOptions) baseVersions(ctx context.Context, v *validate.Validator, paths []string) (
	oldVersionFunc, configMaps, error) {
	docs, err := validate.ReadGit(o.base, paths)
	if err != nil {
		return nil, nil, err
	}
	kustomizeNamespaces(docs)
	byKey := map[objectKey]*unstructured.Unstructured{}
	cms := configMaps{}
	atBase := func(path string) ([]byte, error) { return validate.GitFile(o.base, path) }
	for _, d := range docs {
		cms.add(d, o.kube.namespace, atBase)
		if !v.Handles(d.Object.GroupVersionKind()) {
			continue
		}
		if d.Object.GetNamespace() == "" && o.kube.namespace != "" {
			d.Object.SetNamespace(o.kube.namespace)
		}
		old := d.Object
		// An old version that would not be admitted today still is the old
		// version; only its defaults are taken.
		if stored, _ := v.Create(ctx, old); stored != nil {
			stored.SetNamespace(old.GetNamespace())
			old = stored
		}
		byKey[keyOf(d.Object)] = old
	}
	return func(_ context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return byKey[keyOf(u)], nil
	}, cms, nil
}

// liveVersions reads each object from the cluster; a missing one is a create.
func liveVersions(c client.Client) oldVersionFunc {
	return func(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(u.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(u), live)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("reading %s %s from the cluster: %w", u.GetKind(), objectName(u), err)
		}
		return live, nil
	}
}

// objectName is namespace/name, or name alone without a namespace.
func objectName(u *unstructured.Unstructured) string {
	name := u.GetName()
	if name == "" {
		name = u.GetGenerateName() + "*"
	}
	if u.GetNamespace() == "" {
		return name
	}
	return u.GetNamespace() + "/" + name
}

// where is the document's position for messages.
func where(d validate.Document) string {
	return fmt.Sprintf("%s:%d", d.File, d.Line)
}

// githubEscape escapes a workflow command's message (data) or property.
func githubEscape(s string, property bool) string {
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	s = r.Replace(s)
	if property {
		s = strings.NewReplacer(":", "%3A", ",", "%2C").Replace(s)
	}
	return s
}
