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
	"fmt"
	"io"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// manifest is a Metric as a repository holds it: no status, which belongs
// to the cluster it was read from.
type manifest struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta   `json:"metadata"`
	Spec            v1alpha1.MetricSpec `json:"spec"`
}

// Marshal is m as a YAML manifest.
func Marshal(m *v1alpha1.Metric) ([]byte, error) {
	meta := *m.ObjectMeta.DeepCopy()
	// Server-side bookkeeping would make the manifest stale or unappliable.
	meta.UID, meta.ResourceVersion, meta.Generation = "", "", 0
	meta.CreationTimestamp, meta.ManagedFields = metav1.Time{}, nil
	out, err := yaml.Marshal(manifest{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Metric"},
		Metadata: meta,
		Spec:     m.Spec,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding Metric %s: %w", m.Name, err)
	}
	return out, nil
}

// WriteStream writes ms to w as one multi-document YAML stream.
func WriteStream(w io.Writer, ms []v1alpha1.Metric) error {
	for i := range ms {
		data, err := Marshal(&ms[i])
		if err != nil {
			return err
		}
		if i > 0 {
			data = append([]byte("---\n"), data...)
		}
		if _, err := w.Write(data); err != nil {
			return fmt.Errorf("writing the manifests: %w", err)
		}
	}
	return nil
}

// WriteDir writes each of ms to dir/<name>.yaml, creating dir, and returns
// the paths written. ms must have distinct names (as Imported gives them).
func WriteDir(dir string, ms []v1alpha1.Metric) ([]string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	paths := make([]string, 0, len(ms))
	for i := range ms {
		data, err := Marshal(&ms[i])
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, ms[i].Name+".yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
