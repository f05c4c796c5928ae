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

package trimcache

import (
	"context"
	"encoding/json"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// trimmedFields are the fields, of spec and of status, a trimmed copy lacks.
// A trimmed TestcaseDeletion lacks its testcaseIds (see controller/oneshot),
// a trimmed EvaluationRun its executor's template (see controller/evalrun).
var trimmedFields = []string{"promptTemplate", "guidelines", "description", "testcaseIds", "executor"}

// ErrTrimmedWrite is the error of a write Guard refused.
var ErrTrimmedWrite = errors.New("refusing to write an object read from the cache without some of its fields: read it whole first")

// trimGuard is a client that refuses to send what a trimmed copy lacks:
// it never creates or updates a trimmed object, and patches one only when
// the patch leaves the trimmed fields and the marker alone (annotation,
// finalizer and status patches do).
type trimGuard struct{ client.Client }

// Guard returns c refusing to write what a trimmed copy lacks.
func Guard(c client.Client) client.Client { return trimGuard{c} }

func (g trimGuard) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if Trimmed(obj) {
		return ErrTrimmedWrite
	}
	return g.Client.Create(ctx, obj, opts...)
}

func (g trimGuard) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if Trimmed(obj) {
		return ErrTrimmedWrite
	}
	return g.Client.Update(ctx, obj, opts...)
}

func (g trimGuard) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if Trimmed(obj) {
		data, err := patch.Data(obj)
		if err != nil || touchesTrimmed(data) {
			return ErrTrimmedWrite
		}
	}
	return g.Client.Patch(ctx, obj, patch, opts...)
}

// touchesTrimmed reports whether a patch could change a trimmed field or
// the marker. A patch that is not a JSON object (a JSON patch) might.
func touchesTrimmed(data []byte) bool {
	var p struct {
		Metadata struct {
			Annotations map[string]any `json:"annotations"`
		} `json:"metadata"`
		Spec   map[string]any `json:"spec"`
		Status map[string]any `json:"status"`
	}
	if json.Unmarshal(data, &p) != nil {
		return true
	}
	if _, ok := p.Metadata.Annotations[TrimmedAnnotation]; ok {
		return true
	}
	for _, f := range trimmedFields {
		_, inSpec := p.Spec[f]
		_, inStatus := p.Status[f]
		if inSpec || inStatus {
			return true
		}
	}
	return false
}
