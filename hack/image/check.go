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
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// shells are files whose presence means the image has a shell.
var shells = []string{"sh", "bash", "ash", "dash", "busybox"}

// elfMachines are the ELF machine types of the platforms' binaries.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

func check(args []string) error {
	var ref, layoutDir, tarballPath, platforms, caCertsFile string
	var built origin
	flags := flag.NewFlagSet("check", flag.ContinueOnError)
	built.bind(flags)
	flags.StringVar(&ref, "ref", "", "the reference the image was built for")
	flags.StringVar(&layoutDir, "layout", "", "OCI image layout directory written by build")
	flags.StringVar(&tarballPath, "tarball", "", "tarball written by build")
	flags.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "the platforms the index must hold")
	flags.StringVar(&caCertsFile, "ca-certs", "", "the CA bundle (PEM) the image must hold")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if built.incomplete() || caCertsFile == "" {
		return fmt.Errorf("check needs --source, --revision, --version and --ca-certs")
	}
	caCerts, err := os.ReadFile(caCertsFile)
	if err != nil {
		return fmt.Errorf("--ca-certs: %w", err)
	}
	annotations := built.annotations()
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("--ref: %w", err)
	}
	idx, err := namedIndex(layoutDir, tag)
	if err != nil {
		return err
	}
	indexManifest, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("the index: %w", err)
	}
	if err := sameOrigin("the index annotations", indexManifest.Annotations, annotations); err != nil {
		return err
	}
	want := strings.Split(platforms, ",")
	images, err := platformImages(idx, want)
	if err != nil {
		return err
	}
	for _, p := range want {
		certs, err := checkImage(p, images[p], built.version, caCerts)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := checkOrigin(images[p], annotations); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		fmt.Printf("ok %s: user %s, entrypoint %s, static %s binaries, each with its CycloneDX SBOM in /%s, "+
			"the %d CA certificates of --ca-certs, no shell\n",
			p, user, entrypoint, strings.Join(binaries, " and "), sbomDir, certs)
	}
	if err := runHelp(images["linux/amd64"], built.version, built.revision); err != nil {
		return err
	}
	fmt.Printf("ok linux/amd64: /manager --help runs, --version says %s at %s as the annotations do\n",
		built.version, built.revision)
	if err := push(layoutDir, tarballPath, idx); err != nil {
		return err
	}
	fmt.Println("ok the layout (both platforms) and the tarball push to a registry as crane push loads them")
	return nil
}

// checkOrigin checks an image's manifest annotations and config labels.
func checkOrigin(img v1.Image, want map[string]string) error {
	m, err := img.Manifest()
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	if err := sameOrigin("the manifest annotations", m.Annotations, want); err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return sameOrigin("the config labels", cfg.Config.Labels, want)
}

// sameOrigin checks that got holds every annotation of want.
func sameOrigin(what string, got, want map[string]string) error {
	for k, v := range want {
		if got[k] != v {
			return fmt.Errorf("%s: %s is %q, want %q", what, k, got[k], v)
		}
	}
	return nil
}

// namedIndex is the layout's one entry, named for ref as docker save names it.
func namedIndex(dir string, tag name.Tag) (v1.ImageIndex, error) {
	l, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("layout: %w", err)
	}
	m, err := l.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("layout: %w", err)
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("layout: index.json must hold one image index, has %d entries", len(m.Manifests))
	}
	desc := m.Manifests[0]
	if desc.Annotations[containerdName] != tag.Name() || desc.Annotations[ociRefName] != tag.TagStr() {
		return nil, fmt.Errorf("layout: the index is named %v, want %s", desc.Annotations, tag.Name())
	}
	idx, err := l.ImageIndex(desc.Digest)
	if err != nil {
		return nil, fmt.Errorf("layout: %w", err)
	}
	return idx, nil
}

// platformImages maps os/arch to the index's images, which must be those of
// the platforms want.
func platformImages(idx v1.ImageIndex, want []string) (map[string]v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	images := map[string]v1.Image{}
	for _, d := range m.Manifests {
		if d.Platform == nil {
			return nil, fmt.Errorf("index: manifest %s has no platform", d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		images[d.Platform.OS+"/"+d.Platform.Architecture] = img
	}
	got := slices.Sorted(maps.Keys(images))
	if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		return nil, fmt.Errorf("the index has platforms %v, want %v", got, want)
	}
	return images, nil
}

// checkImage checks one platform's config and files: the binaries with
// their SBOMs, and the CA bundle caCerts. It returns how many CA
// certificates the image holds.
func checkImage(platform string, img v1.Image, version string, caCerts []byte) (int, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return 0, fmt.Errorf("config: %w", err)
	}
	if got := cfg.OS + "/" + cfg.Architecture; got != platform {
		return 0, fmt.Errorf("config is for %s", got)
	}
	if cfg.Config.User != user {
		return 0, fmt.Errorf("config user %q, want %q", cfg.Config.User, user)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{entrypoint}) || len(cfg.Config.Cmd) != 0 {
		return 0, fmt.Errorf("entrypoint %q cmd %q, want [%s] and none", cfg.Config.Entrypoint, cfg.Config.Cmd, entrypoint)
	}
	files, err := readFiles(img)
	if err != nil {
		return 0, err
	}
	for p := range files {
		if slices.Contains(shells, path.Base(p)) {
			return 0, fmt.Errorf("the image has a shell: /%s", p)
		}
	}
	certs, err := checkCACerts(files, caCerts)
	if err != nil {
		return 0, err
	}
	arch := cfg.Architecture
	for _, b := range binaries {
		if err := checkStatic(files[b], elfMachines[arch]); err != nil {
			return 0, fmt.Errorf("/%s: %w", b, err)
		}
		if err := checkSBOM(files, b, arch, version); err != nil {
			return 0, err
		}
	}
	return certs, nil
}

// readFiles reads the image's flattened filesystem: regular files by path.
func readFiles(img v1.Image) (map[string][]byte, error) {
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
		p := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink {
			files[p] = []byte(h.Linkname)
			continue
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if files[p], err = io.ReadAll(tr); err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
	}
}

// checkStatic checks that data is an executable for machine with no
// program interpreter, i.e. statically linked.
func checkStatic(data []byte, machine elf.Machine) error {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not an ELF executable: %w", err)
	}
	if f.Machine != machine {
		return fmt.Errorf("built for %s, want %s", f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked (has a program interpreter)")
		}
	}
	return nil
}

// runHelp runs the image's manager with --help on this machine.
func runHelp(img v1.Image, version, revision string) error {
	files, err := readFiles(img)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "image-check-")
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "manager")
	// #nosec G306 -- an executable, for this process to run.
	if err := os.WriteFile(bin, files[strings.TrimPrefix(entrypoint, "/")], 0o700); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		return fmt.Errorf("/manager --help: %w\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("-api-url")) {
		return fmt.Errorf("/manager --help printed no usage:\n%s", out)
	}
	// The binary says what the annotations say.
	out, err = exec.Command(bin, "--version").CombinedOutput()
	want := fmt.Sprintf("eval-operator %s (revision %s,", version, revision)
	if err != nil || !bytes.HasPrefix(out, []byte(want)) {
		return fmt.Errorf("/manager --version printed %q, want %q...: %w", out, want, err)
	}
	return nil
}

// push pushes the layout's index and the tarball's image to a registry in
// this process, loading them as crane push does (an OCI layout directory
// with one entry; a tarball through its manifest.json), and reads the index
// back.
func push(layoutDir, tarballPath string, idx v1.ImageIndex) error {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	dst, err := name.ParseReference(host + "/eval-operator:index")
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	if err := remote.WriteIndex(dst, idx); err != nil {
		return fmt.Errorf("push %s: %w", layoutDir, err)
	}
	pulled, err := remote.Index(dst)
	if err != nil {
		return fmt.Errorf("pull: %w", err)
	}
	want, err := idx.Digest()
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	got, err := pulled.Digest()
	if err != nil {
		return fmt.Errorf("pull: %w", err)
	}
	if got != want {
		return fmt.Errorf("pulled index %s, pushed %s", got, want)
	}

	img, err := crane.Load(tarballPath)
	if err != nil {
		return fmt.Errorf("load %s as crane push does: %w", tarballPath, err)
	}
	if err := crane.Push(img, host+"/eval-operator:tarball"); err != nil {
		return fmt.Errorf("push %s: %w", tarballPath, err)
	}
	return nil
}
