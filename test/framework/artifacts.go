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

package framework

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ArtifactServer serves Flux artifacts as source-controller does: a gzipped
// tarball per revision, at the URL the source's status.artifact names.
type ArtifactServer struct {
	*httptest.Server
	mu    sync.Mutex
	blobs map[string][]byte
}

// NewArtifactServer starts an ArtifactServer; Close stops it.
func NewArtifactServer() *ArtifactServer {
	a := &ArtifactServer{blobs: map[string][]byte{}}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		blob, ok := a.blobs[r.URL.Path]
		a.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(blob)
	}))
	return a
}

// Publish serves files (path: content) as revision's artifact and returns
// the status.artifact entry source-controller would write for it.
func (a *ArtifactServer) Publish(revision string, files map[string]string) (*fluxmeta.Artifact, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		content := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			return nil, fmt.Errorf("writing the artifact: %w", err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			return nil, fmt.Errorf("writing the artifact: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("writing the artifact: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("writing the artifact: %w", err)
	}
	path := "/gitrepository/" + revision + ".tar.gz"
	a.mu.Lock()
	a.blobs[path] = buf.Bytes()
	a.mu.Unlock()
	sum := sha256.Sum256(buf.Bytes())
	size := int64(buf.Len())
	return &fluxmeta.Artifact{URL: a.URL + path, Path: path, Revision: revision,
		Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: &size, LastUpdateTime: metav1.Now()}, nil
}
