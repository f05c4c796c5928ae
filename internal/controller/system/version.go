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

package system

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/controller/kit"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// VersionReconciler keeps each SystemVersion upserted in its System.
type VersionReconciler struct {
	kit.Base
}

// versionScope is one reconcile of one SystemVersion.
type versionScope = kit.Scope[*v1alpha1.SystemVersion, remote.SystemClient]

// lifecycle is the SystemVersion's part of kit.Lifecycle: its System's
// service, its client and its steps. It keeps no finalizer: the service
// has no deletion of versions. A version whose config and System are those
// recorded sends no write: it is read at most, and its status is patched
// only if the read changed it.
func (r *VersionReconciler) lifecycle() *kit.Lifecycle[*v1alpha1.SystemVersion, remote.SystemClient] {
	return &kit.Lifecycle[*v1alpha1.SystemVersion, remote.SystemClient]{Base: r.Base,
		New:       func() *v1alpha1.SystemVersion { return &v1alpha1.SystemVersion{} },
		Connect:   r.connect,
		ClientFor: (*remote.Connection).SystemVersion,
		Steps:     r.steps,
	}
}

// connect reads the version's System and, once that is Ready with a remote
// id, resolves its service; the steps take the System from Scope.Via, so it
// is read once a reconcile and both see the same System.
func (r *VersionReconciler) connect(ctx context.Context, v *v1alpha1.SystemVersion) (
	v1alpha1.Object, *remote.Connection, error) {
	s := &v1alpha1.System{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: v.Namespace, Name: v.Spec.SystemRef.Name}, s); err != nil {
		return nil, nil, err
	}
	if !systemReady(s) {
		return s, nil, nil
	}
	conn, err := r.Connector.Connect(ctx, s)
	return s, conn, err
}

// steps waits for the version's System, then syncs the version in it.
func (r *VersionReconciler) steps(ctx context.Context, sc *versionScope) (kit.Outcome, ctrl.Result, error) {
	s, _ := sc.Via.(*v1alpha1.System)
	if o, wait, err := waitForSystem(sc.Obj.Spec.SystemRef.Name, s, sc.ConnErr); wait {
		return o, ctrl.Result{}, err
	}
	if sc.ConnErr != nil {
		return kit.ConnectFailure(sc.ConnErr)
	}
	o, err := r.sync(ctx, sc.Client, s.Status.ID, sc.Obj)
	return o, ctrl.Result{}, err
}

// waitForSystem is the outcome to wait with, and true, while the System
// named name is not Ready with a remote id: s as connect read it, nil when
// it could not be read, for err.
func waitForSystem(name string, s *v1alpha1.System, err error) (kit.Outcome, bool, error) {
	switch {
	case s == nil && apierrors.IsNotFound(err):
		return kit.Progressing(v1alpha1.ReasonSystemNotReady, "System "+name+" does not exist"), true, nil
	case s == nil:
		return kit.Progressing(v1alpha1.ReasonSystemNotReady, "reading System "+name), true,
			fmt.Errorf("reading System %s: %w", name, err)
	case !systemReady(s):
		return kit.Progressing(v1alpha1.ReasonSystemNotReady, "System "+name+" is not Ready"), true, nil
	}
	return kit.Outcome{}, false, nil
}

// systemReady reports whether s is Ready with a remote id, so that its
// versions can be upserted in it.
func systemReady(s *v1alpha1.System) bool {
	return meta.IsStatusConditionTrue(s.Status.Conditions, v1alpha1.ConditionReady) && s.Status.ID != ""
}

// sync upserts the version when nothing is recorded for this System or its
// name changed, else reads it and puts back a changed name.
func (r *VersionReconciler) sync(ctx context.Context, c remote.SystemClient, systemID string, v *v1alpha1.SystemVersion) (
	kit.Outcome, error) {
	if err := remote.CheckConfig(v.Spec.Config.Raw); err != nil {
		return kit.Stalled(v1alpha1.ReasonInvalidConfig, err.Error()), nil
	}
	id := v.RecordedID()
	if v.Status.SystemID != systemID {
		id = "" // a System upserted again (a new id) holds its versions anew
	}
	if id != "" {
		got, err := c.GetVersion(ctx, systemID, id, &v.Spec)
		if err != nil && remote.FailureOf(err) != remote.NotFound {
			o, _, err := kit.UpstreamFailure(err)
			return o, err
		}
		if err == nil && (got.Matches(systemID, &v.Spec) || !v.Spec.Allows(v1alpha1.ManagementUpdate)) {
			got.Record(&v.Status)
			return settled(v.Status.Conditions, v.Spec.Allows(v1alpha1.ManagementUpdate), "version "+id+" of System "+systemID), nil
		}
	} else if !v.Spec.Allows(v1alpha1.ManagementCreate) {
		return kit.Stalled(v1alpha1.ReasonCreateNotAllowed,
			"no version is recorded and managementPolicies do not allow Create"), nil
	}
	// Upserted by config: the same config of the System is the same version,
	// on a service and standalone alike.
	got, err := c.UpsertVersion(ctx, systemID, &v.Spec)
	if err != nil {
		o, _, err := kit.UpstreamFailure(err)
		return o, err
	}
	if v.Annotations[v1alpha1.SystemVersionIDAnnotation] != got.ID() {
		err := kit.PatchAnnotations(ctx, r.Client, v, map[string]any{v1alpha1.SystemVersionIDAnnotation: got.ID()})
		if err != nil {
			return kit.Progressing(v1alpha1.ReasonCreating, "recording the version's id"), err
		}
	}
	got.Record(&v.Status)
	return kit.Ready(v1alpha1.ReasonCreated, "upserted version "+got.ID()+" of System "+systemID), nil
}
