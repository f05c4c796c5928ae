package restapi

import (
	_ "embed"
	"fmt"
	"net/http"

	"sigs.k8s.io/yaml"
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
		setJSONHeaders(w.Header())
		// Nothing to do about a client that went away.
		_, _ = w.Write(doc)
	})
}
