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
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/remote"
	"github.com/eval-operator/eval-operator/internal/restapi/apierror"
	"github.com/eval-operator/eval-operator/internal/restapi/tenancy"
	"github.com/eval-operator/eval-operator/internal/trimcache"
)

// Metadata the server puts on the resources it creates.
const (
	// IdempotencyKeyAnnotation records the Idempotency-Key the resource was created with.
	IdempotencyKeyAnnotation = evaluationv1alpha1.Prefix + "idempotency-key"
	// RequestHashAnnotation records a hash of the request, so a replay with
	// the same Idempotency-Key but another request is refused.
	RequestHashAnnotation = evaluationv1alpha1.Prefix + "request-hash"
)

// maxIdempotencyKeyLen bounds the key; it is stored in an annotation.
const maxIdempotencyKeyLen = 255

// serve answers a request for ep.
func (s *Server) serve(ep *endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apierror.Write(w, r, s.handle(ep, w, r))
	})
}

// handle carries out a request in three steps: parse it into the resource
// that carries it out, create that resource (or find the one an earlier
// request with the same Idempotency-Key created), then await the
// reconciler's verdict on it. Where the resource's service is standalone, a
// request the create alone carries out (ep.local) is answered from the
// committed create; a replay still waits, so it answers as the first
// request's resource ended.
func (s *Server) handle(ep *endpoint, w http.ResponseWriter, r *http.Request) apierror.Response {
	req, err := s.parse(ep, w, r)
	if err != nil {
		return s.failure(ep.kind, err)
	}
	if req.obj == nil {
		return ep.noop
	}
	local, calls, err := s.plan(r.Context(), ep, req.obj)
	if err != nil {
		return s.failure(ep.kind, err)
	}
	settle, err := s.quotas.Reserve(r.Context(), ep.kind, req.obj, req.idemKey != "")
	if err != nil {
		return s.failure(ep.kind, err)
	}
	// Admission took one write of the tenant's budget; a request that costs
	// more pays the rest before it is created.
	refund := s.admission.Charge(req.obj.GetNamespace(), true, writeCost(req.obj, calls)-1)
	replay, err := s.createOrReplay(r.Context(), ep, req)
	settle(err == nil && !replay)
	if err != nil || replay {
		refund() // nothing new was created: an earlier request paid
	}
	if err != nil {
		return s.failure(ep.kind, err)
	}
	if local != nil && !replay {
		if local.readable {
			s.unseen.add(r.Context(), s.opts.Cache, req.obj)
		}
		return local.answer(req.obj)
	}
	var wantHash string
	if replay {
		wantHash = req.hash // the earlier request must have been this same one
	}
	return s.await(r.Context(), ep, client.ObjectKeyFromObject(req.obj), wantHash, 0)
}

// writeCost is what creating obj, which sends the service calls, costs its
// tenant's write budget: one write per call, or per started unit of a
// Metric's texts where that is more (see tenancy.TextCost).
func writeCost(obj client.Object, calls int) int {
	if m, ok := obj.(*evaluationv1alpha1.Metric); ok {
		return max(calls, tenancy.TextCost(m))
	}
	return calls
}

// plan is how a request for obj is carried out: by its create alone
// (local, where obj's service is standalone and ep has a local form; else
// nil, and the request waits for the reconciler), and how many service
// calls it sends.
func (s *Server) plan(ctx context.Context, ep *endpoint, obj client.Object) (local *localCreate, calls int, err error) {
	if s.opts.Connector == nil || (ep.local == nil && ep.calls == nil) {
		return nil, 1, nil
	}
	conn, err := s.opts.Connector.Connect(ctx, obj.(evaluationv1alpha1.Object))
	if se, ok := errors.AsType[*remote.ServiceError](err); ok {
		// Nothing is written for a namespace whose service cannot be used.
		return nil, 0, apierror.New(http.StatusServiceUnavailable, apierror.CodeUpstreamError,
			"The namespace's Evaluation Service connection cannot be used: "+se.Message, nil)
	}
	if err != nil {
		return nil, 0, err
	}
	if ep.local != nil && conn.CarriedOutByCommit(obj) {
		local = ep.local
	}
	calls = 1
	if ep.calls != nil {
		calls = ep.calls(obj, conn)
	}
	return local, calls, nil
}

// failure answers a failed step: an apiError as itself; a step cut off
// because the client hung up (which cancels the request's context) as 499,
// noted at V(1), since a client can do that at will and nothing went wrong
// here; any other error is the server's own fault, logged and answered 500
// without its text.
func (s *Server) failure(kind string, err error) apierror.Response {
	if e, ok := errors.AsType[*apierror.Error](err); ok {
		if e.Note != nil {
			s.log.V(1).Info("The API server refused a write", "kind", kind, "reason", e.Note.Error())
		}
		return e.Response()
	}
	if errors.Is(err, context.Canceled) {
		s.log.V(1).Info("The client hung up before its answer", "kind", kind, "step", err.Error())
		return apierror.New(apierror.StatusClientClosedRequest, apierror.CodeClientClosedRequest, "The client closed the request", nil).Response()
	}
	s.log.Error(err, "Serving a request failed", "kind", kind)
	return apierror.Internal().Response()
}

// parsedRequest is a request ready to be carried out.
type parsedRequest struct {
	// obj is the resource to create, named and in the caller's namespace.
	obj client.Object
	// idemKey is the request's Idempotency-Key, or "" without one.
	idemKey string
	// hash identifies the request when it has an idemKey (see requestHash).
	hash string
}

// parse authenticates r, reads its body and builds the resource that
// carries it out.
func (s *Server) parse(ep *endpoint, w http.ResponseWriter, r *http.Request) (parsedRequest, error) {
	secret, err := s.authenticate(r)
	if err != nil {
		return parsedRequest{}, err
	}
	var body []byte
	if ep.hasBody {
		if body, err = s.readBody(w, r); err != nil {
			return parsedRequest{}, err
		}
	}
	obj, hashInput, errs := ep.build(r, body, secret)
	if len(errs) > 0 {
		return parsedRequest{}, apierror.Validation(errs...)
	}
	if obj == nil {
		return parsedRequest{}, nil // nothing to do: ep.noop answers
	}
	req := parsedRequest{obj: obj, idemKey: r.Header.Get(apierror.IdempotencyKeyHeader)}
	if err := checkIdempotencyKey(req.idemKey); err != nil {
		return parsedRequest{}, err
	}
	if req.idemKey != "" {
		if req.hash, err = requestHash(r, hashInput); err != nil {
			return parsedRequest{}, err
		}
	}
	nameResource(ep, req, secret.Namespace)
	return req, nil
}

// authenticate returns the Secret holding the request's bearer key.
func (s *Server) authenticate(r *http.Request) (types.NamespacedName, error) {
	secret, ok, err := s.keys.KeyOf(r)
	if err != nil {
		// Never log the key; the Secrets' names are enough to fix it.
		s.log.Info("Refusing an API key", "reason", err.Error())
	}
	if !ok {
		return types.NamespacedName{}, apierror.Unauthorized()
	}
	return secret, nil
}

// readBody reads a JSON body of at most MaxBodyBytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" || !isUTF8Charset(params) {
		return nil, apierror.New(http.StatusUnsupportedMediaType, evalapi.CodeUnsupportedMedia,
			"Content-Type must be application/json, in UTF-8", nil)
	}
	tooLarge := apierror.New(http.StatusRequestEntityTooLarge, evalapi.CodePayloadTooLarge,
		fmt.Sprintf("The request body must not exceed %d bytes", s.opts.MaxBodyBytes), nil)
	if r.ContentLength > s.opts.MaxBodyBytes {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return nil, tooLarge
	case err != nil:
		return nil, apierror.Validation(apierror.Field{Field: apierror.BodyField, Message: "the request body could not be read"})
	}
	return body, nil
}

// checkIdempotencyKey refuses a key that cannot be stored in an annotation.
func checkIdempotencyKey(key string) error {
	if len(key) > maxIdempotencyKeyLen {
		return apierror.Validation(apierror.Field{Field: apierror.IdempotencyKeyHeader,
			Message: fmt.Sprintf("must be at most %d characters", maxIdempotencyKeyLen)})
	}
	for _, c := range []byte(key) {
		if c < 0x21 || c > 0x7e {
			return apierror.Validation(apierror.Field{Field: apierror.IdempotencyKeyHeader,
				Message: "must be printable ASCII without spaces"})
		}
	}
	return nil
}

// requestHash identifies a request: its method, path and the JSON encoding
// of its hashInput, so "4" and "4.0" or reordered fields are the same request.
func requestHash(r *http.Request, hashInput any) (string, error) {
	body, err := json.Marshal(hashInput)
	if err != nil {
		return "", fmt.Errorf("hashing the request: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", r.Method, r.URL.EscapedPath())
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// nameResource places req's resource in namespace and names it: from the
// Idempotency-Key when there is one, so every replica and every restart maps
// a retry onto the same resource, and at random otherwise. Named before the
// create, it is known to the budget's reservation (Quotas.Reserve), which
// then never counts it twice when the cache shows it before the create
// returns.
func nameResource(ep *endpoint, req parsedRequest, namespace string) {
	obj := req.obj
	obj.SetNamespace(namespace)
	obj.SetLabels(map[string]string{evaluationv1alpha1.CreatedByLabel: evaluationv1alpha1.CreatedByRESTAPI})
	if req.idemKey == "" {
		obj.SetName(ep.namePrefix + strings.ToLower(rand.Text()[:16]))
		return
	}
	sum := sha256.Sum256([]byte(ep.kind + "\x00" + req.idemKey))
	obj.SetName(ep.namePrefix + hex.EncodeToString(sum[:16]))
	obj.SetAnnotations(map[string]string{
		IdempotencyKeyAnnotation: req.idemKey,
		RequestHashAnnotation:    req.hash,
	})
}

// createOrReplay creates req's resource. replay is true when an earlier
// request with the same Idempotency-Key created it already: that resource
// answers this request too, provided it was the same request.
func (s *Server) createOrReplay(ctx context.Context, ep *endpoint, req parsedRequest) (replay bool, err error) {
	err = s.opts.Client.Create(ctx, req.obj)
	apierror.NoteWrite(ctx, err)
	switch {
	case err == nil:
		return false, nil
	case req.idemKey != "" && apierrors.IsAlreadyExists(err):
		return true, nil
	default:
		return false, createError(ep, err)
	}
}

// createError is the failure of a refused create.
func createError(ep *endpoint, err error) error {
	return apierror.WriteFailed(ep.fields, err, "creating the resource")
}

// progress is what a resource's conditions say about its request.
type progress int

const (
	// pending: the reconciler has not finished with the resource.
	pending progress = iota
	// succeeded: the resource is Ready.
	succeeded
	// refused: the request certainly had no effect (rejected, or refused
	// credentials); a created resource is deleted so nothing is left
	// half-done, an updated one stays.
	refused
	// stuck: the reconciler stalled and needs a person; the resource stays.
	stuck
)

// await waits, up to SyncTimeout, for the reconciler to finish with the
// resource key at generation (or later) and answers from it. wantHash is set
// only for a replay: the resource's request hash must match it.
func (s *Server) await(ctx context.Context, ep *endpoint, key types.NamespacedName, wantHash string, generation int64) apierror.Response {
	var seen types.UID // the resource's, once the cache has shown it
	return s.waitFor(ctx, ep, key, func(obj evaluationv1alpha1.Object) (apierror.Response, bool, string) {
		switch {
		case obj == nil && seen == "":
			return apierror.Response{}, false, "" // the cache has yet to see the write
		case obj == nil || obj.GetUID() != seen && seen != "":
			return deletedWhileWaiting(ep, key).Response(), true, ""
		}
		seen = obj.GetUID()
		switch {
		case obj.GetGeneration() < generation:
			return apierror.Response{}, false, "" // the cache has yet to see the write
		case wantHash != "" && obj.GetAnnotations()[RequestHashAnnotation] != wantHash:
			return apierror.New(http.StatusUnprocessableEntity, apierror.CodeIdempotencyKeyReused,
				"The Idempotency-Key was already used for a different request", nil).Response(), true, ""
		}
		res, v, reason := judge(ep, obj)
		if v == succeeded {
			res = s.withTexts(ctx, ep, obj, res)
		}
		if v == pending && obj.GetDeletionTimestamp() != nil {
			return deletedWhileWaiting(ep, key).Response(), true, reason
		}
		if v == refused && !ep.updates {
			s.discard(ctx, obj)
		}
		return res, v != pending, reason
	})
}

// withTexts is a success's answer res, built again from the whole Metric
// when obj is a Metric the cache holds without its texts. It is read once,
// when the answer is due, and not at each change seen while waiting: a
// large Metric is cached trimmed from the start, and each read costs the API
// server and the tenant's read budget.
func (s *Server) withTexts(ctx context.Context, ep *endpoint, obj evaluationv1alpha1.Object, res apierror.Response) apierror.Response {
	m, ok := obj.(*evaluationv1alpha1.Metric)
	if !ok || !trimcache.Trimmed(m) {
		return res
	}
	if err := s.whole(ctx, m); err != nil {
		return s.failure(ep.kind, err)
	}
	return ep.succeed(m)
}

// decision says whether the resource (nil once it is gone) settles the
// request, with which answer, and otherwise the reason it is waiting on.
type decision func(obj evaluationv1alpha1.Object) (res apierror.Response, done bool, reason string)

// waitFor reads the resource key from the cache after each change until
// decide settles the request, for up to SyncTimeout; then it answers 504.
func (s *Server) waitFor(ctx context.Context, ep *endpoint, key types.NamespacedName, decide decision) apierror.Response {
	wk := waitKey{kind: ep.kind, NamespacedName: key}
	wake := s.waiters.add(wk)
	defer s.waiters.remove(wk, wake)
	waitCtx, cancel := context.WithTimeout(ctx, s.opts.SyncTimeout)
	defer cancel()

	var lastReason string
	for waitCtx.Err() == nil {
		// Reading after registering means no change is missed in between.
		obj := ep.newObject()
		err := s.opts.Cache.Get(waitCtx, key, obj)
		switch {
		case apierrors.IsNotFound(err):
			obj = nil
		case err != nil && waitCtx.Err() == nil:
			return s.failure(ep.kind, fmt.Errorf("reading the resource from the cache: %w", err))
		case err != nil:
			continue // timed out while reading
		}
		res, done, reason := decide(obj)
		if done {
			return res
		}
		lastReason = reason
		select {
		case <-wake:
		case <-waitCtx.Done():
		}
	}
	return apierror.New(http.StatusGatewayTimeout, apierror.CodeUpstreamTimeout,
		fmt.Sprintf("The request was accepted but not completed within %s; details name its resource. "+
			"A request sent with an %s gets its result when retried with the same key",
			s.opts.SyncTimeout, apierror.IdempotencyKeyHeader),
		resourceDetails(ep.kind, key, lastReason)).Response()
}

// deletedWhileWaiting answers a request whose resource was deleted (or is
// being deleted) before the reconciler finished with it: an update finds its
// Metric gone, 404; a create learns that its resource went away, 409.
func deletedWhileWaiting(ep *endpoint, key types.NamespacedName) *apierror.Error {
	if ep.updates {
		return apierror.New(http.StatusNotFound, evalapi.CodeNotFound,
			"The Metric was deleted before the update completed", nil)
	}
	return apierror.New(http.StatusConflict, apierror.CodeResourceDeleted,
		"The request's resource was deleted before the request completed; details name it",
		resourceDetails(ep.kind, key, ""))
}

// judge is conditionsProgress, except that a refusal after the resource
// changed something already (ep.partial) is no refusal: it is answered 502
// with what was done, and the resource stays to show it.
func judge(ep *endpoint, obj evaluationv1alpha1.Object) (res apierror.Response, p progress, reason string) {
	res, p, reason = conditionsProgress(ep, obj)
	if p != refused || ep.partial == nil {
		return res, p, reason
	}
	done := ep.partial(obj)
	if done == nil {
		return res, p, reason
	}
	details := resourceDetails(ep.kind, client.ObjectKeyFromObject(obj), reason)
	maps.Copy(details, done)
	var msg string
	if ready := meta.FindStatusCondition(*obj.GetConditions(), evaluationv1alpha1.ConditionReady); ready != nil {
		msg = ready.Message
	}
	return apierror.New(http.StatusBadGateway, apierror.CodeUpstreamError,
		"The service refused the request partway; details say what was done: "+messageOr(msg, "no reason given"),
		details).Response(), stuck, reason
}

// conditionsProgress reads the conditions the reconciler set for the
// resource's current generation: Ready True answers the request; Stalled
// True (which the reconciler sets only for outcomes it will not retry by
// itself) fails it.
// Anything else is still in progress. reason is Ready's reason.
func conditionsProgress(ep *endpoint, obj evaluationv1alpha1.Object) (res apierror.Response, p progress, reason string) {
	conds := *obj.GetConditions()
	ready := meta.FindStatusCondition(conds, evaluationv1alpha1.ConditionReady)
	if ready == nil || ready.ObservedGeneration < obj.GetGeneration() {
		return apierror.Response{}, pending, ""
	}
	if ready.Status == metav1.ConditionTrue {
		return ep.succeed(obj), succeeded, ready.Reason
	}
	stalled := meta.FindStatusCondition(conds, evaluationv1alpha1.ConditionStalled)
	if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.ObservedGeneration < obj.GetGeneration() {
		return apierror.Response{}, pending, ready.Reason
	}
	switch ready.Reason {
	case evaluationv1alpha1.ReasonRejected:
		return apierror.New(http.StatusBadRequest, apierror.CodeRejected,
			messageOr(ready.Message, "The service rejected the request"), nil).Response(), refused, ready.Reason
	case evaluationv1alpha1.ReasonUnauthorized, evaluationv1alpha1.ReasonInvalidCredentials,
		evaluationv1alpha1.ReasonSecretNotFound:
		return apierror.Unauthorized().Response(), refused, ready.Reason
	default:
		return apierror.New(http.StatusBadGateway, apierror.CodeUpstreamError,
			messageOr(ready.Message, "The request needs the attention of the cluster's administrator"),
			resourceDetails(ep.kind, client.ObjectKeyFromObject(obj), ready.Reason)).Response(), stuck, ready.Reason
	}
}

func messageOr(msg, fallback string) string {
	if msg == "" {
		return fallback
	}
	return msg
}

// resourceDetails names the resource a request created, so the client (or
// the cluster's administrator) can follow it up.
func resourceDetails(kind string, key types.NamespacedName, reason string) map[string]any {
	return map[string]any{"kind": kind, "namespace": key.Namespace, "name": key.Name, "reason": reason}
}

// discard deletes a resource whose request had no effect. The UID
// precondition keeps it from deleting a newer resource of the same name.
func (s *Server) discard(ctx context.Context, obj client.Object) {
	uid := obj.GetUID()
	err := s.opts.Client.Delete(ctx, obj, client.Preconditions{UID: &uid})
	apierror.NoteWrite(ctx, err)
	if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		s.log.Error(err, "Deleting a refused request's resource failed", "name", client.ObjectKeyFromObject(obj))
	}
}
