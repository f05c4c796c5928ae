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

// Package metric reconciles Metrics: each one's remote Metric created once
// (guarded against duplicates, recovered from the service's list), kept in
// step with its spec, read back for drift, adopted by id or by name, and
// deleted or orphaned with the object, under its management policies.
package metric

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
)

// Setup registers the Metric reconciler with mgr: workers reconciles in
// parallel; requestTimeout is the services' per-request timeout, after
// which a create cut off mid-flight is settled from the service's list.
func Setup(mgr ctrl.Manager, b kit.Base, workers int, requestTimeout time.Duration) error {
	if err := indexRemoteIDs(context.Background(), mgr); err != nil {
		return err
	}
	r := &Reconciler{Base: b, drift: kit.NewDriftSchedules(b.Clock), recovery: newRecovery(requestTimeout), sent: newSentSpecs()}
	return kit.Register(mgr, b, workers, kit.Kind{Object: &v1alpha1.Metric{}, List: &v1alpha1.MetricList{}, Reconciler: r.lifecycle(),
		Predicates: predicate.Or(metricChanged, kit.PersonControlled)})
}
