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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// Defaults are the manager's flags: the service objects use when nothing
// else names one.
type Defaults struct {
	// Service is the --api-url service; nil runs standalone.
	Service evalapi.Service
	// DefaultAPIKeySecret names the Secret, in each object's namespace, used
	// when an object has no apiKeySecretRef.
	DefaultAPIKeySecret string
	// DriftInterval is the time between two reads of a Ready Metric's
	// remote copy; 0 turns drift checks off.
	DriftInterval time.Duration
	// BulkDeleteBatchSize is the number of testcase ids per bulk-delete call.
	BulkDeleteBatchSize int
}

// Connector resolves the service each object uses.
type Connector struct {
	// secrets reads key Secrets, uncached.
	secrets  client.Reader
	defaults Defaults
}

// NewConnector returns a Connector that reads key Secrets with secrets (an
// uncached reader: Secret data is never cached).
func NewConnector(secrets client.Reader, d Defaults) *Connector {
	return &Connector{secrets: secrets, defaults: d}
}

// Connect resolves obj's service. It makes no call and reads no Secret.
func (c *Connector) Connect(_ context.Context, obj v1alpha1.Object) (*Connection, error) {
	local := c.defaults.Service == nil
	conn := &Connection{
		Local:   local,
		secrets: c.secrets,
		svc:     c.defaults.Service,
		key:     keySource{field: v1alpha1.DefaultAPIKeySecretKey, required: !local},
	}
	if !local {
		conn.DriftInterval = c.defaults.DriftInterval
		conn.BulkDeleteBatch = c.defaults.BulkDeleteBatchSize
	}
	if name := c.KeySecretName(obj); name != "" {
		conn.key.ref = &types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}
		if ref := obj.GetAPIKeySecretRef(); ref != nil && ref.Key != "" {
			conn.key.field = ref.Key
		}
	}
	return conn, nil
}

// KeySecretName names the Secret, in obj's namespace, that holds obj's
// key, or "" when there is none: obj's own apiKeySecretRef, else the
// default one.
func (c *Connector) KeySecretName(obj v1alpha1.Object) string {
	if ref := obj.GetAPIKeySecretRef(); ref != nil {
		return ref.Name
	}
	return c.defaults.DefaultAPIKeySecret
}

// Connection is one object's resolved service.
type Connection struct {
	// Local is true when the cluster is the system of record (a standalone
	// service): there is no remote copy of anything, so a create cannot
	// leave a duplicate behind, nothing remote is read back or deleted, and
	// a committed create is already the answer.
	Local bool
	// DriftInterval is the time between two reads of a Ready Metric's
	// remote copy; 0 when drift checks are off or there is no remote copy.
	DriftInterval time.Duration
	// BulkDeleteBatch is the number of testcase ids per bulk-delete call;
	// 0 sends them all in one (there is no progress to checkpoint).
	BulkDeleteBatch int

	secrets client.Reader
	svc     evalapi.Service
	key     keySource
}

// Client returns the Client that acts for the object. The object's key is
// read at the first call that sends it; a key that cannot be used fails that
// call with a *KeyError before anything is sent.
func (c *Connection) Client() Client {
	key := &lazyKey{source: c.key, secrets: c.secrets}
	if c.Local {
		return standalone{key: key}
	}
	return httpClient{svc: c.svc, key: key}
}
