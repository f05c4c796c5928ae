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

package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
)

// KeySecretName is the name of the Secret NewNamespace creates and NewMetric
// refers to.
const KeySecretName = "api-key"

var (
	evalTypes   = []v1alpha1.EvalType{v1alpha1.EvalTypeAI, v1alpha1.EvalTypeHuman, v1alpha1.EvalTypeHeuristic}
	outputTypes = []v1alpha1.OutputType{v1alpha1.OutputTypeInt, v1alpha1.OutputTypeFloat, v1alpha1.OutputTypeBoolean}
)

// Variants is the number of Metric variants NewMetric cycles through.
const Variants = 9

// NewMetric returns Metric name in namespace, of variant i mod Variants,
// taking its key from KeySecretName. Its spec.name is name as well, so the
// upstream's record of a create tells which Metric it was for.
func NewMetric(namespace, name string, i int) *v1alpha1.Metric {
	v := i % Variants
	spec := v1alpha1.MetricSpec{
		ProjectID:       "proj-testbed",
		Name:            v1alpha1.LineText(name),
		EvalType:        evalTypes[v/len(outputTypes)],
		OutputType:      outputTypes[v%len(outputTypes)],
		APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: KeySecretName},
	}
	if spec.EvalType == v1alpha1.EvalTypeAI {
		spec.PromptTemplate = ptr.To[v1alpha1.Text]("Rate {{outputs.response}} from 1 to 5")
	}
	return &v1alpha1.Metric{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: spec}
}

// NewNamespace creates a namespace named prefix plus a random suffix and, in
// it, Secret KeySecretName holding key, labelled so the REST server accepts
// it too.
func NewNamespace(ctx context.Context, c client.Client, prefix, key string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + RandomHex(4)}}
	if err := c.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating namespace: %w", err)
	}
	if err := c.Create(ctx, KeySecret(ns.Name, KeySecretName, key)); err != nil {
		return "", fmt.Errorf("creating the key Secret: %w", err)
	}
	return ns.Name, nil
}

// KeySecret returns Secret namespace/name holding key under the default data
// key, labelled so the REST server accepts the key for the namespace.
func KeySecret(namespace, name, key string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name,
			Labels: map[string]string{v1alpha1.APIKeyLabel: "true"},
		},
		Data: map[string][]byte{v1alpha1.DefaultAPIKeySecretKey: []byte(key)},
	}
}

// RandomHex returns n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails since Go 1.24
	return hex.EncodeToString(b)
}

// Ready returns a Metric's Ready condition status and reason, or "" and "".
func Ready(m *v1alpha1.Metric) (metav1.ConditionStatus, string) {
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.ConditionReady)
	if c == nil {
		return "", ""
	}
	return c.Status, c.Reason
}
