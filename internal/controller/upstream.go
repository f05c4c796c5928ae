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

package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// unauthorizedRetry is how long a 401 waits before the key is tried again
// without a change to its Secret (a change re-triggers at once).
const unauthorizedRetry = 5 * time.Minute

// upstreamFailure maps a failed service call to the object's outcome and to
// how the call is retried: a returned error backs off exponentially in the
// work queue; a nil error with no RequeueAfter waits for a change.
func upstreamFailure(err error) (outcome, ctrl.Result, error) {
	switch evalapi.KindOf(err) {
	case evalapi.KindUnauthorized:
		return stalled(v1alpha1.ReasonUnauthorized,
				"the service refused the API key (401): update the referenced Secret"),
			ctrl.Result{RequeueAfter: unauthorizedRetry}, nil
	case evalapi.KindRejected:
		return stalled(v1alpha1.ReasonRejected, "the service rejected the request: "+err.Error()),
			ctrl.Result{}, nil
	case evalapi.KindNotFound:
		// Nothing at the request's address, e.g. a create in a project that
		// does not exist; sending the same request again finds nothing again.
		return stalled(v1alpha1.ReasonRejected, "the service found nothing to act on: "+err.Error()),
			ctrl.Result{}, nil
	case evalapi.KindRateLimited:
		if after := evalapi.RetryAfterOf(err); after > 0 {
			return progressing(v1alpha1.ReasonUpstreamUnavailable,
					fmt.Sprintf("the service is rate limiting (429); retrying in %s", after)),
				ctrl.Result{RequeueAfter: after}, nil
		}
	}
	return progressing(v1alpha1.ReasonUpstreamUnavailable, "the service call failed; retrying: "+err.Error()),
		ctrl.Result{}, err
}

// credentials reads API keys from Secrets at reconcile time, uncached, so the
// operator holds no Secret data between reconciles.
type credentials struct {
	reader client.Reader
	// defaultSecret is used when an object has no apiKeySecretRef.
	defaultSecret string
	// required is false in standalone mode, where a missing key is fine.
	required bool
}

// keyUnusableError is the stalled outcome of a missing or unusable key.
type keyUnusableError struct{ outcome }

func (e *keyUnusableError) Error() string { return e.message }

// apiKey returns the key for obj. A missing Secret or key, or a key that is
// not Valid, is a *keyUnusableError; any other error is transient.
func (c *credentials) apiKey(ctx context.Context, obj v1alpha1.Object) (evalapi.APIKey, error) {
	ref := c.refOf(obj)
	if ref == nil {
		if c.required {
			return "", &keyUnusableError{stalled(v1alpha1.ReasonSecretNotFound,
				"no apiKeySecretRef is set and the operator has no --default-api-key-secret")}
		}
		return "", nil
	}
	var secret corev1.Secret
	// No logger for this read: at high verbosity client-go logs response
	// bodies, and this one holds the key.
	quiet := logr.NewContext(ctx, logr.Discard())
	err := c.reader.Get(quiet, types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}, &secret)
	if apierrors.IsNotFound(err) {
		return "", &keyUnusableError{stalled(v1alpha1.ReasonSecretNotFound,
			fmt.Sprintf("Secret %q not found", ref.Name))}
	}
	if err != nil {
		return "", fmt.Errorf("reading Secret %q: %w", ref.Name, err)
	}
	raw, ok := secret.Data[ref.Key]
	if !ok {
		return "", &keyUnusableError{stalled(v1alpha1.ReasonSecretNotFound,
			fmt.Sprintf("Secret %q has no key %q", ref.Name, ref.Key))}
	}
	key := evalapi.APIKey(raw)
	if !key.Valid() {
		return "", &keyUnusableError{stalled(v1alpha1.ReasonInvalidCredentials,
			fmt.Sprintf("key %q of Secret %q is not an API key (%s followed by at least %d visible ASCII characters, "+
				"no whitespace or line break); it was not sent", ref.Key, ref.Name, evalapi.KeyPrefix, evalapi.MinKeySecretLen))}
	}
	return key, nil
}

// refOf is obj's Secret reference, or the default one, with the key defaulted.
func (c *credentials) refOf(obj v1alpha1.Object) *v1alpha1.SecretKeySelector {
	if ref := obj.GetAPIKeySecretRef(); ref != nil {
		r := *ref
		if r.Key == "" {
			r.Key = v1alpha1.DefaultAPIKeySecretKey
		}
		return &r
	}
	if c.defaultSecret != "" {
		return &v1alpha1.SecretKeySelector{Name: c.defaultSecret, Key: v1alpha1.DefaultAPIKeySecretKey}
	}
	return nil
}

// keyFailure turns an apiKey error into the object's outcome: a missing or
// unusable key waits for its Secret to change (the Secret watch re-triggers);
// a failed read of the Secret backs off.
func keyFailure(err error) (outcome, ctrl.Result, error) {
	var unusable *keyUnusableError
	if errors.As(err, &unusable) {
		return unusable.outcome, ctrl.Result{}, nil
	}
	return progressing(v1alpha1.ReasonSecretUnreadable, err.Error()), ctrl.Result{}, err
}
