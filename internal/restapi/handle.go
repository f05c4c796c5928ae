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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Metadata the server puts on the resources it creates.
const (
	// CreatedByLabel marks resources created through the REST server.
	CreatedByLabel = evaluationv1alpha1.Prefix + "created-by"
	// CreatedByValue is the value of CreatedByLabel.
	CreatedByValue = "rest-api"
	// IdempotencyKeyAnnotation records the Idempotency-Key the resource was created with.
	IdempotencyKeyAnnotation = evaluationv1alpha1.Prefix + "idempotency-key"
	// RequestHashAnnotation records a hash of the request, so a replay with
	// the same Idempotency-Key but another request is refused.
	RequestHashAnnotation = evaluationv1alpha1.Prefix + "request-hash"
)

// IdempotencyKeyHeader is the request header that makes a POST safe to retry.
const IdempotencyKeyHeader = "Idempotency-Key"

// maxIdempotencyKeyLen bounds the key; it is stored in an annotation.
const maxIdempotencyKeyLen = 255

// serve answers a request for op: authenticate, decode, create the resource
// (or find the one an earlier request with the same Idempotency-Key
// created), then wait for the reconciler's verdict.
func (s *Server) serve(op *operation) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write(w, s.handle(op, w, r))
	})
}

func (s *Server) handle(op *operation, w http.ResponseWriter, r *http.Request) response {
	secret, res, ok := s.authenticate(r)
	if !ok {
		return res
	}
	var body []byte
	if op.hasBody {
		if body, res, ok = s.readBody(w, r); !ok {
			return res
		}
	}
	obj, canonical, errs := op.build(r, body, secret)
	if len(errs) > 0 {
		return validationError(errs...)
	}
	idemKey := r.Header.Get(IdempotencyKeyHeader)
	if res, ok := checkIdempotencyKey(idemKey); !ok {
		return res
	}
	var reqHash string
	if idemKey != "" {
		var err error
		if reqHash, err = requestHash(r, canonical); err != nil {
			s.log.Error(err, "Hashing the request failed", "kind", op.kind)
			return internalError()
		}
	}
	identify(obj, op, secret.Namespace, idemKey, reqHash)

	err := s.opts.Client.Create(r.Context(), obj)
	switch {
	case err == nil:
		reqHash = "" // our own resource; nothing to compare
	case idemKey != "" && apierrors.IsAlreadyExists(err):
		// A replay: the earlier request's resource answers it.
	default:
		return s.createFailed(op, err)
	}
	return s.await(r.Context(), op, client.ObjectKeyFromObject(obj), reqHash)
}

// authenticate returns the Secret holding the request's bearer key.
func (s *Server) authenticate(r *http.Request) (types.NamespacedName, response, bool) {
	secret, ok, err := s.keys.lookup(bearerToken(r))
	if err != nil {
		// Never log the key; the Secrets' names are enough to fix it.
		s.log.Info("Refusing an API key", "reason", err.Error())
	}
	if !ok {
		return types.NamespacedName{}, unauthorized(), false
	}
	return secret, response{}, true
}

// readBody reads a JSON body of at most MaxBodyBytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, response, bool) {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return nil, apiError(http.StatusUnsupportedMediaType, evalapi.CodeUnsupportedMedia,
			"Content-Type must be application/json", nil), false
	}
	tooLarge := apiError(http.StatusRequestEntityTooLarge, evalapi.CodePayloadTooLarge,
		fmt.Sprintf("The request body must not exceed %d bytes", s.opts.MaxBodyBytes), nil)
	if r.ContentLength > s.opts.MaxBodyBytes {
		return nil, tooLarge, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return nil, tooLarge, false
	case err != nil:
		return nil, validationError(fieldError{Field: bodyField, Message: "the request body could not be read"}), false
	}
	return body, response{}, true
}

func checkIdempotencyKey(key string) (response, bool) {
	if len(key) > maxIdempotencyKeyLen {
		return validationError(fieldError{Field: IdempotencyKeyHeader,
			Message: fmt.Sprintf("must be at most %d characters", maxIdempotencyKeyLen)}), false
	}
	for _, c := range []byte(key) {
		if c < 0x21 || c > 0x7e {
			return validationError(fieldError{Field: IdempotencyKeyHeader,
				Message: "must be printable ASCII without spaces"}), false
		}
	}
	return response{}, true
}

// requestHash identifies a request: its method, path and canonical body, so
// "4" and "4.0" or reordered fields are the same request.
func requestHash(r *http.Request, canonical any) (string, error) {
	body, err := json.Marshal(canonical)
	if err != nil {
		return "", fmt.Errorf("encoding the canonical request: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", r.Method, r.URL.EscapedPath())
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// identify names the resource: from the Idempotency-Key when there is one, so
// every replica and every restart maps a retry onto the same resource, and
// by generateName otherwise.
func identify(obj client.Object, op *operation, namespace, idemKey, reqHash string) {
	obj.SetNamespace(namespace)
	obj.SetLabels(map[string]string{CreatedByLabel: CreatedByValue})
	if idemKey == "" {
		obj.SetGenerateName(op.namePrefix)
		return
	}
	sum := sha256.Sum256([]byte(op.kind + "\x00" + idemKey))
	obj.SetName(op.namePrefix + hex.EncodeToString(sum[:16]))
	obj.SetAnnotations(map[string]string{
		IdempotencyKeyAnnotation: idemKey,
		RequestHashAnnotation:    reqHash,
	})
}

// createFailed answers a refused create.
func (s *Server) createFailed(op *operation, err error) response {
	if res, ok := invalidResource(err, op.fields); ok {
		return res
	}
	if apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsServiceUnavailable(err) {
		res := apiError(http.StatusServiceUnavailable, CodeServiceUnavailable,
			"The Kubernetes API server is busy; retry later", nil)
		delay, ok := apierrors.SuggestsClientDelay(err)
		if !ok || delay < 1 {
			delay = 1
		}
		res.header = http.Header{"Retry-After": {strconv.Itoa(delay)}}
		return res
	}
	s.log.Error(err, "Creating the resource failed", "kind", op.kind)
	return internalError()
}

// verdict is what a resource's conditions say about its request.
type verdict int

const (
	// pending: the reconciler has not finished with the resource.
	pending verdict = iota
	// succeeded: the resource is Ready.
	succeeded
	// refused: the request certainly had no effect (rejected, or refused
	// credentials); the resource is deleted so nothing is left half-done.
	refused
	// stuck: the reconciler stalled and needs a person; the resource stays.
	stuck
)

// await waits, up to SyncTimeout, for the reconciler to finish with the
// resource key and answers from it. wantHash, when set, must match the
// resource's request hash (a replay of the same request).
func (s *Server) await(ctx context.Context, op *operation, key types.NamespacedName, wantHash string) response {
	wk := waitKey{kind: op.kind, NamespacedName: key}
	wake := s.waiters.add(wk)
	defer s.waiters.remove(wk, wake)
	waitCtx, cancel := context.WithTimeout(ctx, s.opts.SyncTimeout)
	defer cancel()

	obj := op.newObject()
	var lastReason string
	for waitCtx.Err() == nil {
		// Reading after registering means no change is missed in between.
		err := s.opts.Cache.Get(waitCtx, key, obj)
		switch {
		case err == nil:
			if wantHash != "" && obj.GetAnnotations()[RequestHashAnnotation] != wantHash {
				return apiError(http.StatusUnprocessableEntity, CodeIdempotencyKeyReused,
					"The Idempotency-Key was already used for a different request", nil)
			}
			res, v, reason := judge(op, obj)
			if v == refused {
				s.discard(ctx, obj)
			}
			if v != pending {
				return res
			}
			lastReason = reason
		case !apierrors.IsNotFound(err) && waitCtx.Err() == nil:
			s.log.Error(err, "Reading the resource from the cache failed", "kind", op.kind)
			return internalError()
		}
		select {
		case <-wake:
		case <-waitCtx.Done():
		}
	}
	return apiError(http.StatusGatewayTimeout, CodeUpstreamTimeout,
		fmt.Sprintf("The request was accepted but not completed within %s; details name its resource. "+
			"A request sent with an %s gets its result when retried with the same key",
			s.opts.SyncTimeout, IdempotencyKeyHeader),
		resourceDetails(op.kind, key, lastReason))
}

// judge reads the conditions the reconciler set for the resource's current
// generation: Ready True answers the request; Stalled True (which the
// reconciler sets only for outcomes it will not retry by itself) fails it.
// Anything else is still in progress. reason is Ready's reason.
func judge(op *operation, obj evaluationv1alpha1.Object) (res response, v verdict, reason string) {
	conds := *obj.GetConditions()
	ready := meta.FindStatusCondition(conds, evaluationv1alpha1.ConditionReady)
	if ready == nil || ready.ObservedGeneration < obj.GetGeneration() {
		return response{}, pending, ""
	}
	if ready.Status == metav1.ConditionTrue {
		return op.succeed(obj), succeeded, ready.Reason
	}
	stalled := meta.FindStatusCondition(conds, evaluationv1alpha1.ConditionStalled)
	if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.ObservedGeneration < obj.GetGeneration() {
		return response{}, pending, ready.Reason
	}
	switch ready.Reason {
	case evaluationv1alpha1.ReasonRejected:
		return apiError(http.StatusBadRequest, CodeRejected, messageOr(ready.Message, "The service rejected the request"), nil),
			refused, ready.Reason
	case evaluationv1alpha1.ReasonUnauthorized, evaluationv1alpha1.ReasonInvalidCredentials,
		evaluationv1alpha1.ReasonSecretNotFound:
		return unauthorized(), refused, ready.Reason
	default:
		return apiError(http.StatusBadGateway, CodeUpstreamError,
			messageOr(ready.Message, "The request needs the attention of the cluster's administrator"),
			resourceDetails(op.kind, client.ObjectKeyFromObject(obj), ready.Reason)), stuck, ready.Reason
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
	if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		s.log.Error(err, "Deleting a refused request's resource failed", "name", client.ObjectKeyFromObject(obj))
	}
}
