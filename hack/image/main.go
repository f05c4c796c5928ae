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

// Command image builds and checks the manager's container image without a
// container engine or a registry.
//
//	image build --ref=IMG --bin-dir=DIR --platforms=linux/amd64,linux/arm64 \
//	    --ca-certs=FILE --ca-certs-origin=TEXT --layout=DIR --tarball=FILE \
//	    --source=URL --revision=REV --version=VERSION
//	image check --ref=IMG --layout=DIR --tarball=FILE --platforms=... --ca-certs=FILE \
//	    --source=URL --revision=REV --version=VERSION
//
// build takes static binaries from DIR/<os>_<arch>/{manager,kubectl-eval},
// each with its CycloneDX SBOM beside it (<binary>.cdx.json), and writes one
// OCI image index with an image per platform, the layout the Dockerfile
// gives on distroless/static:nonroot: /manager (the entrypoint),
// /kubectl-eval, their SBOMs in /sbom, the CA bundle FILE at
// /etc/ssl/certs/ca-certificates.crt, user 65532:65532, no shell, on no base
// image. It writes the index twice: as an OCI image layout directory, and as
// a tarball holding that layout plus a docker-archive manifest.json, which is
// what `docker save` writes, so `docker load`, `kind load image-archive`,
// `podman load` and `crane push` all take it.
//
//	image binary --ref=IMG --binary=FILE --user=UID:GID --platform=linux/amd64 --layout=DIR --tarball=FILE
//
// binary packs the static binary FILE alone as an image running /FILE: the
// real-node cluster's sandbox image (hack/image/pause), which it has no
// registry to pull, and an earlier release's manager for the upgrade test.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|check|binary [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "check":
		err = check(os.Args[2:])
	case "binary":
		err = binaryImage(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want build, check or binary", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}
