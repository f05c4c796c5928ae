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

// Package framework is the test infrastructure the suites share, in the
// spirit of cluster-api's test/framework: the envtest control plane with this
// project's CRDs, the manager binary built and run as a child process (as
// `make dev`, the e2e and reliability suites and the benchmarks run it),
// and the objects, keys and parallel driver they put load on it with.
package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Scheme holds the built-in kinds and this project's kinds.
func Scheme() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := evaluationv1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := sourcev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// WithFluxSources adds Flux's source CRDs (`make flux-crds`) to env, for a
// suite that serves Testsets a Flux source.
func WithFluxSources(env *envtest.Environment) error {
	dir := filepath.Join(RepoRoot(), "bin", "flux-crds")
	if _, err := os.Stat(filepath.Join(dir, "source.toolkit.fluxcd.io_gitrepositories.yaml")); err != nil {
		return fmt.Errorf("no Flux source CRDs in %s: run `make flux-crds` first: %w", dir, err)
	}
	env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, dir)
	return nil
}

// NewEnvironment returns an envtest environment with the CRDs of
// config/crd/bases. It reads the binaries from KUBEBUILDER_ASSETS, defaulting
// to bin/k8s (what `make envtest` provides), so a suite also runs from an IDE.
func NewEnvironment() (*envtest.Environment, error) {
	root := RepoRoot()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		assets := filepath.Join(root, "bin", "k8s")
		if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
			return nil, fmt.Errorf("no control plane in %s: run `make envtest` first: %w", assets, err)
		}
		if err := os.Setenv("KUBEBUILDER_ASSETS", assets); err != nil {
			return nil, err
		}
	}
	return &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme(),
	}, nil
}
