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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
)

// The clients of each kind are given the object, as crossplane-runtime's
// typed external clients receive the managed resource: what differs between
// a service that keeps its own copies and a standalone one, where the
// cluster is the record, is answered here, so no reconciler or handler
// asks which one it has.

// MetricClient acts on one Metric's remote copy.
type MetricClient interface {
	MetricCalls
	// NeedsFinalizer reports whether deleting the Metric must delete its
	// remote copy first: by its policies, where the service keeps one.
	NeedsFinalizer() bool
}

// TestsetClient acts on one Testset's remote copy and its testcases.
type TestsetClient interface {
	TestsetCalls
	DeletionCalls
	// NeedsFinalizer reports whether deleting the Testset must delete its
	// remote copy first: by its policies, where the service keeps one.
	NeedsFinalizer() bool
	// KeptInCluster reports whether the cluster is the record of the
	// Testset's testcases, cases of them with digest; if so it records
	// them in the Testset's status and says so in message, and nothing is
	// sent.
	KeptInCluster(cases int, digest string) (message string, kept bool)
}

type metricClient struct {
	Client
	finalizes bool
}

func (c metricClient) NeedsFinalizer() bool { return c.finalizes }

// Metric returns the client that acts for m in one reconcile; see Client.
func (c *Connection) Metric(m *v1alpha1.Metric) MetricClient {
	return metricClient{Client: c.Client(), finalizes: !c.local && m.Spec.DeletesRemote()}
}

type testsetClient struct {
	Client
	t *v1alpha1.Testset
	// local is true where the cluster is the record of the testcases.
	local bool
}

func (c testsetClient) NeedsFinalizer() bool { return !c.local && c.t.Spec.DeletesRemote() }

func (c testsetClient) KeptInCluster(cases int, digest string) (string, bool) {
	if !c.local {
		return "", false
	}
	c.t.Status.Testcases, c.t.Status.Digest = clamp32(cases), digest
	return "the cluster is their record (standalone service)", true
}

// Testset returns the client that acts for t in one reconcile; see Client.
func (c *Connection) Testset(t *v1alpha1.Testset) TestsetClient {
	return testsetClient{Client: c.Client(), t: t, local: c.local}
}

// Deletion returns the client that acts for a TestsetDeletion or
// TestcaseDeletion in one reconcile: a standalone service's finds nothing
// held (NothingHeld).
func (c *Connection) Deletion() DeletionCalls { return c.Client() }

// Run returns the client that acts for e's run in one reconcile.
func (c *Connection) Run(e *v1alpha1.EvaluationRun) RunClient {
	if c.local {
		return standaloneRun{c: c.Client().(standalone), e: e}
	}
	return serviceRun{c: c.Client().(*httpClient), id: e.RecordedID()}
}

// ClusterRun is the RunClient of e where the cluster keeps the run (a
// standalone service): it answers from e's status alone. The REST server,
// which counts what is written to such a run there, reads it so.
func ClusterRun(e *v1alpha1.EvaluationRun) RunClient {
	return standaloneRun{c: standalone{key: &lazyKey{}, confirm: &confirmation{}}, e: e}
}

// CarriedOutByCommit reports whether committing obj to the cluster carries
// out the request obj stands for: where the service keeps no copies (a
// standalone service), a deletion or a run needs nothing more, and a new
// Metric, Testset or System is first given its id and service annotations here, as
// its reconciler would record them. False, and obj unchanged, where the
// service must be called.
func (c *Connection) CarriedOutByCommit(obj client.Object) bool {
	if !c.local {
		return false
	}
	switch o := obj.(type) {
	case *v1alpha1.Metric:
		assignID(obj, v1alpha1.MetricIDAnnotation, NewMetricID())
	case *v1alpha1.Testset:
		assignID(obj, v1alpha1.TestsetIDAnnotation, NewTestsetID())
	case *v1alpha1.System:
		if o.RecordedID() == "" {
			assignID(obj, v1alpha1.SystemIDAnnotation, evalapi.NewUUID())
		}
	}
	return true
}

// assignID records id in obj's annotation idAnnotation, where its
// reconciler reads it, with the standalone service it belongs to.
func assignID(obj client.Object, idAnnotation, id string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[idAnnotation] = id
	annotations[v1alpha1.ServiceAnnotation] = Standalone
	obj.SetAnnotations(annotations)
}
