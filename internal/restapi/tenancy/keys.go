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

// Package tenancy is who may use the REST server and how much: the API
// keys and the namespaces (tenants) they grant, each tenant's admission
// (requests in flight, read and write rates), its budget of objects per
// kind, and the managementPolicies that forbid a write.
package tenancy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// keyHashIndex indexes the key Secrets by the hex SHA-256 of their apiKey.
const keyHashIndex = "apiKeyHash"

// Keyring knows the API keys the server accepts: the apiKey of every Secret
// labelled evaluation.eval-operator.dev/api-key=true, in the watched
// namespaces (all, or Options.Namespaces) that the server serves (tenants).
// It reads them from informers that list and watch only those Secrets, so
// no other Secret is ever cached, and a deleted or unlabelled Secret (the
// watch reports both as a deletion) stops working at once.
type Keyring struct {
	// informers hold the key Secrets: one for all namespaces, or one per
	// watched namespace.
	informers []toolscache.SharedIndexInformer
	tenants   *Tenants
}

// NewKeyring returns a Keyring of the key Secrets in namespaces (empty:
// all) that tenants serves.
func NewKeyring(cs kubernetes.Interface, namespaces []string, tenants *Tenants) (*Keyring, error) {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	selector := evaluationv1alpha1.APIKeyLabel + "=true"
	k := &Keyring{tenants: tenants}
	for _, ns := range namespaces {
		informer := coreinformers.NewFilteredSecretInformer(cs, ns, 0,
			toolscache.Indexers{keyHashIndex: indexKeyHash},
			func(o *metav1.ListOptions) { o.LabelSelector = selector })
		if err := informer.SetTransform(keepOnlyAPIKey); err != nil {
			return nil, fmt.Errorf("setting the key Secret transform: %w", err)
		}
		k.informers = append(k.informers, informer)
	}
	return k, nil
}

// Run runs the informers until ctx is done; it returns once the Secrets
// (and the served namespaces) are listed.
func (k *Keyring) Run(ctx context.Context) error {
	all := append(slices.Clone(k.informers), k.tenants.informers()...)
	synced := make([]toolscache.InformerSynced, 0, len(all))
	for _, informer := range all {
		go informer.RunWithContext(ctx)
		synced = append(synced, informer.HasSynced)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return errors.New("listing the API key Secrets did not finish")
	}
	return nil
}

// keepOnlyAPIKey drops everything of a key Secret but its identity and its
// apiKey, so other data in it is never held in memory.
func keepOnlyAPIKey(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil // a tombstone
	}
	slim := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name:            s.Name,
		Namespace:       s.Namespace,
		UID:             s.UID,
		ResourceVersion: s.ResourceVersion,
	}}
	if scope, ok := s.Labels[KeyScopeLabel]; ok {
		slim.Labels = map[string]string{KeyScopeLabel: scope}
	}
	if key, ok := s.Data[evaluationv1alpha1.DefaultAPIKeySecretKey]; ok {
		slim.Data = map[string][]byte{evaluationv1alpha1.DefaultAPIKeySecretKey: key}
	}
	return slim, nil
}

func indexKeyHash(obj any) ([]string, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return nil, nil
	}
	key := s.Data[evaluationv1alpha1.DefaultAPIKeySecretKey]
	if !evalapi.APIKey(key).Valid() {
		return nil, nil // never accepted, so never indexed
	}
	return []string{hashKey(key)}, nil
}

func hashKey(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:])
}

// ErrAmbiguousKey: the same key is in Secrets of different namespaces, so it
// does not say which namespace it grants.
var ErrAmbiguousKey = errors.New("the API key is held by Secrets in more than one namespace")

// Lookup returns the Secret holding key in a served namespace. When several
// Secrets of one namespace hold it, the first by name is used, so every
// replica agrees.
func (k *Keyring) Lookup(key string) (types.NamespacedName, bool, error) {
	if !evalapi.APIKey(key).Valid() {
		return types.NamespacedName{}, false, nil
	}
	var holders []types.NamespacedName
	for _, informer := range k.informers {
		objs, err := informer.GetIndexer().ByIndex(keyHashIndex, hashKey([]byte(key)))
		if err != nil {
			return types.NamespacedName{}, false, fmt.Errorf("looking up the API key: %w", err)
		}
		for _, obj := range objs {
			s := obj.(*corev1.Secret)
			// The hashes matched; compare the keys themselves in constant time.
			if subtle.ConstantTimeCompare(s.Data[evaluationv1alpha1.DefaultAPIKeySecretKey], []byte(key)) == 1 &&
				k.tenants.serves(s.Namespace) {
				holders = append(holders, types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
			}
		}
	}
	if len(holders) == 0 {
		return types.NamespacedName{}, false, nil
	}
	slices.SortFunc(holders, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	if holders[0].Namespace != holders[len(holders)-1].Namespace {
		return types.NamespacedName{}, false, ErrAmbiguousKey
	}
	return holders[0], true, nil
}

// KeyScopeLabel on a key Secret limits what its key may do: "gates" accepts
// it on the gate webhooks only, so a key that must sit in plain text in a
// Flagger Canary's webhook URL can start the runs of the namespace's
// templates and nothing else.
const KeyScopeLabel = evaluationv1alpha1.Prefix + "api-key-scope"

// KeyScopeGates is the KeyScopeLabel value of a gates-only key.
const KeyScopeGates = "gates"

// GatesPath is where the rollout gates' webhooks are served, outside the
// API's base path: the only place a gates-only key is accepted, and where
// a key may come as the password of Basic authentication.
const GatesPath = "/gates/v1/"

// KeyOf is the Secret holding r's key, where r may use it: a gates-only key
// is refused outside the gate webhooks.
func (k *Keyring) KeyOf(r *http.Request) (types.NamespacedName, bool, error) {
	secret, ok, err := k.Lookup(bearerToken(r))
	if !ok || strings.HasPrefix(r.URL.Path, GatesPath) {
		return secret, ok, err
	}
	for _, informer := range k.informers {
		obj, exists, _ := informer.GetIndexer().GetByKey(secret.String())
		if exists && obj.(*corev1.Secret).Labels[KeyScopeLabel] == KeyScopeGates {
			return types.NamespacedName{}, false, ErrGatesOnlyKey
		}
	}
	return secret, ok, err
}

// ErrGatesOnlyKey: a gates-only key was sent to the API.
var ErrGatesOnlyKey = errors.New("the API key's Secret is labelled " + KeyScopeLabel + "=" + KeyScopeGates +
	": it is accepted on /gates/v1/ only")

// bearerToken returns the key of a request: the token of an
// "Authorization: Bearer <token>" header, or on the gate webhooks the
// password of Basic authentication, since Flagger can put a credential only
// in its webhook's URL (https://gate:<key>@host/...).
func bearerToken(r *http.Request) string {
	if _, password, ok := r.BasicAuth(); ok && strings.HasPrefix(r.URL.Path, GatesPath) {
		return password
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
