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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
)

// FuzzDecodeMetricRequest feeds arbitrary bodies to the decoder and to what
// the handler does with a decoded request before it reaches the API server.
// Whatever the input: no panic; either a request or field errors that map
// to 400 (never 500); and a decoded request survives a round trip, so the
// canonical form used for Idempotency-Key replays is stable.
func FuzzDecodeMetricRequest(f *testing.F) {
	for _, body := range malformedBodies {
		f.Add([]byte(body))
	}
	for _, e := range []string{"ai", "human", "heuristic"} {
		for _, o := range []string{"int", "float", "boolean"} {
			f.Add([]byte(variantBody(e, o)))
		}
	}
	f.Add([]byte(`{"name":"m","description":null,"evalType":"ai","outputType":"float","promptTemplate":"p",` +
		`"evalModelName":"gpt-4o","temperature":0.7,"passingThreshold":0.5,"guidelines":"g"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, errs := decodeMetricRequest(body)
		if len(errs) > 0 {
			res := apierror.Validation(errs...)
			if res.Status != http.StatusBadRequest {
				t.Fatalf("decode errors answered %d", res.Status)
			}
			for _, e := range errs {
				if e.Field == "" || e.Message == "" {
					t.Fatalf("a field error without field or message: %+v", e)
				}
			}
			return
		}
		canonical, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("re-encoding a decoded request: %v", err)
		}
		again, errs := decodeMetricRequest(canonical)
		if len(errs) > 0 || !reflect.DeepEqual(again, req) {
			t.Fatalf("round trip changed the request: %+v -> %s -> %+v (%v)", req, canonical, again, errs)
		}
		r := httptest.NewRequest(http.MethodPost, projectPath, nil)
		r.SetPathValue("projectId", "p")
		if _, err := requestHash(r, req); err != nil {
			t.Fatalf("hashing: %v", err)
		}
	})
}
