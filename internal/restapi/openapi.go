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

package restapi

import (
	_ "embed"
	"fmt"
	"net/http"

	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// openAPIYAML is the hand-written OpenAPI 3 document of the server. It is
// kept as YAML for reading and reviewing, and served as JSON.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPIDocument returns the server's OpenAPI 3 document as JSON.
func OpenAPIDocument() ([]byte, error) {
	doc, err := yaml.YAMLToJSON(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("converting the OpenAPI document to JSON: %w", err)
	}
	return doc, nil
}

func serveJSON(doc []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		apierror.SetJSONHeaders(w.Header())
		// Nothing to do about a client that went away.
		_, _ = w.Write(doc)
	})
}
