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

package v1alpha1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	evaluationv1alpha1 "github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/validate"
	"github.com/eval-operator/eval-operator/test/framework"
)

// The suite checks the CRDs' OpenAPI and CEL validation against a real
// kube-apiserver, in the style of Gateway API's CEL tests: every case starts
// from a valid object, applies one mutation, and asserts the exact messages.
//
// Every admission case has two runners: the API server, and the offline
// admission of `kubectl eval validate` (internal/validate, from the document
// as JSON, as the plugin reads it). Both must give the wanted outcome, and
// the same one: the same reason and the same field causes (type, field and
// message, in order). The Status messages differ only in the object's name,
// which each generates from generateName, so the causes are what is compared.

var (
	ctx       context.Context
	cancel    context.CancelFunc
	env       *envtest.Environment
	k8sClient client.Client
	namespace string
	// offline is the second runner, the plugin's validator.
	offline *validate.Validator
	// exactMessages is set when the API server words field causes as the
	// cases expect (see exactMessagesFrom).
	exactMessages bool
)

// exactMessagesFrom is the oldest API server minor version whose wording of
// field causes the suite asserts exactly and compares with the offline
// runner's: v1.36, the server `make test` runs. Older servers word the same
// causes differently (`Invalid value: "object": <message>`, `Too long: may
// not be longer than 128`) and may add causes of their own ("some
// validation rules were not checked"). Against them (`make test-oldest`)
// each case asserts what does not depend on the version: the outcome, the
// reason, a cause on each wanted field, and its text past the version's
// wording (the CEL rules' own messages, the OpenAPI rule broken).
const exactMessagesFrom = 36

func TestAPI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "API validation suite")
}

var _ = BeforeSuite(func() {
	ctx, cancel = context.WithCancel(context.Background())

	var err error
	offline, err = validate.New()
	Expect(err).NotTo(HaveOccurred())
	env, err = framework.NewEnvironment()
	Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	Expect(err).NotTo(HaveOccurred())

	k8sClient, err = client.New(cfg, client.Options{Scheme: framework.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	exactMessages = serverMinor(cfg) >= exactMessagesFrom

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "api-validation-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	namespace = ns.Name
})

var _ = AfterSuite(func() {
	cancel()
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// serverMinor returns the API server's minor version, and reports the version.
func serverMinor(cfg *rest.Config) int {
	GinkgoHelper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	info, err := dc.ServerVersion()
	Expect(err).NotTo(HaveOccurred())
	v, err := version.ParseGeneric(info.GitVersion)
	Expect(err).NotTo(HaveOccurred(), "the API server reports no version: %+v", info)
	Expect(v.Major()).To(BeEquivalentTo(1), info.GitVersion)
	AddReportEntry("API server", info.GitVersion)
	return int(v.Minor())
}

// manifest builds a fresh, valid object as JSON-shaped content, the way a
// user's YAML reaches the API server. Unstructured content lets a case remove
// required fields and send numbers literally (`4` versus `4.0`), which typed
// Go structs cannot.
type manifest func() map[string]any

// mutation changes one thing in an object's content.
type mutation func(obj map[string]any)

// unchanged is the mutation of the cases that check a valid object as is.
func unchanged(map[string]any) {}

// set returns a mutation that sets the field at path to value. Values go
// through JSON (numbers kept as json.Number) so Go literals such as []string
// or json.Number("4.0") reach the API server exactly as written.
func set(value any, path ...string) mutation {
	return func(obj map[string]any) {
		Expect(unstructured.SetNestedField(obj, jsonValue(value), path...)).To(Succeed())
	}
}

// unset returns a mutation that removes the field at path.
func unset(path ...string) mutation {
	return func(obj map[string]any) { unstructured.RemoveNestedField(obj, path...) }
}

// with returns base with the mutation applied, for cases that need a
// different starting point (e.g. adding a field the base does not set).
func with(base manifest, m mutation) manifest {
	return func() map[string]any {
		obj := base()
		m(obj)
		return obj
	}
}

// jsonValue returns value as encoding/json decodes it, with numbers as json.Number.
func jsonValue(value any) any {
	raw, err := json.Marshal(value)
	Expect(err).NotTo(HaveOccurred())
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	Expect(dec.Decode(&out)).To(Succeed())
	return out
}

// object wraps content into an object with a fresh unique name in the suite's namespace.
func object(content map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: content}
	if obj.GetKind() != "ClusterEvaluationService" {
		obj.SetNamespace(namespace)
	}
	obj.SetGenerateName("cel-")
	return obj
}

func typeMeta(kind string) map[string]any {
	return map[string]any{
		"apiVersion": evaluationv1alpha1.GroupVersion.String(),
		"kind":       kind,
	}
}

// matchAdmission matches the outcome of a request: success when no errors
// are wanted, otherwise an Invalid error with one field cause per wanted
// error. A wanted error reads "<field path>: <text>": the cause must be on
// exactly that field and its message must contain the text.
func matchAdmission(wantErrs []string) types.GomegaMatcher {
	if len(wantErrs) == 0 {
		return Succeed()
	}
	matchers := make([]types.GomegaMatcher, 0, len(wantErrs)+1)
	matchers = append(matchers, WithTransform(apierrors.ReasonForError, Equal(metav1.StatusReasonInvalid)))
	for _, want := range wantErrs {
		field, text, found := strings.Cut(want, ": ")
		Expect(found).To(BeTrue(), "a wanted error reads \"<field path>: <text>\", got %q", want)
		text = versionFree(text)
		matchers = append(matchers, WithTransform(causes, ContainElement(SatisfyAll(
			HaveField("Field", field),
			HaveField("Message", ContainSubstring(text)),
		))))
	}
	return SatisfyAll(matchers...)
}

// versionFree is the part of a wanted cause's text that every supported API
// server words the same: all of it on the servers of exactMessagesFrom and
// later; on older ones, what follows "Invalid value: " (which they follow
// with the value's type, or with no value) and only the "Too long" of a
// length limit.
func versionFree(text string) string {
	switch {
	case exactMessages:
		return text
	case strings.HasPrefix(text, "Too long: "):
		return "Too long: "
	}
	return strings.TrimPrefix(text, "Invalid value: ")
}

// causes returns the field causes of an API error.
func causes(err error) []metav1.StatusCause {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	return status.Status().Details.Causes
}

// expectCreate creates base after mutate and asserts the outcome, on both runners.
func expectCreate(base manifest, mutate mutation, wantErrs []string) {
	content := base()
	mutate(content)
	serverErr := k8sClient.Create(ctx, object(content))
	Expect(serverErr).To(matchAdmission(wantErrs), "the API server")

	content = base()
	mutate(content)
	_, offlineErr := offline.Create(ctx, offlineObject(content))
	Expect(offlineErr).To(matchAdmission(wantErrs), "kubectl eval validate")
	expectSameAdmission(offlineErr, serverErr)
}

// expectUpdate creates base, then updates it after mutate and asserts the
// outcome, on both runners; offline, the created object is the old one.
func expectUpdate(base manifest, mutate mutation, wantErrs []string) {
	obj := object(base())
	Expect(k8sClient.Create(ctx, obj)).To(Succeed())
	mutate(obj.Object)
	serverErr := k8sClient.Update(ctx, obj)
	Expect(serverErr).To(matchAdmission(wantErrs), "the API server")

	old, err := offline.Create(ctx, offlineObject(base()))
	Expect(err).NotTo(HaveOccurred())
	content := base()
	mutate(content)
	_, offlineErr := offline.Update(ctx, offlineObject(content), old)
	Expect(offlineErr).To(matchAdmission(wantErrs), "kubectl eval validate")
	expectSameAdmission(offlineErr, serverErr)
}

// offlineObject is content as the plugin reads it from a file.
func offlineObject(content map[string]any) *unstructured.Unstructured {
	data, err := json.Marshal(object(content).Object)
	Expect(err).NotTo(HaveOccurred())
	obj, err := validate.Decode(data)
	Expect(err).NotTo(HaveOccurred())
	return obj
}

// expectSameAdmission asserts that the offline runner answered as the API
// server did: the same reason, and the same causes where the server words
// them as the runner's validation code does (see exactMessagesFrom).
func expectSameAdmission(offlineErr, serverErr error) {
	Expect(apierrors.ReasonForError(offlineErr)).To(Equal(apierrors.ReasonForError(serverErr)))
	if exactMessages {
		Expect(causes(offlineErr)).To(Equal(causes(serverErr)))
	}
}

// Messages of the OpenAPI rules, in the "<field path>: <text>" form
// matchAdmission takes; field is relative to spec.

func required(field string) string { return "spec." + field + ": Required value" }

func tooLong(field, limit string) string {
	return "spec." + field + ": Too long: may not be more than " + limit + " bytes"
}

func empty(field string) string {
	return `spec.` + field + `: Invalid value: "": spec.` + field + ` in body should be at least 1 chars long`
}

func mismatch(field, value, pattern string) string {
	return `spec.` + field + `: Invalid value: "` + value + `": spec.` + field + ` in body should match '` + pattern + `'`
}

// Patterns shared by every kind.
const (
	idPattern        = `^[A-Za-z0-9][A-Za-z0-9._:-]*$`
	secretPattern    = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	secretKeyPattern = `^[-._a-zA-Z0-9]+$`
)
