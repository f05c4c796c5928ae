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
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"
)

// bom is what check reads of a CycloneDX SBOM written by cyclonedx-gomod.
type bom struct {
	BOMFormat string `json:"bomFormat"`
	Metadata  struct {
		Component  component  `json:"component"`
		Properties []property `json:"properties"`
	} `json:"metadata"`
	Components []component `json:"components"`
}

type component struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Purl    string `json:"purl"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// checkSBOM checks the image's SBOM of binary b: a CycloneDX document of
// exactly this file (its SHA-256), built for arch, of the release version,
// listing every module the binary's build information names, at its version
// and for arch.
func checkSBOM(files map[string][]byte, b, arch, version string) error {
	where := "/" + sbomDir + "/" + b + sbomSuffix
	data := files[sbomDir+"/"+b+sbomSuffix]
	if len(data) == 0 {
		return fmt.Errorf("no SBOM at %s", where)
	}
	var sbom bom
	if err := json.Unmarshal(data, &sbom); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if sbom.BOMFormat != "CycloneDX" {
		return fmt.Errorf("%s is no CycloneDX document (bomFormat %q)", where, sbom.BOMFormat)
	}
	props := map[string]string{}
	for _, p := range sbom.Metadata.Properties {
		props[p.Name] = p.Value
	}
	sum := sha256.Sum256(files[b])
	if got := props["cdx:gomod:binary:hash:SHA-256"]; got != hex.EncodeToString(sum[:]) {
		return fmt.Errorf("%s describes a binary of SHA-256 %q, not /%s", where, got, b)
	}
	if got := props["cdx:gomod:build:env:GOARCH"]; got != arch {
		return fmt.Errorf("%s describes a build for GOARCH %q, want %s", where, got, arch)
	}
	info, err := buildinfo.Read(bytes.NewReader(files[b]))
	if err != nil {
		return fmt.Errorf("/%s: build information: %w", b, err)
	}
	if main := sbom.Metadata.Component; main.Name != info.Main.Path || main.Version != version {
		return fmt.Errorf("%s is of %s %s, want %s %s", where, main.Name, main.Version, info.Main.Path, version)
	}
	purls := map[string]string{}
	for _, c := range sbom.Components {
		purls[c.Name+"@"+c.Version] = c.Purl
	}
	for _, d := range info.Deps {
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version
		}
		purl, ok := purls[d.Path+"@"+v]
		if !ok {
			return fmt.Errorf("%s does not list %s %s, which /%s is built with", where, d.Path, v, b)
		}
		if !strings.Contains(purl, "goarch="+arch) {
			return fmt.Errorf("%s: %s is listed for another platform: %s", where, d.Path, purl)
		}
	}
	return nil
}

// checkCACerts checks that the image's CA bundle is want, byte for byte,
// and that every block of it is a certificate.
func checkCACerts(files map[string][]byte, want []byte) (int, error) {
	got := files[caCertsPath]
	if !bytes.Equal(got, want) {
		return 0, fmt.Errorf("/%s (%d bytes) is not the --ca-certs bundle (%d bytes)", caCertsPath, len(got), len(want))
	}
	n := 0
	for rest := got; ; n++ {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return 0, fmt.Errorf("/%s: not PEM after %d certificates", caCertsPath, n)
			}
			break
		}
		if block.Type != "CERTIFICATE" {
			return 0, fmt.Errorf("/%s: block %d is a %s, not a certificate", caCertsPath, n+1, block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return 0, fmt.Errorf("/%s: block %d: %w", caCertsPath, n+1, err)
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("/%s holds no certificate", caCertsPath)
	}
	return n, nil
}
