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
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/testcases"
)

// Bounds of one artifact fetch.
const (
	// MaxArtifactBytes bounds the download of one Flux artifact: an artifact
	// is read as a stream, never held whole, but the download is cut off here.
	MaxArtifactBytes = 512 << 20
	// DefaultArtifactMaxBytes is the default of Artifacts.MaxBytes.
	DefaultArtifactMaxBytes = 256 << 20
	// DefaultArtifactTimeout is the default of Artifacts.Timeout.
	DefaultArtifactTimeout = time.Minute
)

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
	// HTTP sends the downloads; Setup makes a copy that follows no redirect.
	HTTP *http.Client
	// Hosts are the only hosts and ports an artifact URL may name: host (the
	// scheme's own port), host:port, or *.suffix for the names under suffix,
	// with or without a port. A source's status names the URL the manager
	// fetches. Empty allows any.
	Hosts []string
	// Timeout bounds one fetch, download and parse, from its first byte to
	// its last (--artifact-timeout); DefaultArtifactTimeout if zero.
	Timeout time.Duration
	// MaxBytes bounds the bytes of an artifact's tarball read, decompressed,
	// up to the end of the Testset's file (--artifact-max-bytes);
	// DefaultArtifactMaxBytes if zero.
	MaxBytes int64
}

// fromFluxSource reads ref's file from the latest artifact of its Flux
// source, once per artifact: the Testsets that read the same file of the
// same artifact share its set, or its bad data. The artifact is streamed:
// the file is parsed as it is read, the rest only hashed, and the set used
// only once the whole artifact matched its digest. The set is held of the
// budget (see holdSet).
func (r *Reconciler) fromFluxSource(ctx context.Context, namespace string, ref v1alpha1.FluxSourceTestcases, field string) (
	testcases.Set, *hold, *kit.Outcome, ctrl.Result, error) {
	stop := func(o kit.Outcome) (testcases.Set, *hold, *kit.Outcome, ctrl.Result, error) {
		return testcases.Set{}, nil, &o, ctrl.Result{}, nil
	}
	if !r.fluxServed[ref.Kind] {
		return stop(kit.Stalled(v1alpha1.ReasonSourceNotReady, fmt.Sprintf(
			"the cluster does not serve Flux's %s (source.toolkit.fluxcd.io/v1) since the manager started: "+
				"install Flux's source-controller, then restart the manager", ref.Kind)))
	}
	src := newFluxSource(ref.Kind)
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, src); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return stop(kit.Progressing(v1alpha1.ReasonSourceNotReady,
				fmt.Sprintf("%s %s not found; the Testset is synced once it has an artifact", ref.Kind, ref.Name)))
		}
		return testcases.Set{}, nil, nil, ctrl.Result{}, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	a := src.GetArtifact()
	if a == nil {
		why := "it has no artifact yet"
		if c := meta.FindStatusCondition(src.GetConditions(), "Ready"); c != nil && c.Status != metav1.ConditionTrue {
			why = "it is not ready: " + short(c.Message)
		}
		return stop(kit.Progressing(v1alpha1.ReasonSourceNotReady, fmt.Sprintf("%s %s: %s", ref.Kind, ref.Name, why)))
	}
	if why := r.artifacts.refuse(a, ref.Kind, namespace, ref.Name); why != "" {
		return stop(kit.Stalled(v1alpha1.ReasonSourceNotReady, fmt.Sprintf("%s %s's artifact %s", ref.Kind, ref.Name, why)))
	}
	what := fmt.Sprintf("%s %s revision %s, %s", ref.Kind, ref.Name, short(a.Revision), ref.Path)
	key := strings.Join([]string{a.URL, a.Digest, ref.Path, field}, "\n")
	got, ok := r.sets.get(key)
	var h *hold
	if !ok {
		leave, why := r.fetches.enter(namespace, key)
		if leave == nil {
			o := kit.Progressing(v1alpha1.ReasonSourceNotReady, what+": "+why)
			return testcases.Set{}, nil, &o, ctrl.Result{RequeueAfter: fetchRetry}, nil
		}
		defer leave()
		// The file is read as a stream of at most limits.Bytes.
		if h, why = r.memory.take(namespace, mostHeld(r.limits, r.limits.Bytes, r.limits.Testcases)); h == nil {
			o, res := waitForMemory(why)
			return testcases.Set{}, nil, o, res, nil
		}
		got.set, got.err = r.artifacts.read(ctx, a, ref.Path, r.limits, field)
		r.sets.put(key, got.set, got.err)
	}
	h, wait, res := r.holdSet(namespace, h, got)
	if wait != nil {
		return testcases.Set{}, nil, wait, res, nil
	}
	if o := badData(got.err); o != nil {
		o.Message = what + ": " + o.Message
		return stop(*o)
	}
	var missing *missingFileError
	if errors.As(got.err, &missing) {
		return stop(kit.Stalled(v1alpha1.ReasonSourceNotReady, what+": "+got.err.Error()))
	}
	if got.err != nil {
		o := kit.Progressing(v1alpha1.ReasonSourceNotReady, fmt.Sprintf("fetching %s %s's artifact (revision %s): %s",
			ref.Kind, ref.Name, short(a.Revision), got.err))
		return testcases.Set{}, nil, &o, ctrl.Result{}, got.err
	}
	return got.set, h, nil, ctrl.Result{}, nil
}

// judged reports whether err is the verdict on an artifact's content,
// which its digest fixes: bad data, no such file. Other errors (the
// network's, a digest that does not match) may pass; they are not held.
func judged(err error) bool {
	var bad *testcases.Error
	var missing *missingFileError
	return errors.As(err, &bad) || errors.As(err, &missing)
}

// short cuts text a source's status holds to what a message may quote.
func short(s string) string {
	const most = 120
	if len(s) <= most {
		return s
	}
	return strings.ToValidUTF8(s[:most], "") + "..."
}

// refuse says why the manager does not fetch a as the artifact of the
// source kind namespace/name, or "". The URL must name an allowed host and
// port, and the path source-controller serves this very source's artifacts
// at: /<kind>/<namespace>/<name>/<file>, so that a source's status, which
// whoever may write it can set, never names another source's artifact.
func (f *Artifacts) refuse(a *fluxmeta.Artifact, kind v1alpha1.SourceKind, namespace, name string) string {
	algo, sum, _ := strings.Cut(a.Digest, ":")
	if b, err := hex.DecodeString(sum); algo != "sha256" || err != nil || len(b) != sha256.Size {
		return fmt.Sprintf("digest %q is not sha256:<64 hex digits>", short(a.Digest))
	}
	u, ok := plainURL(a.URL)
	if !ok {
		return "URL is not a plain http or https URL"
	}
	if !hostAllowed(u, f.Hosts) {
		return "URL names a host and port the manager may not fetch from (--artifact-hosts)"
	}
	dir := "/" + strings.ToLower(string(kind)) + "/" + namespace + "/" + name + "/"
	if file, ok := strings.CutPrefix(u.Path, dir); !ok || file == "" || strings.Contains(file, "/") || file == ".." {
		return "URL's path is not " + dir + "<file>, where source-controller serves this source's artifacts"
	}
	return ""
}

// plainURL parses rawURL, an http or https URL without user, query,
// fragment or escaped slashes.
func plainURL(rawURL string) (*url.URL, bool) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Host == "" {
		return nil, false
	}
	return u, u.RawQuery == "" && u.Fragment == "" && u.RawPath == ""
}

// hostAllowed reports whether u's host and port are one of hosts: an entry
// without a port allows the scheme's own port only. Every host is when
// hosts is empty.
func hostAllowed(u *url.URL, hosts []string) bool {
	if len(hosts) == 0 {
		return true
	}
	port := u.Port()
	if port == "" {
		port = defaultPorts[u.Scheme]
	}
	return slices.ContainsFunc(hosts, func(entry string) bool {
		host, p, err := net.SplitHostPort(entry)
		if err != nil {
			host, p = strings.Trim(entry, "[]"), defaultPorts[u.Scheme]
		}
		return p == port && remote.HostAllowed(u.String(), []string{host})
	})
}

var defaultPorts = map[string]string{"http": "80", "https": "443"}

// errRedirect refuses every redirect: source-controller answers an
// artifact's URL itself, and a redirect could lead anywhere, past the hosts
// and the source's own path.
var errRedirect = errors.New("the artifact URL answered with a redirect, which the manager does not follow")

// missingFileError: the artifact holds no such file.
type missingFileError struct{ path string }

func (e *missingFileError) Error() string { return "the artifact has no file " + e.path }

// read downloads artifact a, reads file name from it as JSON Lines within
// limits, and checks the whole download against a's digest, all within
// f.Timeout. Bad data is returned only once the digest matched.
func (f *Artifacts) read(ctx context.Context, a *fluxmeta.Artifact, name string, limits testcases.Limits, field string) (
	testcases.Set, error) {
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	set, err := f.download(ctx, a, name, limits, field)
	if errors.Is(err, context.DeadlineExceeded) {
		return testcases.Set{}, fmt.Errorf("the download did not end within %s (--artifact-timeout)", f.Timeout)
	}
	return set, err
}

func (f *Artifacts) download(ctx context.Context, a *fluxmeta.Artifact, name string, limits testcases.Limits, field string) (
	testcases.Set, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		return testcases.Set{}, errors.New("the artifact URL is not a valid request")
	}
	resp, err := f.HTTP.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) { // its text repeats the URL
			err = uerr.Err
		}
		return testcases.Set{}, fmt.Errorf("downloading the artifact: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return testcases.Set{}, fmt.Errorf("downloading the artifact: %s", resp.Status)
	}
	h := sha256.New()
	body := io.TeeReader(testcases.Capped(resp.Body, MaxArtifactBytes,
		testcases.OverLimit("the artifact is over %d bytes", MaxArtifactBytes)), h)
	set, ferr := f.fileOf(body, name, limits, field)
	if ferr != nil && !judged(ferr) {
		return testcases.Set{}, ferr
	}
	// The rest is hashed too: the set, or its bad data, is used only if the
	// whole artifact is the one named.
	if _, err := io.Copy(io.Discard, body); err != nil {
		return testcases.Set{}, fmt.Errorf("downloading the artifact: %w", err)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != a.Digest {
		return testcases.Set{}, fmt.Errorf("the artifact's sha256 is not the %s its source names", a.Digest)
	}
	return set, ferr
}

// fileOf reads file name of a gzipped tarball as JSON Lines, reading at
// most f.MaxBytes decompressed.
func (f *Artifacts) fileOf(r io.Reader, name string, limits testcases.Limits, field string) (testcases.Set, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return testcases.Set{}, fmt.Errorf("reading the artifact: %w", err)
	}
	over := testcases.OverLimit(
		"the artifact is over %d bytes decompressed before the end of %s, the limit (--artifact-max-bytes)", f.MaxBytes, name)
	capped := testcases.Capped(zr, f.MaxBytes, over)
	tr := tar.NewReader(capped)
	want := path.Clean(name)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return testcases.Set{}, &missingFileError{path: name}
		}
		if capped.Exceeded() {
			return testcases.Set{}, over
		}
		if err != nil {
			return testcases.Set{}, fmt.Errorf("reading the artifact: %w", err)
		}
		if hdr.Typeflag == tar.TypeReg && path.Clean(strings.TrimPrefix(hdr.Name, "./")) == want {
			// The caller reads the rest of the download into the hash.
			set, err := limits.FromLines(tr, field)
			if err != nil && capped.Exceeded() { // the file was cut at the limit
				return testcases.Set{}, over
			}
			return set, err
		}
	}
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
