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
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// KeyError is a key that could not be used, so no request was sent.
// Reason is the object's condition reason; Message never holds the key.
// Without Err the key is missing or unusable and the object waits for its
// Secret to change; with Err the Secret could not be read, which is
// transient.
type KeyError struct {
	Reason  string
	Message string
	Err     error
}

func (e *KeyError) Error() string { return e.Message }

func (e *KeyError) Unwrap() error { return e.Err }

// ReadKey reads the API key in ref's Secret in namespace (data key apiKey
// when ref names none) as the manager reads an object's key: uncached,
// with the same rules and the same *KeyError, never naming the value.
// kubectl eval reads a Secret's key with it.
func ReadKey(ctx context.Context, reader client.Reader, namespace string, ref v1alpha1.SecretKeySelector) (evalapi.APIKey, error) {
	return secretKey(namespace, ref, true).read(ctx, reader)
}

// keySource says where one object's key is read from.
type keySource struct {
	// ref is the Secret and data key, nil when there is none.
	ref *types.NamespacedName
	// field is the data key in the Secret.
	field string
	// required is false for a standalone service, where no key is fine.
	required bool
}

// read returns the key, read at call time and uncached, so that the
// operator holds no Secret data between reconciles. Every failure is a
// *KeyError.
func (s keySource) read(ctx context.Context, reader client.Reader) (evalapi.APIKey, error) {
	if s.ref == nil {
		if s.required {
			return "", &KeyError{Reason: v1alpha1.ReasonSecretNotFound,
				Message: "no apiKeySecretRef is set and the operator has no --default-api-key-secret"}
		}
		return "", nil
	}
	var secret corev1.Secret
	// No logger for this read: at high verbosity client-go logs response
	// bodies, and this one holds the key.
	quiet := logr.NewContext(ctx, logr.Discard())
	err := reader.Get(quiet, *s.ref, &secret)
	if apierrors.IsNotFound(err) {
		return "", &KeyError{Reason: v1alpha1.ReasonSecretNotFound, Message: fmt.Sprintf("Secret %q not found", s.ref.Name)}
	}
	if err != nil {
		msg := fmt.Sprintf("reading Secret %q: %v", s.ref.Name, err)
		return "", &KeyError{Reason: v1alpha1.ReasonSecretUnreadable, Message: msg, Err: err}
	}
	raw, ok := secret.Data[s.field]
	if !ok {
		return "", &KeyError{Reason: v1alpha1.ReasonSecretNotFound,
			Message: fmt.Sprintf("Secret %q has no key %q", s.ref.Name, s.field)}
	}
	key := evalapi.APIKey(raw)
	if !key.Valid() {
		return "", &KeyError{Reason: v1alpha1.ReasonInvalidCredentials, Message: fmt.Sprintf(
			"key %q of Secret %q is not an API key (%s followed by at least %d visible ASCII characters, "+
				"no whitespace or line break); it was not sent", s.field, s.ref.Name, evalapi.KeyPrefix, evalapi.MinKeySecretLen)}
	}
	return key, nil
}

// lazyKey reads one object's key at its first use, once: a client step
// that needs no key (a standalone read) reads no Secret.
type lazyKey struct {
	source  keySource
	secrets client.Reader
	read    bool
	key     evalapi.APIKey
	err     error
}

func (k *lazyKey) get(ctx context.Context) (evalapi.APIKey, error) {
	if !k.read {
		k.key, k.err = k.source.read(ctx, k.secrets)
		k.read = true
	}
	return k.key, k.err
}
