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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
)

// Systems and their versions in the API. Reads answer from the namespace's
// System and SystemVersion objects however they were made (through the API,
// with kubectl or from Git); writes are served where the namespace's service
// is standalone, the cluster being their system of record, with the
// service's semantics: a System is upserted by its name in the project, and
// creating one makes its config the first version, its production version;
// a version is upserted by its config, its id the name-based UUID of its
// System and config (remote.VersionUUID), so the same config is the same
// version whatever object holds it. The production version is kept in the
// System's status.productionVersionId.

// The server's reads and updates of Systems and versions; creating and
// deleting them is only the REST server's, in config/rest/role.yaml.
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=systems;systemversions,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=evaluation.eval-operator.dev,resources=systems/status,verbs=get;update

// Routes of Systems and versions. The mux cannot hold routeSystemVersions
// beside routeSystemVersion (both match /systems/versions/versions, neither
// more specific), so it is registered as routeSystemChild (see muxPatterns)
// and its handler checks the last segment.
const (
	routeSystems        = BasePath + "/projects/{projectId}/systems"
	routeSystem         = BasePath + "/systems/{systemId}"
	routeSystemVersions = BasePath + "/systems/{systemId}/versions"
	routeSystemChild    = BasePath + "/systems/{systemId}/{collection}"
	routeSystemVersion  = BasePath + "/systems/versions/{systemVersionId}"
)

// Kinds, in errors, waiters and budgets.
const (
	systemKind        = "System"
	systemVersionKind = "SystemVersion"
)

// systemRefIndex indexes SystemVersions by the System they name.
const systemRefIndex = "restapi.spec.systemRef.name"

// defaultSystemName is the name of a System upserted without one, as the
// service names it.
const defaultSystemName = "Default system"

// maxConfigKeys bounds a config's top-level keys, as the CRDs do.
const maxConfigKeys = 64

// systemUpsert is the body of POST /projects/{projectId}/systems.
type systemUpsert struct {
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Config      json.RawMessage `json:"config"`
}

// systemsKept refuses a write of System sys (or of its versions) where the
// namespace's service is not standalone: that service keeps them. A new
// System is given its id here (remote.Connection.CarriedOutByCommit).
func (s *Server) systemsKept(ctx context.Context, sys *evaluationv1alpha1.System) error {
	_, err := s.standaloneConnection(ctx, sys, "Systems and versions", "System and SystemVersion")
	return err
}

// getSystemVersion is GET /systems/versions/{systemVersionId}: the SDKs'
// run-and-evaluate helpers read it after creating a run that names it.
func (s *Server) getSystemVersion(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(systemVersionKind, err)
	}
	v, err := s.findVersion(r.Context(), secret.Namespace, r.PathValue("systemVersionId"))
	if err != nil {
		return s.failure(systemVersionKind, err)
	}
	return apierror.Response{Status: http.StatusOK, Body: s.versionAnswer(r.Context(), v, nil)}
}

// listSystems is GET /projects/{projectId}/systems: the project's Systems
// with an id, newest first, a page at a time.
func (s *Server) listSystems(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(systemKind, err)
	}
	limit, after, err := parseListQuery(r.URL.Query())
	if err != nil {
		return s.failure(systemKind, err)
	}
	s.unseen.wait(r.Context(), secret.Namespace)
	var list evaluationv1alpha1.SystemList
	err = s.opts.Cache.List(r.Context(), &list, client.InNamespace(secret.Namespace),
		client.MatchingFields{projectIndex: r.PathValue("projectId")}, client.UnsafeDisableDeepCopy)
	if err != nil {
		return s.failure(systemKind, fmt.Errorf("listing Systems from the cache: %w", err))
	}
	page, err := projectPage(list.Items, after, limit, func(sys *evaluationv1alpha1.System) (evalapi.System, error) {
		return s.systemAnswer(r.Context(), sys)
	})
	if err != nil {
		return s.failure(systemKind, err)
	}
	return apierror.Response{Status: http.StatusOK, Body: page}
}

// getSystem is GET /systems/{systemId}.
func (s *Server) getSystem(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(systemKind, err)
	}
	sys, err := s.findSystem(r.Context(), secret.Namespace, r.PathValue("systemId"))
	if err != nil {
		return s.failure(systemKind, err)
	}
	return s.systemResponse(r.Context(), http.StatusOK, sys)
}

// upsertSystem is POST /projects/{projectId}/systems: the System of the
// name in the project is updated (its description when sent, and its
// config, kept as a version too), or created with its config as its first
// version and production version.
func (s *Server) upsertSystem(w http.ResponseWriter, r *http.Request) apierror.Response {
	var req systemUpsert
	secret, failed := s.decodeRequest(w, r, systemKind, &req)
	if failed != nil {
		return *failed
	}
	name := ptr.Deref(req.Name, defaultSystemName)
	errs := append(lineErrors("name", &name), textErrorsOf("description", req.Description)...)
	if errs = append(errs, configErrors(req.Config)...); len(errs) > 0 {
		return apierror.Validation(errs...).Response()
	}
	projectID := r.PathValue("projectId")
	sys := newSystemObject(secret, projectID, name, req)
	if err := s.systemsKept(r.Context(), sys); err != nil {
		return s.failure(systemKind, err)
	}
	found, err := s.systemNamed(r.Context(), secret.Namespace, projectID, name)
	if err != nil {
		return s.failure(systemKind, err)
	}
	created := found == nil
	if created {
		found, created, err = s.createSystem(r.Context(), sys)
	}
	if err == nil && !created && upsertChanges(found, req) {
		found, err = s.editSystem(r.Context(), found, func(sys *evaluationv1alpha1.System) {
			if req.Description != nil {
				sys.Spec.Description = ptr.To(evaluationv1alpha1.Text(*req.Description))
			}
			sys.Spec.Config = apiextensionsv1.JSON{Raw: req.Config}
		})
	}
	if err != nil {
		return s.failure(systemKind, err)
	}
	v, err := s.upsertVersionOf(r.Context(), found, evalapi.SystemVersionRequest{Config: req.Config})
	if err == nil && created {
		found, err = s.setProduction(r.Context(), found, v.RecordedID())
	}
	if err != nil {
		return s.failure(systemKind, err)
	}
	return s.systemResponse(r.Context(), http.StatusCreated, found)
}

// upsertChanges reports whether req changes sys: its description, when
// sent, or its config.
func upsertChanges(sys *evaluationv1alpha1.System, req systemUpsert) bool {
	return req.Description != nil && *req.Description != string(ptr.Deref(sys.Spec.Description, "")) ||
		!bytes.Equal(convert.Canonical(req.Config), convert.Canonical(sys.Spec.Config.Raw))
}

// newSystemObject is the System object an upsert creates when the project
// has none of the name. Its object name is derived from the project and
// name, so two upserts sent together create one System.
func newSystemObject(secret types.NamespacedName, projectID, name string, req systemUpsert) *evaluationv1alpha1.System {
	sum := sha256.Sum256([]byte(projectID + "\x00" + name))
	sys := &evaluationv1alpha1.System{ObjectMeta: metav1.ObjectMeta{
		Namespace: secret.Namespace, Name: "system-" + hex.EncodeToString(sum[:8]),
		Labels: map[string]string{evaluationv1alpha1.CreatedByLabel: evaluationv1alpha1.CreatedByRESTAPI},
	}, Spec: evaluationv1alpha1.SystemSpec{
		ProjectID: evaluationv1alpha1.ResourceID(projectID), Name: evaluationv1alpha1.LineText(name),
		Config: apiextensionsv1.JSON{Raw: req.Config}, APIKeySecretRef: keyRef(secret),
	}}
	if req.Description != nil {
		sys.Spec.Description = ptr.To(evaluationv1alpha1.Text(*req.Description))
	}
	return sys
}

// createSystem creates sys within the namespace's budget of Systems. When
// an upsert sent alongside created it first, that one is answered:
// created is false. Another System renamed since under sys's object name
// leaves sys to a name of its own.
func (s *Server) createSystem(ctx context.Context, sys *evaluationv1alpha1.System) (
	got *evaluationv1alpha1.System, created bool, err error) {
	err = s.createWithin(ctx, systemKind, sys)
	if !apierrors.IsAlreadyExists(err) {
		return sys, err == nil, err
	}
	held := &evaluationv1alpha1.System{}
	if err := s.opts.Reader.Get(ctx, client.ObjectKeyFromObject(sys), held); err != nil {
		return nil, false, err
	}
	if held.Spec.ProjectID == sys.Spec.ProjectID && held.Spec.Name == sys.Spec.Name {
		return held, false, nil
	}
	sys.Name += "-" + evalapi.NewUUID()[:8]
	err = s.createWithin(ctx, systemKind, sys)
	return sys, err == nil, err
}

// createWithin creates obj, of kind, within its namespace's budget of the
// kind; AlreadyExists comes back as is, any other refusal as its answer.
func (s *Server) createWithin(ctx context.Context, kind string, obj client.Object) error {
	settle, err := s.quotas.Reserve(ctx, kind, obj, false)
	if err != nil {
		return err
	}
	err = s.opts.Client.Create(ctx, obj)
	apierror.NoteWrite(ctx, err)
	settle(err == nil)
	switch {
	case err == nil:
		s.unseen.add(ctx, s.opts.Cache, obj)
		return nil
	case apierrors.IsAlreadyExists(err):
		return err
	default:
		return apierror.WriteFailed(apierror.SpecFields(nil), err, "creating the "+kind)
	}
}

// systemNamed is the System of namespace named name in project, or nil.
func (s *Server) systemNamed(ctx context.Context, namespace, projectID, name string) (*evaluationv1alpha1.System, error) {
	s.unseen.wait(ctx, namespace)
	var list evaluationv1alpha1.SystemList
	err := s.opts.Cache.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{projectIndex: projectID})
	if err != nil {
		return nil, fmt.Errorf("listing Systems from the cache: %w", err)
	}
	list.Items = slices.DeleteFunc(list.Items, func(sys evaluationv1alpha1.System) bool { return string(sys.Spec.Name) != name })
	if len(list.Items) == 0 {
		return nil, nil
	}
	return oldest(list.Items), nil
}

// updateSystem is PATCH /systems/{systemId}: name and description are
// written to the spec, productionVersionId (a version of this System) to
// the status, where the cluster keeps it.
func (s *Server) updateSystem(w http.ResponseWriter, r *http.Request) apierror.Response {
	var u evalapi.SystemUpdate
	secret, failed := s.decodeRequest(w, r, systemKind, &u)
	if failed != nil {
		return *failed
	}
	errs := append(lineErrors("name", u.Name), textErrorsOf("description", u.Description)...)
	if u.ProductionVersionID != nil && !evaluationv1alpha1.ValidUUID(*u.ProductionVersionID) {
		errs = append(errs, apierror.Field{Field: "productionVersionId", Message: "must be a UUID"})
	}
	if len(errs) > 0 {
		return apierror.Validation(errs...).Response()
	}
	sys, err := s.findSystem(r.Context(), secret.Namespace, r.PathValue("systemId"))
	if err == nil {
		sys, err = s.applySystemUpdate(r.Context(), sys, u)
	}
	if err != nil {
		return s.failure(systemKind, err)
	}
	return s.systemResponse(r.Context(), http.StatusOK, sys)
}

// applySystemUpdate checks u against sys, then writes its name and
// description to the spec and its production version to the status.
func (s *Server) applySystemUpdate(ctx context.Context, sys *evaluationv1alpha1.System, u evalapi.SystemUpdate) (
	*evaluationv1alpha1.System, error) {
	err := s.systemsKept(ctx, sys)
	if err == nil && u.Name != nil && *u.Name != string(sys.Spec.Name) {
		err = s.nameFree(ctx, sys, *u.Name)
	}
	if err == nil && u.ProductionVersionID != nil {
		err = s.versionOfSystem(ctx, sys, *u.ProductionVersionID)
	}
	if err == nil && (u.Name != nil || u.Description != nil) {
		sys, err = s.editSystem(ctx, sys, func(sys *evaluationv1alpha1.System) {
			if u.Name != nil {
				sys.Spec.Name = evaluationv1alpha1.LineText(*u.Name)
			}
			if u.Description != nil {
				sys.Spec.Description = ptr.To(evaluationv1alpha1.Text(*u.Description))
			}
		})
	}
	if err == nil && u.ProductionVersionID != nil {
		sys, err = s.setProduction(ctx, sys, *u.ProductionVersionID)
	}
	return sys, err
}

// nameFree refuses a rename of sys to a name another System of its project
// holds: the service keeps names unique in a project.
func (s *Server) nameFree(ctx context.Context, sys *evaluationv1alpha1.System, name string) error {
	other, err := s.systemNamed(ctx, sys.Namespace, string(sys.Spec.ProjectID), name)
	if err == nil && other != nil && other.UID != sys.UID {
		return apierror.Validation(apierror.Field{Field: "name", Message: "another System of the project has this name"})
	}
	return err
}

// versionOfSystem refuses id unless it is a version of sys.
func (s *Server) versionOfSystem(ctx context.Context, sys *evaluationv1alpha1.System, id string) error {
	v, err := s.findVersion(ctx, sys.Namespace, id)
	if e, ok := errors.AsType[*apierror.Error](err); ok && e.Status == http.StatusNotFound || err == nil && v.Spec.SystemRef.Name != sys.Name {
		return apierror.Validation(apierror.Field{Field: "productionVersionId", Message: "is not a version of this System"})
	}
	return err
}

// editSystem applies edit to sys's spec and updates it, as editTestset
// does a Testset's, under the System's managementPolicies.
func (s *Server) editSystem(ctx context.Context, sys *evaluationv1alpha1.System,
	edit func(*evaluationv1alpha1.System)) (*evaluationv1alpha1.System, error) {
	sys = sys.DeepCopy()
	return sys, s.retryWrite(ctx, sys, systemKind, systemNotFound(), func() error {
		if e := tenancy.RefusedByPolicy(systemKind, &sys.Spec, evaluationv1alpha1.ManagementUpdate); e != nil {
			return e
		}
		edit(sys)
		return s.opts.Client.Update(ctx, sys)
	})
}

// setProduction records id as sys's production version, in its status.
func (s *Server) setProduction(ctx context.Context, sys *evaluationv1alpha1.System, id string) (*evaluationv1alpha1.System, error) {
	sys = sys.DeepCopy()
	return sys, s.retryWrite(ctx, sys, systemKind, systemNotFound(), func() error {
		if sys.Status.ProductionVersionID == id {
			return nil
		}
		sys.Status.ProductionVersionID = id
		return s.opts.Client.Status().Update(ctx, sys)
	})
}

// retryWrite runs write, which writes obj, an object of kind, reading obj
// again from the API server and running it again when someone else changed
// it meanwhile (its reconciler, another replica). gone is the answer when
// obj no longer exists.
func (s *Server) retryWrite(ctx context.Context, obj client.Object, kind string, gone error, write func() error) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := s.opts.Reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
		}
		first = false
		err := write()
		apierror.NoteWrite(ctx, err)
		return err
	})
	if _, ok := err.(*apierror.Error); ok { //nolint:errorlint // write returns an apiError as is
		return err
	}
	switch {
	case apierrors.IsNotFound(err):
		return gone
	case err != nil:
		return apierror.WriteFailed(apierror.SpecFields(nil), err, "updating the "+kind)
	}
	// Admission took one write of the request; each further one is paid.
	s.admission.Charge(obj.GetNamespace(), true, 1)
	return nil
}

// deleteSystem is DELETE /systems/{systemId}: the System goes once its
// deletion policy has run; its versions stay, as the service keeps them.
func (s *Server) deleteSystem(_ http.ResponseWriter, r *http.Request) apierror.Response {
	secret, err := s.authenticate(r)
	if err != nil {
		return s.failure(systemKind, err)
	}
	sys, err := s.findSystem(r.Context(), secret.Namespace, r.PathValue("systemId"))
	if err == nil {
		err = s.systemsKept(r.Context(), sys)
	}
	if err != nil {
		return s.failure(systemKind, err)
	}
	return s.deleteObject(r.Context(), systemEndpoint, sys, &sys.Spec)
}

// systemEndpoint and versionEndpoint are the watches' view of Systems and
// versions, which this server creates and reads back, and how a System's
// deletion is awaited.
var (
	systemEndpoint = &endpoint{kind: systemKind, updates: true, fields: apierror.SpecFields(nil),
		local: &localCreate{readable: true}, succeed: deleted, // a deletion waits on until the System is gone
		newObject: func() evaluationv1alpha1.Object { return &evaluationv1alpha1.System{} }}
	versionEndpoint = &endpoint{kind: systemVersionKind, local: &localCreate{readable: true},
		newObject: func() evaluationv1alpha1.Object { return &evaluationv1alpha1.SystemVersion{} }}
)

// upsertSystemVersion is POST /systems/{systemId}/versions: the System's
// version of the config, renamed when a name is sent, or a new one.
func (s *Server) upsertSystemVersion(w http.ResponseWriter, r *http.Request) apierror.Response {
	if r.PathValue("collection") != "versions" {
		return apierror.NotFound().Response()
	}
	var req evalapi.SystemVersionRequest
	secret, failed := s.decodeRequest(w, r, systemVersionKind, &req)
	if failed != nil {
		return *failed
	}
	errs := configErrors(req.Config)
	if req.Name != "" {
		errs = append(errs, lineErrors("name", &req.Name)...)
	}
	if len(errs) > 0 {
		return apierror.Validation(errs...).Response()
	}
	sys, err := s.findSystem(r.Context(), secret.Namespace, r.PathValue("systemId"))
	if err == nil {
		err = s.systemsKept(r.Context(), sys)
	}
	if err != nil {
		return s.failure(systemVersionKind, err)
	}
	v, err := s.upsertVersionOf(r.Context(), sys, req)
	if err != nil {
		return s.failure(systemVersionKind, err)
	}
	return apierror.Response{Status: http.StatusOK, Body: s.versionAnswer(r.Context(), v, sys)}
}

// upsertVersionOf finds sys's version of req's config, renamed to req's
// name when it has one, or creates it, named "Version <n>" without one.
// Its object name is its id, so upserts sent together create one object.
func (s *Server) upsertVersionOf(ctx context.Context, sys *evaluationv1alpha1.System, req evalapi.SystemVersionRequest) (
	*evaluationv1alpha1.SystemVersion, error) {
	v := &evaluationv1alpha1.SystemVersion{ObjectMeta: metav1.ObjectMeta{Namespace: sys.Namespace,
		Labels: map[string]string{evaluationv1alpha1.CreatedByLabel: evaluationv1alpha1.CreatedByRESTAPI},
	}, Spec: evaluationv1alpha1.SystemVersionSpec{SystemRef: evaluationv1alpha1.ObjectRef{Name: sys.Name},
		Config: apiextensionsv1.JSON{Raw: req.Config}}}
	id := remote.VersionUUID(sys.RecordedID(), &v.Spec)
	held, err := s.versionWithID(ctx, sys.Namespace, id)
	if err != nil {
		return nil, err
	}
	if held == nil {
		v.Name = "version-" + id
		v.Annotations = map[string]string{evaluationv1alpha1.SystemVersionIDAnnotation: id,
			evaluationv1alpha1.ServiceAnnotation: remote.Standalone}
		name := req.Name
		if name == "" {
			n, err := s.versionsOf(ctx, sys)
			if err != nil {
				return nil, err
			}
			name = fmt.Sprintf("Version %d", len(n)+1)
		}
		v.Spec.Name = ptr.To(evaluationv1alpha1.LineText(name))
		err = s.createWithin(ctx, systemVersionKind, v)
		if !apierrors.IsAlreadyExists(err) {
			return v, err
		}
		held = &evaluationv1alpha1.SystemVersion{}
		if err := s.opts.Reader.Get(ctx, client.ObjectKeyFromObject(v), held); err != nil {
			return nil, err
		}
	}
	if req.Name == "" || string(ptr.Deref(held.Spec.Name, "")) == req.Name {
		return held, nil
	}
	return s.renameVersion(ctx, held.DeepCopy(), req.Name)
}

// renameVersion gives v the name, as the service renames a version upserted
// again with another name.
func (s *Server) renameVersion(ctx context.Context, v *evaluationv1alpha1.SystemVersion, name string) (
	*evaluationv1alpha1.SystemVersion, error) {
	return v, s.retryWrite(ctx, v, systemVersionKind, versionNotFound(), func() error {
		if e := tenancy.RefusedByPolicy(systemVersionKind, &v.Spec, evaluationv1alpha1.ManagementUpdate); e != nil {
			return e
		}
		v.Spec.Name = ptr.To(evaluationv1alpha1.LineText(name))
		return s.opts.Client.Update(ctx, v)
	})
}

// findSystem is the System of namespace with the id, waiting for the cache
// as findMetric does; another namespace's is not found.
func (s *Server) findSystem(ctx context.Context, namespace, id string) (*evaluationv1alpha1.System, error) {
	var sys *evaluationv1alpha1.System
	err := s.lookUp(ctx, systemKind, namespace, func() (bool, error) {
		var list evaluationv1alpha1.SystemList
		err := s.opts.Cache.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{remoteIDIndex: id})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		sys = oldest(list.Items)
		return true, nil
	})
	if err == nil && sys == nil {
		err = systemNotFound()
	}
	return sys, err
}

func systemNotFound() *apierror.Error {
	return apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No System has this id", nil)
}

// findVersion is the SystemVersion of namespace with the id, waiting for
// the cache as findMetric does.
func (s *Server) findVersion(ctx context.Context, namespace, id string) (*evaluationv1alpha1.SystemVersion, error) {
	var v *evaluationv1alpha1.SystemVersion
	err := s.lookUp(ctx, systemVersionKind, namespace, func() (found bool, err error) {
		v, err = s.versionWithID(ctx, namespace, id)
		return v != nil, err
	})
	if err == nil && v == nil {
		err = versionNotFound()
	}
	return v, err
}

func versionNotFound() *apierror.Error {
	return apierror.New(http.StatusNotFound, evalapi.CodeNotFound, "No SystemVersion has this id", nil)
}

// versionWithID is the cache's SystemVersion of namespace with the id, or
// nil; of several objects holding one config, the oldest.
func (s *Server) versionWithID(ctx context.Context, namespace, id string) (*evaluationv1alpha1.SystemVersion, error) {
	var list evaluationv1alpha1.SystemVersionList
	err := s.opts.Cache.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{remoteIDIndex: id})
	if err != nil || len(list.Items) == 0 {
		return nil, err
	}
	return oldest(list.Items), nil
}

// oldest is a copy of the oldest of items, which are not empty: of two
// Systems of one name, or two SystemVersions of one config, the one made
// first answers, whichever replica reads them.
func oldest[T any, PT interface {
	*T
	metav1.Object
}](items []T) PT {
	first := PT(&items[0])
	for i := range items[1:] {
		o := PT(&items[1+i])
		if at, firstAt := o.GetCreationTimestamp(), first.GetCreationTimestamp(); at.Before(&firstAt) ||
			at.Equal(&firstAt) && o.GetName() < first.GetName() {
			first = o
		}
	}
	c := *first
	return &c
}

// versionsOf are sys's versions with an id, newest first, one per id.
func (s *Server) versionsOf(ctx context.Context, sys *evaluationv1alpha1.System) ([]*evaluationv1alpha1.SystemVersion, error) {
	var list evaluationv1alpha1.SystemVersionList
	err := s.opts.Cache.List(ctx, &list, client.InNamespace(sys.Namespace),
		client.MatchingFields{systemRefIndex: sys.Name}, client.UnsafeDisableDeepCopy)
	if err != nil {
		return nil, fmt.Errorf("listing SystemVersions from the cache: %w", err)
	}
	all, _ := listPage(list.Items, nil, len(list.Items))
	seen := map[string]bool{}
	return slices.DeleteFunc(all, func(v *evaluationv1alpha1.SystemVersion) bool {
		id := v.RecordedID()
		dup := id == "" || seen[id]
		seen[id] = true
		return dup
	}), nil
}

// systemResponse answers sys with status.
func (s *Server) systemResponse(ctx context.Context, status int, sys *evaluationv1alpha1.System) apierror.Response {
	answer, err := s.systemAnswer(ctx, sys)
	if err != nil {
		return s.failure(systemKind, err)
	}
	return apierror.Response{Status: status, Body: answer}
}

// systemAnswer is sys as the service answers a System: its versions, newest
// first, and its production version whole (null without one).
func (s *Server) systemAnswer(ctx context.Context, sys *evaluationv1alpha1.System) (evalapi.System, error) {
	s.unseen.wait(ctx, sys.Namespace)
	answer := evalapi.System{ID: sys.RecordedID(), Name: string(sys.Spec.Name),
		Description: string(ptr.Deref(sys.Spec.Description, "")), Versions: []evalapi.VersionRef{}}
	versions, err := s.versionsOf(ctx, sys)
	if err != nil {
		return answer, err
	}
	for _, v := range versions {
		answer.Versions = append(answer.Versions, evalapi.VersionRef{ID: v.RecordedID(), Name: versionName(v)})
	}
	if id := sys.Status.ProductionVersionID; id != "" {
		v, err := s.versionWithID(ctx, sys.Namespace, id)
		if err != nil {
			return answer, err
		}
		if v != nil {
			answer.ProductionVersion = ptr.To(s.versionAnswer(ctx, v, sys))
		} else {
			// Kept by the service, not mirrored here: its id is what is known.
			answer.ProductionVersion = &evalapi.SystemVersion{ID: id, SystemID: answer.ID, Config: json.RawMessage(`{}`)}
		}
	}
	return answer, nil
}

// versionAnswer is v as the service answers it. A version the reconciler
// has yet to record takes its System's id from sys, or from its System
// object when sys is nil.
func (s *Server) versionAnswer(ctx context.Context, v *evaluationv1alpha1.SystemVersion, sys *evaluationv1alpha1.System) evalapi.SystemVersion {
	answer := convert.SystemVersionResponseOf(v)
	answer.Name = versionName(v)
	if answer.SystemID != "" {
		return answer
	}
	if sys == nil {
		sys = &evaluationv1alpha1.System{}
		if s.opts.Cache.Get(ctx, types.NamespacedName{Namespace: v.Namespace, Name: v.Spec.SystemRef.Name}, sys) != nil {
			return answer
		}
	}
	answer.SystemID = sys.RecordedID()
	return answer
}

// versionName is v's name: its spec's, which a rename has just written and
// the operator gives the service, else the one the service gave it.
func versionName(v *evaluationv1alpha1.SystemVersion) string {
	if v.Spec.Name != nil {
		return string(*v.Spec.Name)
	}
	return v.Status.Name
}

// configErrors checks a config as the CRDs and the operator would: a JSON
// object of at most SystemConfigMaxBytes and maxConfigKeys top-level keys.
func configErrors(raw json.RawMessage) []apierror.Field {
	if len(raw) == 0 || string(raw) == "null" {
		return []apierror.Field{{Field: "config", Message: "Required value"}}
	}
	if err := remote.CheckConfig(raw); err != nil {
		return []apierror.Field{{Field: "config", Message: err.Error()}}
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) == nil && len(keys) > maxConfigKeys {
		return []apierror.Field{{Field: "config", Message: fmt.Sprintf("must have at most %d top-level keys", maxConfigKeys)}}
	}
	return nil
}

// lineErrors checks a name: 1 to 256 characters of one line.
func lineErrors(field string, v *string) []apierror.Field {
	if v == nil {
		return nil
	}
	if n := utf8.RuneCountInString(*v); n == 0 || n > 256 || !evaluationv1alpha1.ValidLineText(*v) {
		return []apierror.Field{{Field: field, Message: "must be 1 to 256 characters; it " + evaluationv1alpha1.LineTextRule}}
	}
	return nil
}

// textErrorsOf checks a description: at most 4096 characters of text.
func textErrorsOf(field string, v *string) []apierror.Field {
	if v == nil {
		return nil
	}
	if utf8.RuneCountInString(*v) > 4096 || !evaluationv1alpha1.ValidText(*v) {
		return []apierror.Field{{Field: field, Message: "must be at most 4096 characters; it " + evaluationv1alpha1.TextRule}}
	}
	return nil
}
