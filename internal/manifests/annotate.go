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

package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// Annotation is what AnnotateFiles did with one Metric manifest.
type Annotation struct {
	// Path and Line locate the manifest's metadata.
	Path string
	Line int
	// Name and Namespace are the manifest's ("" when it sets none).
	Namespace string
	Name      string
	// ID is the id written, or already there.
	ID string
	// Problem says why the manifest was left alone; "" when it was
	// annotated or already carried the id.
	Problem string
}

// AnnotateFiles sets the metric-id annotation of every Metric manifest in
// paths (files, or directories searched for .yaml and .yml files) that
// matches one of ids, editing the files in place. It inserts lines and
// changes nothing else, so comments, order and style survive. A manifest
// matches the id of the same namespace and name; one that sets no namespace
// (a kustomization sets it) matches by name when only one id has that name.
// Manifests that match nothing are not reported; ones that cannot be
// annotated (another id already there, an ambiguous name, flow style) are,
// with their Problem.
func AnnotateFiles(paths []string, ids []ID) ([]Annotation, error) {
	files, err := YAMLFiles(paths)
	if err != nil {
		return nil, err
	}
	var all []Annotation
	for _, path := range files {
		done, err := annotateFile(path, ids)
		if err != nil {
			return all, err
		}
		all = append(all, done...)
	}
	return all, nil
}

// YAMLFiles expands directories in paths to the YAML files below them.
func YAMLFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			ext := filepath.Ext(path)
			if !d.IsDir() && (path == p || ext == ".yaml" || ext == ".yml") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
	}
	return files, nil
}

func annotateFile(path string, ids []ID) ([]Annotation, error) {
	data, err := os.ReadFile(path) //nolint:gosec // the user names the files to edit
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	docs, err := metricDocs(data)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	var (
		done    []Annotation
		inserts []insertion
	)
	for _, doc := range docs {
		a, ins, ok := doc.annotate(ids)
		if !ok {
			continue
		}
		a.Path = path
		done = append(done, a)
		inserts = append(inserts, ins...)
	}
	if len(inserts) == 0 {
		return done, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := os.WriteFile(path, insertLines(data, inserts), info.Mode().Perm()); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return done, nil
}

// metricDoc is the metadata of one Metric manifest in a YAML stream.
type metricDoc struct {
	metadataKey *yaml.Node
	metadata    *yaml.Node
}

// metricDocs finds the Metric manifests of a YAML stream.
func metricDocs(data []byte) ([]metricDoc, error) {
	var docs []metricDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := doc.Content[0]
		_, apiVersion := field(root, "apiVersion")
		_, kind := field(root, "kind")
		key, meta := field(root, "metadata")
		if apiVersion == nil || kind == nil || meta == nil || kind.Value != "Metric" ||
			!strings.HasPrefix(apiVersion.Value, v1alpha1.GroupVersion.Group+"/") {
			continue
		}
		docs = append(docs, metricDoc{metadataKey: key, metadata: meta})
	}
}

// field is the key and value nodes of key in mapping m, nil when absent.
func field(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// annotate decides what to do with one manifest: ok is false when it
// matches no id.
func (d metricDoc) annotate(ids []ID) (Annotation, []insertion, bool) {
	a := Annotation{Line: d.metadataKey.Line}
	if _, n := field(d.metadata, "name"); n != nil {
		a.Name = n.Value
	}
	if _, ns := field(d.metadata, "namespace"); ns != nil {
		a.Namespace = ns.Value
	}
	matches := matching(ids, a.Namespace, a.Name)
	switch {
	case len(matches) == 0:
		return a, nil, false
	case len(matches) > 1:
		a.Problem = fmt.Sprintf("Metrics named %q in several namespaces have ids and the manifest sets no namespace", a.Name)
		return a, nil, true
	}
	a.ID = matches[0].ID
	if d.metadata.Style&yaml.FlowStyle != 0 || len(d.metadata.Content) == 0 {
		a.Problem = "metadata is in flow style; add the annotation by hand"
		return a, nil, true
	}
	annKey, ann := field(d.metadata, "annotations")
	if ann == nil {
		first := d.metadata.Content[0]
		return a, []insertion{
			{line: first.Line, indent: first.Column - 1, text: "annotations:"},
			{line: first.Line, indent: first.Column + 1, text: annotationLine(a.ID)},
		}, true
	}
	if _, have := field(ann, v1alpha1.MetricIDAnnotation); have != nil {
		if have.Value != a.ID {
			a.Problem = fmt.Sprintf("it already names remote Metric %q; the cluster records %q", have.Value, a.ID)
		}
		return a, nil, true
	}
	if ann.Style&yaml.FlowStyle != 0 || len(ann.Content) == 0 {
		a.Problem = "metadata.annotations is in flow style; add the annotation by hand"
		return a, nil, true
	}
	first := ann.Content[0]
	if first.Line == annKey.Line {
		a.Problem = "metadata.annotations is not one key per line; add the annotation by hand"
		return a, nil, true
	}
	return a, []insertion{{line: first.Line, indent: first.Column - 1, text: annotationLine(a.ID)}}, true
}

// matching are the ids for a manifest in namespace (or none) named name.
func matching(ids []ID, namespace, name string) []ID {
	var out []ID
	for _, id := range ids {
		if id.Name == name && (namespace == "" || id.Namespace == namespace) {
			out = append(out, id)
		}
	}
	return out
}

func annotationLine(id string) string {
	quoted, _ := json.Marshal(id) // a string always encodes
	return v1alpha1.MetricIDAnnotation + ": " + string(quoted)
}

// insertion is a line to insert before line (1-based), indented by indent spaces.
type insertion struct {
	line   int
	indent int
	text   string
}

// insertLines inserts ins into data; insertions at the same line keep their order.
func insertLines(data []byte, ins []insertion) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	byLine := map[int][]insertion{}
	for _, in := range ins {
		byLine[in.line] = append(byLine[in.line], in)
	}
	var out bytes.Buffer
	for i, line := range lines {
		for _, in := range byLine[i+1] {
			out.WriteString(strings.Repeat(" ", in.indent) + in.text + lineEnd(line))
		}
		out.Write(line)
	}
	return out.Bytes()
}

// lineEnd keeps a file's line endings (\r\n or \n).
func lineEnd(line []byte) string {
	if bytes.HasSuffix(line, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}
