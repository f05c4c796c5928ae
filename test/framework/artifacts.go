package framework

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ArtifactServer serves Flux artifacts as source-controller does: a gzipped
// tarball per revision, at /gitrepository/<namespace>/<name>/<file>, the URL
// the source's status.artifact names. It counts the requests of each path.
type ArtifactServer struct {
	*httptest.Server
	mu       sync.Mutex
	blobs    map[string][]byte
	requests map[string]int
}

// NewArtifactServer starts an ArtifactServer; Close stops it.
func NewArtifactServer() *ArtifactServer {
	a := &ArtifactServer{blobs: map[string][]byte{}, requests: map[string]int{}}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		blob, ok := a.blobs[r.URL.Path]
		a.requests[r.URL.Path]++
		a.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(blob)
	}))
	return a
}

// Requests is how many requests the server answered for path.
func (a *ArtifactServer) Requests(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests[path]
}

// TarEntry is one file of a tarball: Size bytes read from Content.
type TarEntry struct {
	Name    string
	Size    int64
	Content io.Reader
}

// Tarball writes entries as a gzipped tarball.
func Tarball(entries ...TarEntry) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e.Name, Mode: 0o644, Size: e.Size, Typeflag: tar.TypeReg}); err != nil {
			return nil, fmt.Errorf("writing the artifact: %w", err)
		}
		if _, err := io.CopyN(tw, e.Content, e.Size); err != nil {
			return nil, fmt.Errorf("writing the artifact: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("writing the artifact: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("writing the artifact: %w", err)
	}
	return buf.Bytes(), nil
}

// Publish serves files (path: content) as revision's artifact of
// GitRepository namespace/name and returns the status.artifact entry
// source-controller would write for it.
func (a *ArtifactServer) Publish(namespace, name, revision string, files map[string]string) (*fluxmeta.Artifact, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	entries := make([]TarEntry, len(names))
	for i, n := range names {
		entries[i] = TarEntry{Name: n, Size: int64(len(files[n])), Content: strings.NewReader(files[n])}
	}
	blob, err := Tarball(entries...)
	if err != nil {
		return nil, err
	}
	return a.PublishBlob(namespace, name, revision, blob), nil
}

// PublishBlob serves blob as revision's artifact of GitRepository
// namespace/name, named by its digest as source-controller names it.
func (a *ArtifactServer) PublishBlob(namespace, name, revision string, blob []byte) *fluxmeta.Artifact {
	sum := sha256.Sum256(blob)
	digest := hex.EncodeToString(sum[:])
	path := "/gitrepository/" + namespace + "/" + name + "/" + digest + ".tar.gz"
	a.mu.Lock()
	a.blobs[path] = blob
	a.mu.Unlock()
	size := int64(len(blob))
	return &fluxmeta.Artifact{URL: a.URL + path, Path: strings.TrimPrefix(path, "/"), Revision: revision,
		Digest: "sha256:" + digest, Size: &size, LastUpdateTime: metav1.Now()}
}
