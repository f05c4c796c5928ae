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
	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// maxReadsPerPage bounds the API-server reads of one list request. The
// cache holds settled Metrics without their texts, and an answer needs them:
// each such Metric on a page costs one GET. A page ends early, with hasMore
// and a cursor, once it holds this many of them, so a list request costs at
// most this many API-server requests (and about 1.1 MB of texts) whatever
// the namespace holds; the SDKs' auto-pagination follows the cursor.
const maxReadsPerPage = 20

// pageEnd is where a page of Metrics ends: after all of them, or earlier
// once it holds maxReadsPerPage Metrics to read whole.
func pageEnd(page []*evaluationv1alpha1.Metric) int {
	reads := 0
	for i, m := range page {
		if !trimcache.Trimmed(m) {
			continue
		}
		if reads == maxReadsPerPage {
			return i
		}
		reads++
	}
	return len(page)
}
