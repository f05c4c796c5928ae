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
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// recoveryMargin is added to the request timeout before a cut-off create is
// taken to be over: it covers the pending mark's one-second precision, clock
// skew between replicas and a gateway still forwarding the request.
const recoveryMargin = 10 * time.Second

// Recovery reads at most recoveryPages pages of recoveryPageSize Metrics,
// newest first: a create cut off a minute ago is among the newest.
const (
	recoveryPageSize = 100
	recoveryPages    = 10
)

// earlierCreate starts every CreateOutcomeUnknown message.
const earlierCreate = "an earlier create may have reached the service but its id was not recorded"

// recovery settles creates whose outcome is unknown from the service's list
// of Metrics.
type recovery struct {
	// inFlight is how long after its pending mark a create may still be under way.
	inFlight time.Duration
	mu       sync.Mutex
	// taken are the remote ids this process recovered, by the object that took
	// each: they count as claimed before the cache shows the object's
	// annotation. One entry per recovery in the life of the process.
	taken map[string]types.UID
}

func newRecovery(requestTimeout time.Duration) *recovery {
	if requestTimeout <= 0 {
		requestTimeout = remote.DefaultTimeout
	}
	return &recovery{inFlight: requestTimeout + recoveryMargin, taken: map[string]types.UID{}}
}

// indexRemoteIDs adds kit.MetricIDIndex to mgr's cache.
func indexRemoteIDs(ctx context.Context, mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.Metric{}, kit.MetricIDIndex, func(obj client.Object) []string {
		m := obj.(*v1alpha1.Metric)
		var ids []string
		for _, id := range []string{m.Annotations[v1alpha1.MetricIDAnnotation], m.Status.ID} {
			if id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		return ids
	})
	if err != nil {
		return fmt.Errorf("indexing Metrics by remote id: %w", err)
	}
	return nil
}

// settlePending decides a create whose outcome is unknown, once the request
// can no longer be in flight: among the project's Metrics, one equal to the
// spec and claimed by no other object is the one it created (Recovered);
// none means it never committed, and uncommitted says what then (create it
// again, or, for a deleted Metric, nothing to delete); anything else waits
// for a person. It never decides "none" while a created Metric could be missed.
func (r *Reconciler) settlePending(ctx context.Context, s *scope,
	uncommitted func() (kit.Outcome, ctrl.Result, error)) (kit.Outcome, ctrl.Result, error) {
	m := s.Obj
	at, ok := r.settleAt(m)
	if !ok {
		return needsPerson(m, fmt.Sprintf("the time in annotation %s is unreadable, so whether the request is over is unknown",
			v1alpha1.CreatePendingAnnotation)), ctrl.Result{}, nil
	}
	if r.Clock.Now().Before(at) {
		return r.awaitSettling(m, earlierCreate, at)
	}
	equal, complete, err := r.listEqual(ctx, s)
	if err != nil {
		return listFailure(m, err)
	}
	free, err := r.recovery.claim(ctx, r.Client, m, equal)
	if err != nil {
		return needsPerson(m, "reading which Metrics other objects claim failed: "+err.Error()), ctrl.Result{}, err
	}
	switch {
	case len(free) == 1 && !s.Conn.MayAdopt:
		return needsPerson(m, fmt.Sprintf("the one Metric equal to its spec that no object claims, %s, may be another "+
			"namespace's: %s", free[0].ID, sharedKey(s.Conn))), ctrl.Result{}, nil
	case len(free) == 1:
		return r.adoptRecovered(ctx, m, free[0])
	case len(free) > 1:
		return needsPerson(m, fmt.Sprintf("the service holds %d Metrics equal to its spec that no other object claims",
			len(free))), ctrl.Result{}, nil
	case !complete:
		return needsPerson(m, fmt.Sprintf("none of the project's newest %d Metrics equals its spec, and older ones were not read",
			recoveryPages*recoveryPageSize)), ctrl.Result{}, nil
	}
	return uncommitted()
}

// settleAt is when m's pending create can no longer be in flight; false when
// the mark is unreadable.
func (r *Reconciler) settleAt(m *v1alpha1.Metric) (time.Time, bool) {
	mark, err := time.Parse(time.RFC3339, m.Annotations[v1alpha1.CreatePendingAnnotation])
	if err != nil {
		return time.Time{}, false
	}
	return mark.Add(r.recovery.inFlight), true
}

// awaitSettling is the outcome of a create whose outcome is unknown, what
// saying why, until at: Stalled, as a person may settle it already, and
// checked again at at.
func (r *Reconciler) awaitSettling(m *v1alpha1.Metric, what string, at time.Time) (kit.Outcome, ctrl.Result, error) {
	return kit.Stalled(v1alpha1.ReasonCreateOutcomeUnknown, fmt.Sprintf(
			"%s; at %s, when the request can no longer be in flight, the operator looks for it among the Metrics of project %s",
			what, at.UTC().Format(time.RFC3339), m.Spec.ProjectID)),
		ctrl.Result{RequeueAfter: max(at.Sub(r.Clock.Now()), r.Backoff)}, nil
}

// awaitPendingCreate is awaitSettling for the create just cut off.
func (r *Reconciler) awaitPendingCreate(m *v1alpha1.Metric, what string) (kit.Outcome, ctrl.Result, error) {
	at, _ := r.settleAt(m) // the mark was written by this reconcile
	return r.awaitSettling(m, what, at)
}

// needsPerson is CreateOutcomeUnknown for a person; why says why the
// operator cannot settle it.
func needsPerson(m *v1alpha1.Metric, why string) kit.Outcome {
	return kit.Stalled(v1alpha1.ReasonCreateOutcomeUnknown, fmt.Sprintf(
		"%s, and %s: find the Metric in project %s and set annotation %s to its id, or remove annotation %s to create it again",
		earlierCreate, why, m.Spec.ProjectID, v1alpha1.MetricIDAnnotation, v1alpha1.CreatePendingAnnotation))
}

// listFailure waits for a person when the service cannot list (not served)
// or refuses to; other failures are retried as any failed call is.
func listFailure(m *v1alpha1.Metric, err error) (kit.Outcome, ctrl.Result, error) {
	if ok, o, err := kit.KeyFailure(err); ok {
		return o, ctrl.Result{}, err
	}
	switch remote.FailureOf(err) {
	case remote.NotFound, remote.Rejected:
		return needsPerson(m, "listing the project's Metrics failed: "+err.Error()), ctrl.Result{}, nil
	}
	o, res, rerr := kit.UpstreamFailure(err)
	o.Message = "settling a create whose outcome is unknown: " + o.Message
	return o, res, rerr
}

// listEqual returns the project's Metrics equal to m's desired variant,
// newest first, reading at most recoveryPages pages; complete is false when
// the bound cut the list short.
func (r *Reconciler) listEqual(ctx context.Context, s *scope) (
	equal []remote.Metric, complete bool, err error,
) {
	m := s.Obj
	return listWhere(ctx, s.Client, m.Spec.ProjectID, recoveryPages, func(got remote.Metric) bool { return got.Matches(&m.Spec) })
}

// listWhere returns the Metrics of project projectID that keep accepts,
// newest first, following nextCursor for at most pages pages of
// recoveryPageSize; complete is false when the bound cut the list short.
func listWhere(ctx context.Context, c remote.MetricClient, projectID v1alpha1.ResourceID, pages int, keep func(remote.Metric) bool) (
	kept []remote.Metric, complete bool, err error,
) {
	cursor := ""
	for range pages {
		var page remote.Page
		// A failed page is retried at once, briefly: one failure among ten
		// pages would otherwise restart the whole list after a backoff.
		err := retry.OnError(retry.DefaultBackoff, transientListFailure, func() (err error) {
			page, err = c.List(ctx, projectID, cursor, recoveryPageSize)
			return err
		})
		if err != nil {
			return nil, false, err
		}
		for _, got := range page.Metrics {
			if keep(got) {
				kept = append(kept, got)
			}
		}
		if page.Next == "" {
			return kept, !page.Truncated, nil
		}
		cursor = page.Next
	}
	return kept, false, nil
}

// transientListFailure reports whether a list may succeed when sent again
// (a list changes nothing, so an unknown outcome is safe to repeat).
func transientListFailure(err error) bool {
	switch remote.FailureOf(err) {
	case remote.Unavailable, remote.RateLimited, remote.OutcomeUnknown:
		return true
	}
	return false
}

// claim returns the Metrics of found that no object other than m records as
// its remote Metric. When exactly one is left it is taken for m, under the
// same lock, so two objects recovering at once cannot both take it.
func (rc *recovery) claim(ctx context.Context, c client.Reader, m *v1alpha1.Metric, found []remote.Metric) (
	[]remote.Metric, error,
) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var free []remote.Metric
	for _, f := range found {
		claimed, err := rc.claimed(ctx, c, m, f.ID)
		if err != nil {
			return nil, err
		}
		if !claimed {
			free = append(free, f)
		}
	}
	if len(free) == 1 {
		rc.taken[free[0].ID] = m.UID
	}
	return free, nil
}

func (rc *recovery) claimed(ctx context.Context, c client.Reader, m *v1alpha1.Metric, id string) (bool, error) {
	if uid, ok := rc.taken[id]; ok && uid != m.UID {
		return true, nil
	}
	var list v1alpha1.MetricList
	if err := c.List(ctx, &list, client.MatchingFields{kit.MetricIDIndex: id}); err != nil {
		return false, fmt.Errorf("listing the Metrics that record remote id %s: %w", id, err)
	}
	return slices.ContainsFunc(list.Items, func(o v1alpha1.Metric) bool { return o.UID != m.UID }), nil
}

// adoptRecovered records found as m's Metric, as a create records its answer.
func (r *Reconciler) adoptRecovered(ctx context.Context, m *v1alpha1.Metric, found remote.Metric) (
	kit.Outcome, ctrl.Result, error,
) {
	err := r.annotateID(ctx, m, found.ID)
	// After the patch, as after a create: status.id finishes the annotation if it failed.
	found.Record(&m.Status)
	r.recordSynced(m, nil)
	if err != nil {
		return kit.Progressing(v1alpha1.ReasonCreating, "recording the recovered remote id"), ctrl.Result{}, err
	}
	return kit.Ready(v1alpha1.ReasonRecovered, fmt.Sprintf(
		"the earlier create did reach the service: remote Metric %s, the only one equal to the spec that no other object claims",
		found.ID)), ctrl.Result{}, nil
}
