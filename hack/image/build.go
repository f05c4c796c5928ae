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
	"archive/tar"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// user is distroless's "nonroot", numeric so runAsNonRoot can verify it.
	user = "65532:65532"
	// entrypoint is the manager; kubectl-eval sits beside it.
	entrypoint  = "/manager"
	caCertsPath = "etc/ssl/certs/ca-certificates.crt"
	// sbomDir holds a CycloneDX SBOM of each binary, <binary>.cdx.json.
	sbomDir = "sbom"
	// sbomSuffix names a binary's SBOM beside it in --bin-dir and in sbomDir.
	sbomSuffix = ".cdx.json"
	// containerdName and ociRefName name the image in index.json for
	// containerd (docker load, kind load) and OCI tools.
	containerdName = "io.containerd.image.name"
	ociRefName     = "org.opencontainers.image.ref.name"
)

// epoch is every timestamp in the image, so that the same binaries always
// give the same digests.
var epoch = time.Unix(0, 0).UTC()

// binaries are the files of the application layer, from each platform's
// build directory.
var binaries = []string{"manager", "kubectl-eval"}

type buildFlags struct {
	ref, binDir, platforms, caCerts, caCertsOrigin, layoutDir, tarballPath, dockerPlatform string
	origin                                                                                 origin
}

// incomplete reports whether a required flag is missing.
func (f buildFlags) incomplete() bool {
	return f.ref == "" || f.binDir == "" || f.layoutDir == "" || f.tarballPath == "" || f.caCerts == "" ||
		f.caCertsOrigin == "" || f.origin.incomplete()
}

// origin is where an image comes from: its source repository, revision and
// release version.
type origin struct{ source, revision, version string }

// bind adds the --source, --revision and --version flags to flags.
func (o *origin) bind(flags *flag.FlagSet) {
	flags.StringVar(&o.source, "source", "", "the source repository URL (org.opencontainers.image.source)")
	flags.StringVar(&o.revision, "revision", "", "the source revision (org.opencontainers.image.revision)")
	flags.StringVar(&o.version, "version", "", "the release version (org.opencontainers.image.version)")
}

// incomplete reports whether a flag of the origin is missing.
func (o origin) incomplete() bool { return o.source == "" || o.revision == "" || o.version == "" }

// annotations are the OCI pre-defined annotations of the origin, on the
// index, on each image manifest and as labels of each image's config.
func (o origin) annotations() map[string]string {
	return map[string]string{
		"org.opencontainers.image.source":   o.source,
		"org.opencontainers.image.revision": o.revision,
		"org.opencontainers.image.version":  o.version,
		"org.opencontainers.image.created":  epoch.Format(time.RFC3339),
	}
}

func build(args []string) error {
	var f buildFlags
	flags := flag.NewFlagSet("build", flag.ContinueOnError)
	flags.StringVar(&f.ref, "ref", "", "the image reference the release pushes, e.g. ghcr.io/eval-operator/eval-operator:v0.1.0")
	flags.StringVar(&f.binDir, "bin-dir", "",
		"directory with <os>_<arch>/manager and <os>_<arch>/kubectl-eval, each with its CycloneDX SBOM <binary>.cdx.json")
	flags.StringVar(&f.platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated os/arch")
	flags.StringVar(&f.caCerts, "ca-certs", "", "CA certificate bundle (PEM), e.g. from hack/debian-ca-certs.sh")
	flags.StringVar(&f.caCertsOrigin, "ca-certs-origin", "",
		"where the bundle comes from, recorded in the image's history, e.g. Debian ca-certificates 20230311+deb12u1")
	flags.StringVar(&f.layoutDir, "layout", "", "OCI image layout directory to write (replaced)")
	flags.StringVar(&f.tarballPath, "tarball", "", "tarball to write: the OCI layout plus a docker-archive manifest.json")
	flags.StringVar(&f.dockerPlatform, "docker-platform", "linux/amd64",
		"the platform whose image manifest.json lists, for docker load without the containerd image store")
	f.origin.bind(flags)
	if err := flags.Parse(args); err != nil {
		return err
	}
	if f.incomplete() {
		return fmt.Errorf("build needs --ref, --bin-dir, --ca-certs, --ca-certs-origin, --layout, --tarball, --source, --revision and --version")
	}
	annotations := f.origin.annotations()
	tag, err := name.NewTag(f.ref)
	if err != nil {
		return fmt.Errorf("--ref: %w", err)
	}
	certs, err := os.ReadFile(f.caCerts)
	if err != nil {
		return fmt.Errorf("--ca-certs: %w", err)
	}
	base, err := layer(baseFiles(certs))
	if err != nil {
		return err
	}

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var dockerImage v1.Image
	for _, p := range strings.Split(f.platforms, ",") {
		platform, err := v1.ParsePlatform(p)
		if err != nil {
			return fmt.Errorf("--platforms: %w", err)
		}
		img, err := platformImage(base, f.caCertsOrigin, *platform, filepath.Join(f.binDir, platform.OS+"_"+platform.Architecture), annotations)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img, Descriptor: v1.Descriptor{Platform: platform},
		})
		if p == f.dockerPlatform {
			dockerImage = img
		}
	}
	if dockerImage == nil {
		return fmt.Errorf("--docker-platform %s is not one of --platforms", f.dockerPlatform)
	}
	idx = mutate.Annotations(idx, annotations).(v1.ImageIndex)

	if err := writeLayout(f.layoutDir, idx, tag); err != nil {
		return err
	}
	return writeTarball(f.tarballPath, f.layoutDir, dockerImage, tag)
}

// file is one entry of a layer.
type file struct {
	name string
	mode int64
	uid  int
	data []byte
	dir  bool
}

// baseFiles are what distroless/static gives the manager: the CA bundle, a
// passwd and group naming root and nonroot, and a writable /tmp.
func baseFiles(certs []byte) []file {
	return []file{
		{name: "etc", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/ssl", mode: 0o755, dir: true},
		{name: "etc/ssl/certs", mode: 0o755, dir: true},
		{name: caCertsPath, mode: 0o644, data: certs},
		{name: "home", mode: 0o755, dir: true},
		{name: "home/nonroot", mode: 0o700, uid: 65532, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
	}
}

// platformImage is the base layer plus the platform's binaries and their
// SBOMs, with the config the Dockerfile sets.
func platformImage(base v1.Layer, caCertsOrigin string, platform v1.Platform, binDir string,
	annotations map[string]string) (v1.Image, error) {
	files := make([]file, 0, len(binaries))
	sboms := []file{{name: sbomDir, mode: 0o755, dir: true}}
	for _, b := range binaries {
		data, err := os.ReadFile(filepath.Join(binDir, b))
		if err != nil {
			return nil, fmt.Errorf("binary: %w", err)
		}
		files = append(files, file{name: b, mode: 0o755, data: data})
		sbom, err := os.ReadFile(filepath.Join(binDir, b+sbomSuffix))
		if err != nil {
			return nil, fmt.Errorf("SBOM (make image writes it with cyclonedx-gomod): %w", err)
		}
		sboms = append(sboms, file{name: sbomDir + "/" + b + sbomSuffix, mode: 0o644, data: sbom})
	}
	app, err := layer(files)
	if err != nil {
		return nil, err
	}
	sbomLayer, err := layer(sboms)
	if err != nil {
		return nil, err
	}
	img, err := imageOf(platform, func(c *v1.Config) {
		c.User = user
		c.Entrypoint = []string{entrypoint}
		c.WorkingDir = "/"
		c.Env = []string{"SSL_CERT_FILE=/" + caCertsPath}
		c.Labels = annotations
	},
		mutate.Addendum{Layer: base, History: v1.History{Created: v1.Time{Time: epoch},
			CreatedBy: "CA certificates (" + caCertsOrigin + "), passwd and group with nonroot (65532), /tmp"}},
		mutate.Addendum{Layer: app, History: v1.History{Created: v1.Time{Time: epoch},
			CreatedBy: "/manager and /kubectl-eval, static (CGO_ENABLED=0)"}},
		mutate.Addendum{Layer: sbomLayer, History: v1.History{Created: v1.Time{Time: epoch},
			CreatedBy: "/" + sbomDir + "/<binary>" + sbomSuffix + ": CycloneDX SBOMs of the binaries (cyclonedx-gomod bin)"}})
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, annotations).(v1.Image), nil
}

// imageOf is an OCI image of layers for platform, dated epoch, whose runtime
// config set fills in.
func imageOf(platform v1.Platform, set func(*v1.Config), layers ...mutate.Addendum) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(img, layers...)
	if err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = platform.OS, platform.Architecture, platform.Variant
	cfg.Created = v1.Time{Time: epoch}
	set(&cfg.Config)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return img, nil
}

// layer is a gzip-compressed OCI layer of files, owned by root unless they
// say otherwise, all dated epoch.
func layer(files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: epoch,
			Typeflag: tar.TypeReg, Size: int64(len(f.data)), Format: tar.FormatPAX}
		if f.dir {
			h.Name, h.Typeflag, h.Size = f.name+"/", tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer: %w", err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return l, nil
}

// writeLayout writes the index as the one entry of a fresh OCI layout,
// named as `docker save` names it, so containerd-based loaders tag it.
func writeLayout(dir string, idx v1.ImageIndex, tag name.Tag) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("layout: %w", err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("layout: %w", err)
	}
	err = p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		containerdName: tag.Name(), ociRefName: tag.TagStr(),
	}))
	if err != nil {
		return fmt.Errorf("layout: %w", err)
	}
	return nil
}

// dockerManifest is one entry of a docker-archive manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// writeTarball tars the layout and adds manifest.json naming img's blobs,
// which docker load (classic image store) and crane push read.
func writeTarball(path, layoutDir string, img v1.Image, tag name.Tag) error {
	cfg, err := img.ConfigName()
	if err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	m := dockerManifest{Config: blobPath(cfg), RepoTags: []string{tag.Name()}}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return fmt.Errorf("tarball: %w", err)
		}
		m.Layers = append(m.Layers, blobPath(d))
	}
	manifest, err := json.Marshal([]dockerManifest{m})
	if err != nil {
		return fmt.Errorf("tarball: %w", err)
	}

	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	defer func() { _ = out.Close() }()
	tw := tar.NewWriter(out)
	if err := tw.AddFS(epochFS{os.DirFS(layoutDir)}); err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	h := &tar.Header{Name: "manifest.json", Mode: 0o644, Size: int64(len(manifest)), ModTime: epoch}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	if _, err := tw.Write(manifest); err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("tarball: %w", err)
	}
	return out.Close()
}

func blobPath(h v1.Hash) string {
	return "blobs/" + h.Algorithm + "/" + h.Hex
}

// epochFS dates every file epoch, so the tarball is reproducible too.
type epochFS struct{ fs.FS }

func (e epochFS) Stat(name string) (fs.FileInfo, error) {
	info, err := fs.Stat(e.FS, name)
	if err != nil {
		return nil, err
	}
	return epochInfo{info}, nil
}

func (e epochFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(e.FS, name)
	for i, d := range entries {
		entries[i] = epochEntry{d}
	}
	return entries, err
}

type epochEntry struct{ fs.DirEntry }

func (e epochEntry) Info() (fs.FileInfo, error) {
	info, err := e.DirEntry.Info()
	if err != nil {
		return nil, err
	}
	return epochInfo{info}, nil
}

type epochInfo struct{ fs.FileInfo }

func (epochInfo) ModTime() time.Time { return epoch }

// Sys hides the build machine's owners: the files are root's.
func (epochInfo) Sys() any { return nil }

// binaryImage packs one static binary as a single-platform image whose
// entrypoint it is: the real-node cluster's sandbox (pause) image, which it
// cannot pull, and an earlier release's manager for upgrade tests, built
// from the repository's history. It writes a tarball `ctr images import`
// takes.
func binaryImage(args []string) error {
	var ref, binary, user, layoutDir, tarballPath, platformFlag string
	flags := flag.NewFlagSet("binary", flag.ContinueOnError)
	flags.StringVar(&ref, "ref", "", "the image reference, e.g. localhost/eval-operator/pause:1")
	flags.StringVar(&binary, "binary", "", "the static binary; the image runs it as /<its file name>")
	flags.StringVar(&user, "user", "65532:65532", "the numeric uid:gid it runs as")
	flags.StringVar(&platformFlag, "platform", "linux/amd64", "the binary's os/arch")
	flags.StringVar(&layoutDir, "layout", "", "OCI image layout directory to write (replaced)")
	flags.StringVar(&tarballPath, "tarball", "", "tarball to write")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if ref == "" || binary == "" || layoutDir == "" || tarballPath == "" {
		return fmt.Errorf("binary needs --ref, --binary, --layout and --tarball")
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("--ref: %w", err)
	}
	platform, err := v1.ParsePlatform(platformFlag)
	if err != nil {
		return fmt.Errorf("--platform: %w", err)
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("--binary: %w", err)
	}
	base := filepath.Base(binary)
	l, err := layer([]file{{name: "tmp", mode: 0o1777, dir: true}, {name: base, mode: 0o755, data: data}})
	if err != nil {
		return err
	}
	img, err := imageOf(*platform, func(c *v1.Config) {
		c.User = user
		c.Entrypoint = []string{"/" + base}
	}, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "/" + base + ", static; /tmp"}})
	if err != nil {
		return err
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: platform}})
	if err := writeLayout(layoutDir, idx, tag); err != nil {
		return err
	}
	return writeTarball(tarballPath, layoutDir, img, tag)
}
