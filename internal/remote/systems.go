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

package remote

import (
	"context"

	"github.com/google/uuid"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// SystemClient acts on a service's Systems and versions for one reconcile.
// The service upserts both (a System by its name in the project, a version
// by its config), so a create whose answer is lost is simply sent again:
// it needs no pending-create guard. A standalone service holds nothing: a
// System's upsert answers the id already recorded, else a new UUID; a
// version's id is named by its System and config (VersionUUID); a read
// answers the spec.
type SystemClient interface {
	// NeedsFinalizer reports whether deleting the object must delete its
	// remote System first: by a System's policies, where the service keeps
	// one (never for a version, which the service cannot delete).
	NeedsFinalizer() bool
	// UpsertSystem sends spec's System; id is the one recorded, "" if none.
	UpsertSystem(ctx context.Context, id string, spec *v1alpha1.SystemSpec) (System, error)
	// GetSystem reads System id as it stands against spec.
	GetSystem(ctx context.Context, id string, spec *v1alpha1.SystemSpec) (System, error)
	// UpdateSystem gives System id spec's name and description.
	UpdateSystem(ctx context.Context, id string, spec *v1alpha1.SystemSpec) (System, error)
	// DeleteSystem deletes System id (not its versions).
	DeleteSystem(ctx context.Context, id string) (bool, error)
	// UpsertVersion sends spec's version of System systemID, upserted by
	// its config.
	UpsertVersion(ctx context.Context, systemID string, spec *v1alpha1.SystemVersionSpec) (SystemVersion, error)
	// GetVersion reads version id of System systemID as it stands against spec.
	GetVersion(ctx context.Context, systemID, id string, spec *v1alpha1.SystemVersionSpec) (SystemVersion, error)
}

// System is a System as a service holds it.
type System struct {
	held evalapi.System
	// local says the cluster is the record of the production version (a
	// standalone service): the System's status holds it, set through the
	// REST server's PATCH, and Record leaves it as it is.
	local bool
}

// ID is the System's id.
func (s System) ID() string { return s.held.ID }

// Matches reports whether the System has the name and description spec asks for.
func (s System) Matches(spec *v1alpha1.SystemSpec) bool {
	return convert.SystemUpdateFor(s.held, spec) == nil
}

// Record writes what the service holds of the System into st.
func (s System) Record(st *v1alpha1.SystemStatus) {
	production := st.ProductionVersionID
	convert.SetSystemStatus(st, s.held)
	if s.local {
		st.ProductionVersionID = production
	}
}

// SystemVersion is a version as a service holds it.
type SystemVersion struct {
	held evalapi.SystemVersion
}

// ID is the version's id.
func (v SystemVersion) ID() string { return v.held.ID }

// Matches reports whether the version has the name spec asks for (a spec
// without a name takes the service's) and belongs to System systemID.
func (v SystemVersion) Matches(systemID string, spec *v1alpha1.SystemVersionSpec) bool {
	return v.held.SystemID == systemID && (spec.Name == nil || v.held.Name == string(*spec.Name))
}

// Record writes what the service holds of the version into st.
func (v SystemVersion) Record(st *v1alpha1.SystemVersionStatus) {
	convert.SetSystemVersionStatus(st, v.held)
}

// System returns the SystemClient that acts for s in one reconcile.
func (c *Connection) System(s *v1alpha1.System) SystemClient {
	return c.systems(s.Spec.DeletesRemote())
}

// SystemVersion returns the SystemClient that acts for a version in one
// reconcile, on its System's connection.
func (c *Connection) SystemVersion(*v1alpha1.SystemVersion) SystemClient { return c.systems(false) }

// systems is the SystemClient of one object; finalizes is whether deleting
// it deletes its remote System, where the service keeps one.
func (c *Connection) systems(finalizes bool) SystemClient {
	key := &lazyKey{source: c.key, secrets: c.secrets}
	if c.local {
		return standaloneSystems{key: key}
	}
	return &httpSystems{finalizes: finalizes, http: &httpClient{svc: c.svc, key: key, gate: c.gate, holder: c.holder,
		flow: c.flow, confirm: &confirmation{check: c.confirm}}}
}

type httpSystems struct {
	http      *httpClient
	finalizes bool
}

func (c *httpSystems) NeedsFinalizer() bool { return c.finalizes }

func (c *httpSystems) UpsertSystem(ctx context.Context, _ string, spec *v1alpha1.SystemSpec) (System, error) {
	key, release, err := c.http.beginCreate(ctx)
	if err != nil {
		return System{}, err
	}
	defer release()
	s, err := c.http.svc.UpsertSystem(ctx, key, string(spec.ProjectID), convert.SystemRequestFor(spec))
	return System{held: s}, err
}

func (c *httpSystems) GetSystem(ctx context.Context, id string, _ *v1alpha1.SystemSpec) (System, error) {
	key, release, err := c.http.begin(ctx)
	if err != nil {
		return System{}, err
	}
	defer release()
	s, err := c.http.svc.GetSystem(ctx, key, id)
	return System{held: s}, err
}

func (c *httpSystems) UpdateSystem(ctx context.Context, id string, spec *v1alpha1.SystemSpec) (System, error) {
	key, release, err := c.http.begin(ctx)
	if err != nil {
		return System{}, err
	}
	defer release()
	name, description := string(spec.Name), convert.SystemRequestFor(spec).Description
	s, err := c.http.svc.UpdateSystem(ctx, key, id, evalapi.SystemUpdate{Name: &name, Description: &description})
	return System{held: s}, err
}

func (c *httpSystems) DeleteSystem(ctx context.Context, id string) (bool, error) {
	key, release, err := c.http.begin(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return succeeded(c.http.svc.DeleteSystem(ctx, key, id))
}

func (c *httpSystems) UpsertVersion(ctx context.Context, systemID string, spec *v1alpha1.SystemVersionSpec) (
	SystemVersion, error) {
	key, release, err := c.http.beginCreate(ctx)
	if err != nil {
		return SystemVersion{}, err
	}
	defer release()
	v, err := c.http.svc.UpsertSystemVersion(ctx, key, systemID, convert.SystemVersionRequestFor(spec))
	return SystemVersion{v}, err
}

func (c *httpSystems) GetVersion(ctx context.Context, _, id string, _ *v1alpha1.SystemVersionSpec) (SystemVersion, error) {
	key, release, err := c.http.begin(ctx)
	if err != nil {
		return SystemVersion{}, err
	}
	defer release()
	v, err := c.http.svc.GetSystemVersion(ctx, key, id)
	return SystemVersion{v}, err
}

// standaloneSystems answers from the spec: the cluster is the system of
// record. It checks a named key as the other kinds do.
type standaloneSystems struct{ key *lazyKey }

func (standaloneSystems) NeedsFinalizer() bool { return false }

func (c standaloneSystems) UpsertSystem(ctx context.Context, id string, spec *v1alpha1.SystemSpec) (System, error) {
	if _, err := c.key.get(ctx); err != nil {
		return System{}, err
	}
	return standaloneSystem(orNewUUID(id), spec), nil
}

func (standaloneSystems) GetSystem(_ context.Context, id string, spec *v1alpha1.SystemSpec) (System, error) {
	return standaloneSystem(id, spec), nil
}

func (standaloneSystems) UpdateSystem(_ context.Context, id string, spec *v1alpha1.SystemSpec) (System, error) {
	return standaloneSystem(id, spec), nil
}

func (standaloneSystems) DeleteSystem(context.Context, string) (bool, error) { return true, nil }

// UpsertVersion answers the version's name-based id: the same config of
// the same System is the same version, as the service upserts it, however
// many objects name it and whatever the cache has seen of them.
func (c standaloneSystems) UpsertVersion(ctx context.Context, systemID string, spec *v1alpha1.SystemVersionSpec) (
	SystemVersion, error) {
	if _, err := c.key.get(ctx); err != nil {
		return SystemVersion{}, err
	}
	return standaloneVersion(systemID, VersionUUID(systemID, spec), spec), nil
}

// VersionUUID is a name-based UUID (RFC 9562 version 5) of the config as
// one JSON value, in the namespace of System systemID.
func VersionUUID(systemID string, spec *v1alpha1.SystemVersionSpec) string {
	ns, err := uuid.Parse(systemID)
	if err != nil {
		ns = uuid.Nil
	}
	return uuid.NewSHA1(ns, convert.Canonical(convert.SystemVersionRequestFor(spec).Config)).String()
}

// GetVersion answers the spec when id is its config's id; a changed config
// is another version, which the service would not find under id either.
func (standaloneSystems) GetVersion(_ context.Context, systemID, id string, spec *v1alpha1.SystemVersionSpec) (
	SystemVersion, error) {
	if id != VersionUUID(systemID, spec) {
		return SystemVersion{}, &evalapi.Error{Kind: evalapi.KindNotFound, Op: "GetSystemVersion",
			API: &evalapi.APIError{Code: evalapi.CodeNotFound, Message: "no version " + id + " of this config"}}
	}
	return standaloneVersion(systemID, id, spec), nil
}

func standaloneSystem(id string, spec *v1alpha1.SystemSpec) System {
	req := convert.SystemRequestFor(spec)
	return System{held: evalapi.System{ID: id, Name: req.Name, Description: req.Description}, local: true}
}

func standaloneVersion(systemID, id string, spec *v1alpha1.SystemVersionSpec) SystemVersion {
	req := convert.SystemVersionRequestFor(spec)
	return SystemVersion{evalapi.SystemVersion{ID: id, SystemID: systemID, Name: req.Name, Config: req.Config}}
}

func orNewUUID(id string) string {
	if id != "" {
		return id
	}
	return evalapi.NewUUID()
}

// CheckConfig says why config is not one the service takes (see
// convert.CheckConfig); nil when it is.
func CheckConfig(config []byte) error { return convert.CheckConfig(config) }
