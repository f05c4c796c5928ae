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

package evalapitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Systems and SystemVersions as the API description has them
// (evaluation-api-v2-systems): ids are UUIDs, and a path id that is not one
// is refused (400) as the description's `format: uuid` makes the service
// do. A System is upserted by name in its project; creating one makes its
// config the first version, its production version. A version is upserted
// by config: the same config (as JSON values, whatever the key order or
// spacing) answers the same version, renamed when a name is sent. A System's
// deletion keeps its versions. A run's systemVersionId must be a version of
// a System of the run's project.

// storedSystem is a System the Server holds.
type storedSystem struct {
	projectID string
	seq       int
	system    evalapi.System
	// versions are its versions' ids, oldest first.
	versions []string
	// promotions counts the PATCHes that set its production version.
	promotions int
}

// systemStore holds the Systems and versions. Callers hold the Server's lock.
type systemStore struct {
	seq      int
	systems  map[string]*storedSystem
	versions map[string]*evalapi.SystemVersion
	// order are the versions' ids, oldest first.
	order []string
	// projectOf maps every System id ever created to its project, which
	// its versions keep after its deletion.
	projectOf map[string]string
}

func (st *systemStore) next() int {
	if st.systems == nil {
		st.systems, st.versions, st.projectOf = map[string]*storedSystem{}, map[string]*evalapi.SystemVersion{}, map[string]string{}
	}
	st.seq++
	return st.seq
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// System returns the System the Server holds under id, as GET would.
func (s *Server) System(id string) (evalapi.System, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.systems.systems[id]
	if !ok {
		return evalapi.System{}, false
	}
	return s.systemForm(st), true
}

// EditSystem changes the System under id as a person in the service's web
// UI would, without a request: edit gets its name and description to change
// (nothing else is kept, and no uniqueness is checked). edit must not call
// the Server. It reports whether the System exists.
func (s *Server) EditSystem(id string, edit func(name, description *string)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.systems.systems[id]
	if !ok {
		return false
	}
	edit(&st.system.Name, &st.system.Description)
	return true
}

// Systems returns the Systems the Server holds in project, oldest first.
func (s *Server) Systems(projectID string) []evalapi.System {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.projectSystems(projectID)
	out := make([]evalapi.System, 0, len(all))
	for _, st := range all {
		out = append(out, s.systemForm(st))
	}
	return out
}

// projectSystems are the Systems of project, ordered by creation date
// (oldest first) as the service lists them. Callers hold the lock.
func (s *Server) projectSystems(projectID string) []*storedSystem {
	var all []*storedSystem
	for _, st := range s.systems.systems {
		if st.projectID == projectID {
			all = append(all, st)
		}
	}
	slices.SortFunc(all, func(a, b *storedSystem) int { return a.seq - b.seq })
	return all
}

// Promotions counts the PATCHes that set System id's production version
// (productionVersionId), whatever version they set.
func (s *Server) Promotions(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.systems.systems[id]; ok {
		return st.promotions
	}
	return 0
}

// SystemVersions returns every version the Server holds, oldest first.
func (s *Server) SystemVersions() []evalapi.SystemVersion {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]evalapi.SystemVersion, 0, len(s.systems.order))
	for _, id := range s.systems.order {
		out = append(out, *s.systems.versions[id])
	}
	return out
}

// systemOf is the System under id if tenant reaches it. Callers hold the lock.
func (s *Server) systemOf(tenant int, id string) (*storedSystem, bool) {
	st, ok := s.systems.systems[id]
	if !ok || s.projects[st.projectID] != tenant {
		return nil, false
	}
	return st, true
}

// versionOf is the version under id if tenant reaches its project, with
// that project. Callers hold the lock.
func (s *Server) versionOf(tenant int, id string) (*evalapi.SystemVersion, string, bool) {
	v, ok := s.systems.versions[id]
	if !ok {
		return nil, "", false
	}
	project := s.versionProject(v.SystemID)
	if project == "" || s.projects[project] != tenant {
		return nil, "", false
	}
	return v, project, true
}

// versionProject is the project of the System systemID, kept after the
// System's deletion in its versions' record.
func (s *Server) versionProject(systemID string) string {
	return s.systems.projectOf[systemID]
}

// systemForm is st in response form: its versions newest first, and its
// production version whole. Callers hold the lock.
func (s *Server) systemForm(st *storedSystem) evalapi.System {
	out := st.system
	out.Versions = make([]evalapi.VersionRef, 0, len(st.versions))
	for _, id := range slices.Backward(st.versions) {
		v := s.systems.versions[id]
		out.Versions = append(out.Versions, evalapi.VersionRef{ID: v.ID, Name: v.Name})
	}
	if st.system.ProductionVersion != nil {
		pv := *s.systems.versions[st.system.ProductionVersion.ID]
		out.ProductionVersion = &pv
	}
	return out
}

// canonical is the JSON value of data with object keys sorted and no
// spacing, which compares configs as values; ok is false when data is not
// a JSON object.
func canonical(data json.RawMessage) (string, bool) {
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || v == nil {
		return "", false
	}
	out, err := json.Marshal(v)
	return string(out), err == nil
}

func (s *Server) upsertSystem(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	req := struct {
		Name        *string         `json:"name"`
		Description *string         `json:"description"`
		Config      json.RawMessage `json:"config"`
	}{}
	if rejection, ok := decodeJSON(r, body, &req); !ok {
		return nil, rejection
	}
	config, ok := canonical(req.Config)
	if !ok {
		return nil, invalid(fieldError{Field: "config", Message: "config is required and must be an object"})
	}
	name := deref(or(req.Name, "Default system"))
	projectID := r.PathValue("projectId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.reaches(tenant, projectID) {
			return projectNotFound(projectID)
		}
		for _, st := range s.systems.systems {
			if st.projectID == projectID && st.system.Name == name {
				if req.Description != nil {
					st.system.Description = *req.Description
				}
				s.upsertVersion(st, json.RawMessage(config), "")
				return reply{http.StatusCreated, s.systemForm(st)}
			}
		}
		st := &storedSystem{projectID: projectID, seq: s.systems.next(),
			system: evalapi.System{ID: evalapi.NewUUID(), Name: name, Description: deref(req.Description)}}
		s.systems.systems[st.system.ID] = st
		s.systems.projectOf[st.system.ID] = projectID
		first := s.upsertVersion(st, json.RawMessage(config), "")
		st.system.ProductionVersion = &evalapi.SystemVersion{ID: first.ID}
		return reply{http.StatusCreated, s.systemForm(st)}
	}, reply{}
}

// upsertVersion answers st's version of config (canonical JSON), renamed
// to name when name is set, or a new one. Callers hold the lock.
func (s *Server) upsertVersion(st *storedSystem, config json.RawMessage, name string) evalapi.SystemVersion {
	for _, id := range st.versions {
		v := s.systems.versions[id]
		if c, _ := canonical(v.Config); c == string(config) {
			if name != "" {
				v.Name = name
			}
			return *v
		}
	}
	if name == "" {
		name = fmt.Sprintf("Version %d", len(st.versions)+1)
	}
	v := &evalapi.SystemVersion{ID: evalapi.NewUUID(), SystemID: st.system.ID, Name: name, Config: config}
	s.systems.versions[v.ID] = v
	st.versions = append(st.versions, v.ID)
	s.systems.order = append(s.systems.order, v.ID)
	return *v
}

// uuidPath is the path value key when it is a UUID, else the rejection.
func uuidPath(r *http.Request, key string) (string, reply, bool) {
	id := r.PathValue(key)
	if !uuidPattern.MatchString(id) {
		return "", invalid(fieldError{Field: key, Message: key + " must be a UUID"}), false
	}
	return id, reply{}, true
}

func (s *Server) getSystem(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	id, rejection, ok := uuidPath(r, "systemId")
	if !ok {
		return nil, rejection
	}
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		st, ok := s.systemOf(tenant, id)
		if !ok {
			return systemNotFound(id)
		}
		return reply{http.StatusOK, s.systemForm(st)}
	}, reply{}
}

func (s *Server) updateSystem(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	id, rejection, ok := uuidPath(r, "systemId")
	if !ok {
		return nil, rejection
	}
	var req evalapi.SystemUpdate
	if rejection, ok := decodeJSON(r, body, &req); !ok {
		return nil, rejection
	}
	if req.ProductionVersionID != nil && !uuidPattern.MatchString(*req.ProductionVersionID) {
		return nil, invalid(fieldError{Field: "productionVersionId", Message: "productionVersionId must be a UUID"})
	}
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		st, ok := s.systemOf(tenant, id)
		if !ok {
			return systemNotFound(id)
		}
		if req.ProductionVersionID != nil {
			if !slices.Contains(st.versions, *req.ProductionVersionID) {
				return invalid(fieldError{Field: "productionVersionId", Message: "productionVersionId is not a version of this system"})
			}
			st.system.ProductionVersion = &evalapi.SystemVersion{ID: *req.ProductionVersionID}
			st.promotions++
		}
		if req.Name != nil {
			for _, other := range s.systems.systems {
				if other != st && other.projectID == st.projectID && other.system.Name == *req.Name {
					return invalid(fieldError{Field: "name", Message: "a system of this name exists in the project"})
				}
			}
			st.system.Name = *req.Name
		}
		if req.Description != nil {
			st.system.Description = *req.Description
		}
		return reply{http.StatusOK, s.systemForm(st)}
	}, reply{}
}

func (s *Server) deleteSystem(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	id, rejection, ok := uuidPath(r, "systemId")
	if !ok {
		return nil, rejection
	}
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.systemOf(tenant, id); !ok {
			return systemNotFound(id)
		}
		delete(s.systems.systems, id)
		return reply{http.StatusOK, success{true}}
	}, reply{}
}

func (s *Server) listSystems(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	limit, last, errs := listQuery(r.URL.Query())
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	projectID := r.PathValue("projectId")
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.reaches(tenant, projectID) {
			return projectNotFound(projectID)
		}
		return reply{http.StatusOK, pageOf(s.projectSystems(projectID), func(st *storedSystem) int { return st.seq }, s.systemForm, last, limit, false)}
	}, reply{}
}

func (s *Server) upsertSystemVersion(r *http.Request, body []byte, tenant int) (func() reply, reply) {
	id, rejection, ok := uuidPath(r, "systemId")
	if !ok {
		return nil, rejection
	}
	var req evalapi.SystemVersionRequest
	if rejection, ok := decodeJSON(r, body, &req); !ok {
		return nil, rejection
	}
	config, ok := canonical(req.Config)
	if !ok {
		return nil, invalid(fieldError{Field: "config", Message: "config is required and must be an object"})
	}
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		st, ok := s.systemOf(tenant, id)
		if !ok {
			return systemNotFound(id)
		}
		return reply{http.StatusOK, s.upsertVersion(st, json.RawMessage(config), req.Name)}
	}, reply{}
}

func (s *Server) getSystemVersion(r *http.Request, _ []byte, tenant int) (func() reply, reply) {
	id, rejection, ok := uuidPath(r, "systemVersionId")
	if !ok {
		return nil, rejection
	}
	return func() reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		v, _, ok := s.versionOf(tenant, id)
		if !ok {
			return systemVersionNotFound(id)
		}
		return reply{http.StatusOK, *v}
	}, reply{}
}

// runVersion checks a run's systemVersionId for project: a version of one
// of its Systems. It returns the version's System id, or the refusal.
// Callers hold the lock.
func (s *Server) runVersion(tenant int, projectID string, id *string) (*string, *reply) {
	if id == nil {
		return nil, nil
	}
	v, project, ok := s.versionOf(tenant, *id)
	if !ok || project != projectID {
		rep := systemVersionNotFound(*id)
		return nil, &rep
	}
	return &v.SystemID, nil
}

func systemNotFound(id string) reply {
	return errorReply(http.StatusNotFound, codeNotFound, "System not found", map[string]any{"systemId": id})
}

func systemVersionNotFound(id string) reply {
	return errorReply(http.StatusNotFound, codeNotFound, "System version not found", map[string]any{"systemVersionId": id})
}
