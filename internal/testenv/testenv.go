// Package testenv starts the real kube-apiserver and etcd (envtest) that the
// test suites run against, with this project's CRDs installed.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

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
	return s
}

// New returns an envtest environment with the CRDs of config/crd/bases. It
// reads the binaries from KUBEBUILDER_ASSETS, defaulting to bin/k8s (what
// `make envtest` provides), so a suite also runs from an IDE.
func New() (*envtest.Environment, error) {
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
