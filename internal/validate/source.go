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

package validate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/eval-operator/eval-operator/internal/manifests"
)

// Stdin names standard input among the paths.
const Stdin = "-"

// Document is one object of a YAML stream and where it starts.
type Document struct {
	// File is the path it was read from, Stdin for standard input.
	File string
	// Line is the 1-based line of the document's first content line.
	Line   int
	Object *unstructured.Unstructured
}

// ReadPaths reads the objects of the YAML files in paths (directories
// recursively, Stdin or no paths for stdin).
func ReadPaths(paths []string, stdin io.Reader) ([]Document, error) {
	if len(paths) == 0 {
		paths = []string{Stdin}
	}
	var docs []Document
	for _, p := range paths {
		if p == Stdin {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("reading stdin: %w", err)
			}
			d, err := Split(Stdin, data)
			if err != nil {
				return nil, err
			}
			docs = append(docs, d...)
			continue
		}
		files, err := manifests.YAMLFiles([]string{p})
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f) //nolint:gosec // the user names the files to read
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", f, err)
			}
			d, err := Split(f, data)
			if err != nil {
				return nil, err
			}
			docs = append(docs, d...)
		}
	}
	return docs, nil
}

// ReadGit reads the objects of the same paths at the Git revision ref, with
// the git binary; a path that did not exist at ref holds nothing.
func ReadGit(ref string, paths []string) ([]Document, error) {
	var docs []Document
	for _, p := range paths {
		if p == Stdin {
			return nil, errors.New("standard input has no Git revision: name the files or directories")
		}
		dir, names := p, []string{"."}
		if info, err := os.Stat(p); err != nil || !info.IsDir() {
			dir, names = filepath.Dir(p), []string{filepath.Base(p)}
		}
		// ls-tree lists paths relative to dir, under which they are shown.
		out, err := git(dir, "ls-tree", "-r", "--name-only", ref, "--", names[0])
		if err != nil {
			return nil, err
		}
		for _, name := range strings.Fields(string(out)) {
			if p != filepath.Join(dir, name) && !isYAML(name) {
				continue
			}
			data, err := git(dir, "show", ref+":./"+name)
			if err != nil {
				return nil, err
			}
			d, err := Split(filepath.Join(dir, name), data)
			if err != nil {
				return nil, fmt.Errorf("at %s: %w", ref, err)
			}
			docs = append(docs, d...)
		}
	}
	return docs, nil
}

// GitFile reads the file at path as it was at the Git revision ref.
func GitFile(ref, path string) ([]byte, error) {
	return git(filepath.Dir(path), "show", ref+":./"+filepath.Base(path))
}

func isYAML(name string) bool {
	ext := filepath.Ext(name)
	return ext == ".yaml" || ext == ".yml"
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...) //nolint:gosec // the user names the revision and paths
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Split parses a multi-document YAML stream from file into its objects,
// each with the line it starts on. Empty documents are skipped.
func Split(file string, data []byte) ([]Document, error) {
	var (
		docs  []Document
		chunk bytes.Buffer
		start int
	)
	flush := func() error {
		defer chunk.Reset()
		if start == 0 {
			return nil
		}
		obj, err := Decode(chunk.Bytes())
		if err != nil {
			return fmt.Errorf("%s:%d: %w", file, start, err)
		}
		docs = append(docs, Document{File: file, Line: start, Object: obj})
		start = 0
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if isSeparator(line) {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		trimmed := strings.TrimSpace(line)
		if start == 0 && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			start = n
		}
		// Lines before the content (comments) are kept so that the
		// document's YAML parses as written.
		chunk.WriteString(line)
		chunk.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return docs, nil
}

// isSeparator reports whether line is a document marker ("---", "...").
func isSeparator(line string) bool {
	for _, marker := range []string{"---", "..."} {
		rest, ok := strings.CutPrefix(line, marker)
		if ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			rest = strings.TrimSpace(rest)
			return rest == "" || strings.HasPrefix(rest, "#")
		}
	}
	return false
}
