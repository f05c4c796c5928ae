package testbed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// KeySecret is the name of the Secret NewNamespace creates.
const KeySecret = "api-key"

var (
	evalTypes   = []v1alpha1.EvalType{v1alpha1.EvalTypeAI, v1alpha1.EvalTypeHuman, v1alpha1.EvalTypeHeuristic}
	outputTypes = []v1alpha1.OutputType{v1alpha1.OutputTypeInt, v1alpha1.OutputTypeFloat, v1alpha1.OutputTypeBoolean}
)

// Variants is the number of Metric variants NewMetric cycles through.
const Variants = 9

// NewMetric returns Metric name in namespace, of variant i mod Variants,
// taking its key from KeySecret. Its spec.name is name as well, so the
// upstream's record of a create tells which Metric it was for.
func NewMetric(namespace, name string, i int) *v1alpha1.Metric {
	v := i % Variants
	spec := v1alpha1.MetricSpec{
		ProjectID:       "proj-testbed",
		Name:            name,
		EvalType:        evalTypes[v/len(outputTypes)],
		OutputType:      outputTypes[v%len(outputTypes)],
		APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: KeySecret},
	}
	if spec.EvalType == v1alpha1.EvalTypeAI {
		spec.PromptTemplate = ptr.To("Rate {{outputs.response}} from 1 to 5")
	}
	return &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: spec}
}

// NewNamespace creates a namespace named prefix plus a random suffix and, in
// it, KeySecret holding key, labelled so the REST server accepts it too.
func NewNamespace(ctx context.Context, c client.Client, prefix, key string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + RandomHex(3)}}
	if err := c.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating namespace: %w", err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns.Name, Name: KeySecret,
			Labels: map[string]string{v1alpha1.APIKeyLabel: "true"},
		},
		Data: map[string][]byte{v1alpha1.DefaultAPIKeySecretKey: []byte(key)},
	}
	if err := c.Create(ctx, secret); err != nil {
		return "", fmt.Errorf("creating the key Secret: %w", err)
	}
	return ns.Name, nil
}

// RandomHex returns n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails since Go 1.24
	return hex.EncodeToString(b)
}

// NewKey returns a fresh test API key.
func NewKey() string { return "ak_testbed_" + RandomHex(12) }

// Ready returns a Metric's Ready condition status and reason, or "" and "".
func Ready(m *v1alpha1.Metric) (metav1.ConditionStatus, string) {
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady)
	if c == nil {
		return "", ""
	}
	return c.Status, c.Reason
}

// Parallel calls op for i from 0 to n-1 on workers goroutines. It returns the
// time all calls took and each call's latency, indexed by i; on failure, the
// first error, once the calls in flight have returned.
func Parallel(ctx context.Context, n, workers int, op func(ctx context.Context, i int) error) (time.Duration, []time.Duration, error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next      atomic.Int64
		wg        sync.WaitGroup
		once      sync.Once
		first     error
		latencies = make([]time.Duration, n)
	)
	start := time.Now()
	for range min(workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && runCtx.Err() == nil; i = int(next.Add(1) - 1) {
				t0 := time.Now()
				if err := op(runCtx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
				latencies[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err() // the caller gave up: some calls never ran
	}
	return time.Since(start), latencies, first
}
