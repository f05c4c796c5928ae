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

package testset

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// MaxArtifactBytes bounds the download of one Flux artifact: an artifact
// is read as a stream, never held whole, but the download is cut off here.
const MaxArtifactBytes = 512 << 20

// fluxSource is a Flux source object: an object with an artifact.
type fluxSource interface {
	client.Object
	GetArtifact() *fluxmeta.Artifact
	GetConditions() []metav1.Condition
}

// newFluxSource returns an empty object of a Flux source kind.
func newFluxSource(kind v1alpha1.SourceKind) fluxSource {
	switch kind {
	case "OCIRepository":
		return &sourcev1.OCIRepository{}
	case "Bucket":
		return &sourcev1.Bucket{}
	default:
		return &sourcev1.GitRepository{}
	}
}

// fluxKinds are the Flux source kinds a sourceRef may name.
var fluxKinds = []v1alpha1.SourceKind{"GitRepository", "OCIRepository", "Bucket"}

// Artifacts fetches Flux artifacts.
type Artifacts struct {
	// HTTP sends the downloads; it should bound their time.
	HTTP *http.Client
	// Hosts are the only hosts an artifact URL may name (exact names or
	// *.suffix): a source's status names the URL the manager fetches.
	Hosts []string
}

// fromFluxSource reads ref's file from the latest artifact of its Flux
// source. The artifact is streamed: the file is parsed as it is read, the
// rest only hashed, and the set used only once the whole artifact matched
// its digest.
func (r *Reconciler) fromFluxSource(ctx context.Context, namespace string, ref v1alpha1.FluxSourceTestcases, field string) (
	testcases.Set, *kit.Outcome, error) {
	notReady := func(format string, args ...any) (testcases.Set, *kit.Outcome, error) {
		o := kit.Progressing(v1alpha1.ReasonSourceNotReady, fmt.Sprintf(format, args...))
		return testcases.Set{}, &o, nil
	}
	if !r.fluxServed[ref.Kind] {
		o := kit.Stalled(v1alpha1.ReasonSourceNotReady, fmt.Sprintf(
			"the cluster does not serve Flux's %s (source.toolkit.fluxcd.io/v1) since the manager started: "+
				"install Flux's source-controller, then restart the manager", ref.Kind))
		return testcases.Set{}, &o, nil
	}
	src := newFluxSource(ref.Kind)
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, src); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return notReady("%s %s not found; the Testset is synced once it has an artifact", ref.Kind, ref.Name)
		}
		return testcases.Set{}, nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	a := src.GetArtifact()
	if a == nil {
		why := "it has no artifact yet"
		if c := meta.FindStatusCondition(src.GetConditions(), "Ready"); c != nil && c.Status != metav1.ConditionTrue {
			why = "it is not ready: " + c.Message
		}
		return notReady("%s %s: %s", ref.Kind, ref.Name, why)
	}
	if !remote.HostAllowed(a.URL, r.artifacts.Hosts) {
		o := kit.Stalled(v1alpha1.ReasonSourceNotReady, fmt.Sprintf(
			"%s %s's artifact URL names a host the manager may not fetch from (--artifact-hosts)", ref.Kind, ref.Name))
		return testcases.Set{}, &o, nil
	}
	set, err := r.artifacts.read(ctx, a, ref.Path, field)
	if o := badData(err); o != nil {
		o.Message = fmt.Sprintf("%s %s revision %s, %s: %s", ref.Kind, ref.Name, a.Revision, ref.Path, o.Message)
		return testcases.Set{}, o, nil
	}
	var missing *missingFileError
	if errors.As(err, &missing) {
		o := kit.Stalled(v1alpha1.ReasonSourceNotReady, fmt.Sprintf("%s %s revision %s: %s",
			ref.Kind, ref.Name, a.Revision, err))
		return testcases.Set{}, &o, nil
	}
	if err != nil {
		o := kit.Progressing(v1alpha1.ReasonSourceNotReady, fmt.Sprintf("fetching %s %s's artifact (revision %s): %s",
			ref.Kind, ref.Name, a.Revision, err))
		return testcases.Set{}, &o, err
	}
	return set, nil, nil
}

// missingFileError: the artifact holds no such file.
type missingFileError struct{ path string }

func (e *missingFileError) Error() string { return "the artifact has no file " + e.path }

// read downloads artifact a, reads file name from it as JSON Lines, and
// checks the whole download against a's digest.
func (f *Artifacts) read(ctx context.Context, a *fluxmeta.Artifact, name, field string) (testcases.Set, error) {
	algo, want, ok := strings.Cut(a.Digest, ":")
	if !ok || algo != "sha256" {
		return testcases.Set{}, fmt.Errorf("artifact digest %q is not sha256:<hex>", a.Digest)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		return testcases.Set{}, fmt.Errorf("artifact URL: %w", err)
	}
	resp, err := f.HTTP.Do(req)
	if err != nil {
		return testcases.Set{}, fmt.Errorf("downloading the artifact: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return testcases.Set{}, fmt.Errorf("downloading the artifact: %s", resp.Status)
	}
	h := sha256.New()
	body := io.TeeReader(&capped{r: resp.Body, left: MaxArtifactBytes}, h)
	set, err := fileOf(body, name, field)
	if err != nil {
		return testcases.Set{}, err
	}
	// The rest is hashed too: the set is used only if the whole artifact is the one named.
	if _, err := io.Copy(io.Discard, body); err != nil {
		return testcases.Set{}, fmt.Errorf("downloading the artifact: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return testcases.Set{}, fmt.Errorf("the artifact's sha256 is %s, its source names %s", got, want)
	}
	return set, nil
}

// fileOf reads file name of a gzipped tarball as JSON Lines.
func fileOf(r io.Reader, name, field string) (testcases.Set, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return testcases.Set{}, fmt.Errorf("reading the artifact: %w", err)
	}
	tr := tar.NewReader(zr)
	want := path.Clean(name)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return testcases.Set{}, &missingFileError{path: name}
		}
		if err != nil {
			return testcases.Set{}, fmt.Errorf("reading the artifact: %w", err)
		}
		if hdr.Typeflag == tar.TypeReg && path.Clean(strings.TrimPrefix(hdr.Name, "./")) == want {
			// The caller reads the rest of the download into the hash.
			return testcases.FromLines(tr, field)
		}
	}
}

// capped reads at most left bytes, and fails beyond them.
type capped struct {
	r    io.Reader
	left int64
}

var errTooLarge = fmt.Errorf("the artifact is over %d bytes", MaxArtifactBytes)

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if n, _ := c.r.Read(p[:1]); n > 0 {
			return 0, errTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// fluxServed reports which Flux source kinds the cluster serves.
func fluxServed(mapper meta.RESTMapper) map[v1alpha1.SourceKind]bool {
	served := map[v1alpha1.SourceKind]bool{}
	for _, k := range fluxKinds {
		gk := schema.GroupKind{Group: sourcev1.GroupVersion.Group, Kind: string(k)}
		if _, err := mapper.RESTMapping(gk, sourcev1.GroupVersion.Version); err == nil {
			served[k] = true
		}
	}
	return served
}
