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

package kit

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

// Scope is one reconcile of one object, as cluster-api's scopes are: the
// object, the service it resolved to and its kind's client there, and the
// status patcher its outcome is written with once, at the end.
type Scope[T v1alpha1.Object, C any] struct {
	Obj T
	// Conn is the object's service; ConnErr says why it cannot be used
	// (Conn then holds only the name status.service says).
	Conn    *remote.Connection
	ConnErr error
	// Via is the object whose service Obj uses, as the kind's Connect read
	// it (a SystemVersion's System), so that its steps need not read it
	// again; nil where Obj uses its own service or Via could not be read.
	Via v1alpha1.Object
	// Client is the kind's client on Conn, given the object.
	Client C
	Status *StatusPatcher

	life   *Lifecycle[T, C]
	unsaid bool
}

// Unsaid ends the reconcile without writing its outcome: the object is
// gone or let go, or a step failed before it could say anything, and the
// error it returns is retried.
func (s *Scope[T, C]) Unsaid() { s.unsaid = true }

// Lifecycle reconciles the objects of one kind, in the order every kind
// shares, as cluster-api's reconcilers run their phases: fetch, connect,
// read, pause, finalize, service check, claim, finalizer, the kind's own
// steps, and one status patch at the end. A kind supplies its object, its
// client and its steps; what it leaves nil it does without.
type Lifecycle[T v1alpha1.Object, C any] struct {
	Base
	// New returns an empty object of the kind.
	New func() T
	// Connect resolves the service obj uses; without it, obj's own
	// (Connector.Connect). A kind whose objects use another object's
	// service reads that object here and resolves its service; it returns
	// the object as via (Scope.Via), and a nil connection while obj cannot
	// be connected yet: then nothing is resolved, the client is its zero
	// value, and the kind's Steps say why.
	Connect func(ctx context.Context, obj T) (via v1alpha1.Object, conn *remote.Connection, err error)
	// ClientFor is the kind's client for obj on conn.
	ClientFor func(conn *remote.Connection, obj T) C
	// Read completes obj once it is connected (a read of what the cache
	// trims); an error ends the reconcile, with nothing written.
	Read func(ctx context.Context, s *Scope[T, C]) error
	// Remote is how the kind records its remote ids: given, the service
	// check holds obj to the service its remote id or pending create
	// belongs to, and the finalizer follows NeedsFinalizer. A kind without
	// it reads Scope.ConnErr in its own steps.
	Remote *IDKind
	// NeedsFinalizer is the client's answer: must deleting obj delete its
	// remote copy first? Given without Remote, obj stops on a service it
	// cannot use all the same, and any obj may have a remote copy.
	NeedsFinalizer func(C) bool
	// Finalize runs while obj, carrying the finalizer, is being deleted;
	// without it a deleted object is left alone.
	Finalize func(ctx context.Context, s *Scope[T, C]) (Outcome, ctrl.Result, error)
	// Claim returns the outcome that refuses the remote id obj records,
	// and true; false when the claim is sound.
	Claim func(ctx context.Context, s *Scope[T, C]) (Outcome, bool, error)
	// Steps take obj the steps its state calls for.
	Steps func(ctx context.Context, s *Scope[T, C]) (Outcome, ctrl.Result, error)
}

// remoteHolder is an object that records a remote id or a pending create.
type remoteHolder interface {
	v1alpha1.Object
	RecordedID() string
	CreatePending() bool
}

// Reconcile takes one object of the kind a step.
func (l *Lifecycle[T, C]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := l.New()
	if live, err := l.GetLive(ctx, req, obj); !live {
		return ctrl.Result{}, err
	}
	if !obj.GetDeletionTimestamp().IsZero() && l.Finalize == nil {
		return ctrl.Result{}, nil
	}
	via, conn, cerr := l.connect(ctx, obj)
	s := &Scope[T, C]{Obj: obj, Conn: conn, ConnErr: cerr, Via: via, life: l}
	if conn != nil {
		s.Client = l.ClientFor(conn, obj)
	}
	if l.Read != nil {
		if err := l.Read(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	s.Status = l.NewStatusPatcher(obj)
	if conn != nil {
		s.Status.Resolved(conn.Service)
	}
	o, res, err := l.run(ctx, s)
	if s.unsaid {
		return res, err
	}
	return s.Status.Finish(ctx, o, res, err)
}

// connect resolves the service obj uses, and the object it is used through.
func (l *Lifecycle[T, C]) connect(ctx context.Context, obj T) (v1alpha1.Object, *remote.Connection, error) {
	if l.Connect != nil {
		return l.Connect(ctx, obj)
	}
	conn, err := l.Connector.Connect(ctx, obj)
	return nil, conn, err
}

// run is the reconcile's steps after the status patcher is set up.
func (l *Lifecycle[T, C]) run(ctx context.Context, s *Scope[T, C]) (Outcome, ctrl.Result, error) {
	if o, held := HoldIfPaused(s.Obj); held {
		return o, ctrl.Result{}, nil
	}
	if !s.Obj.GetDeletionTimestamp().IsZero() {
		return l.Finalize(ctx, s)
	}
	switch {
	case l.Remote != nil:
		if o, stop, err := s.CheckService(ctx); stop {
			return o, ctrl.Result{}, err
		}
	case l.NeedsFinalizer != nil && s.ConnErr != nil:
		// Its finalizer would follow a client that cannot be called.
		o, _, err := ConnectFailure(s.ConnErr)
		return o, ctrl.Result{}, err
	}
	if l.Claim != nil {
		if o, refused, err := l.Claim(ctx, s); refused || err != nil {
			return o, ctrl.Result{}, err
		}
	}
	if l.NeedsFinalizer != nil {
		if err := SyncFinalizer(ctx, l.Client, s.Obj, l.NeedsFinalizer(s.Client), l.mayHaveRemote(s.Obj)); err != nil {
			s.Unsaid()
			return Outcome{}, ctrl.Result{}, err
		}
	}
	return l.Steps(ctx, s)
}

// mayHaveRemote reports whether obj may have a remote copy: any may, of a
// kind that does not record its remote ids as Remote says.
func (l *Lifecycle[T, C]) mayHaveRemote(obj T) bool {
	if l.Remote == nil {
		return true
	}
	return MayHaveRemote(any(obj).(remoteHolder))
}

// MayHaveRemote reports whether obj records a remote id or a create that
// may have made one.
func MayHaveRemote(obj interface {
	RecordedID() string
	CreatePending() bool
}) bool {
	return obj.RecordedID() != "" || obj.CreatePending()
}

// CheckService stops an object that cannot use the service it resolves
// to: the service is missing or does not allow the namespace (ConnErr), or
// the object's remote id or pending create belongs to another service,
// which a call to this one could not reach (or would reach the wrong
// object of). An id recorded before the service record existed belongs to
// the service the object resolves to now, which is recorded at once.
func (s *Scope[T, C]) CheckService(ctx context.Context) (Outcome, bool, error) {
	if s.ConnErr != nil {
		o, _, err := ConnectFailure(s.ConnErr)
		return o, true, err
	}
	h := any(s.Obj).(remoteHolder)
	if !MayHaveRemote(h) {
		return Outcome{}, false, nil
	}
	switch recorded := h.GetAnnotations()[v1alpha1.ServiceAnnotation]; recorded {
	case s.Conn.Endpoint:
		return Outcome{}, false, nil
	case "":
		err := PatchAnnotations(ctx, s.life.Client, h, map[string]any{v1alpha1.ServiceAnnotation: s.Conn.Endpoint})
		if err != nil {
			return Progressing(v1alpha1.ReasonPending, "recording the service of the remote id"), true, err
		}
		return Outcome{}, false, nil
	default:
		return serviceChanged(*s.life.Remote, h, recorded, s.Conn), true, nil
	}
}

// serviceChanged is the outcome of an object whose remote side belongs to
// the service at recorded while it now resolves to conn.
func serviceChanged(k IDKind, h remoteHolder, recorded string, conn *remote.Connection) Outcome {
	what := "the pending create"
	if id := h.RecordedID(); id != "" {
		what = "remote " + k.Kind + " " + id
	}
	return Stalled(v1alpha1.ReasonServiceChanged, fmt.Sprintf(
		"%s belongs to the service at %s, but this %s now resolves to %s at %s, so nothing is called: "+
			"point spec.serviceRef (or the default service) back at %s, or, to start over on the new service, "+
			"remove the %s, %s and %s annotations",
		what, recorded, k.Kind, conn.Service, conn.Endpoint, recorded,
		k.Annotation, v1alpha1.CreatePendingAnnotation, v1alpha1.ServiceAnnotation))
}
