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

package metric

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// sentSpecs remembers, per Metric, the generation whose spec this manager
// sent last and the service took. The Metric's next reconcile may start
// before the cache holds the status that records it (a service's deletion
// enqueues its users twice, say); that reconcile must not send the same
// update again. An entry goes once the cache shows the Metric synced at
// that generation, or with the Metric.
type sentSpecs struct {
	mu  sync.Mutex
	gen map[types.UID]int64
}

func newSentSpecs() *sentSpecs { return &sentSpecs{gen: map[types.UID]int64{}} }

func (s *sentSpecs) record(uid types.UID, generation int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen[uid] = generation
}

// sent reports whether this manager sent generation of uid's spec already.
func (s *sentSpecs) sent(uid types.UID, generation int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen[uid] == generation
}

func (s *sentSpecs) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.gen, uid)
}
