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

package manifests_test

import (
	"bytes"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/convert"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/internal/manifests"
	"github.com/eval-operator/eval-operator/test/framework"
)

// remoteMetrics creates n Metrics of every variant in project on upstream
// and returns them as the service holds them.
func remoteMetrics(ctx SpecContext, upstream *evalapitest.Server, project string, n int) []evalapi.Metric {
	GinkgoHelper()
	c, err := evalapi.NewClient(evalapi.Options{BaseURL: upstream.URL()})
	Expect(err).NotTo(HaveOccurred())
	out := make([]evalapi.Metric, 0, n)
	for i := range n {
		spec := framework.NewMetric("", fmt.Sprintf("Metric %d", i), i).Spec
		if i%3 == 0 {
			spec.Description = ptr.To[v1alpha1.Text]("from the web UI")
			spec.Guidelines = ptr.To[v1alpha1.Text]("be fair")
		}
		m, err := c.CreateMetric(ctx, evalapitest.DefaultKey, project, convert.RequestFor(&spec))
		Expect(err).NotTo(HaveOccurred())
		out = append(out, m)
	}
	return out
}

var _ = Describe("ListAll", func() {
	It("follows nextCursor to the last page", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		want := remoteMetrics(ctx, upstream, "proj-a", 230)
		remoteMetrics(ctx, upstream, "proj-b", 2)
		c, err := evalapi.NewClient(evalapi.Options{BaseURL: upstream.URL()})
		Expect(err).NotTo(HaveOccurred())

		got, err := manifests.ListAll(ctx, c, evalapitest.DefaultKey, "proj-a")
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(ConsistOf(want))
		Expect(upstream.Calls(evalapitest.OpListMetrics)).To(Equal(3), "pages of 100")
	})

	It("returns the service's error, without the key", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		c, err := evalapi.NewClient(evalapi.Options{BaseURL: upstream.URL()})
		Expect(err).NotTo(HaveOccurred())

		_, err = manifests.ListAll(ctx, c, "ak_not_the_right_one", "proj-a")
		Expect(evalapi.KindOf(err)).To(Equal(evalapi.KindUnauthorized))
		Expect(err.Error()).NotTo(ContainSubstring("ak_not_the_right_one"))
	})
})

var _ = Describe("Imported", func() {
	It("asks for exactly what the service holds, for every variant, and adopts it", func(ctx SpecContext) {
		upstream := evalapitest.New()
		DeferCleanup(upstream.Close)
		found := remoteMetrics(ctx, upstream, "proj-a", 2*framework.Variants)

		ms, err := manifests.Imported(found, manifests.ImportOptions{ProjectID: "proj-a", Namespace: "team", Secret: "eval-key"})
		Expect(err).NotTo(HaveOccurred())
		Expect(ms).To(HaveLen(len(found)))
		for i, m := range ms {
			Expect(m.Annotations).To(HaveKeyWithValue(v1alpha1.MetricIDAnnotation, found[i].ID))
			Expect(m.Namespace).To(Equal("team"))
			Expect(m.Spec.ProjectID).To(BeEquivalentTo("proj-a"))
			Expect(m.Spec.APIKeySecretRef).To(Equal(&v1alpha1.SecretKeySelector{Name: "eval-key"}))
			Expect(convert.Matches(found[i], &m.Spec)).To(BeTrue(), "Metric %s", found[i].Name)
		}
	})

	It("leaves the namespace, the key and empty guidelines out when not given", func() {
		remote := []evalapi.Metric{{ID: "m-1", Name: "Tone", EvalType: "human", OutputType: "boolean", Guidelines: ""}}

		ms, err := manifests.Imported(remote, manifests.ImportOptions{ProjectID: "p"})
		Expect(err).NotTo(HaveOccurred())
		Expect(ms[0].Namespace).To(BeEmpty())
		Expect(ms[0].Spec.APIKeySecretRef).To(BeNil())
		Expect(ms[0].Spec.Guidelines).To(BeNil())
	})

	DescribeTable("names objects after the remote name, as DNS-1123 labels",
		func(remoteName, want string) {
			ms, err := manifests.Imported([]evalapi.Metric{{ID: "m-1", Name: remoteName}}, manifests.ImportOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(ms[0].Name).To(Equal(want))
			Expect(validation.IsDNS1123Label(ms[0].Name)).To(BeEmpty())
		},
		Entry("plain", "helpfulness", "helpfulness"),
		Entry("spaces and case", "Answer Relevance (v2)", "answer-relevance-v2"),
		Entry("no letters or digits", "???", "metric"),
		Entry("unicode", "Qualité générale", "qualite-generale"),
		Entry("too long", "a-"+string(bytes.Repeat([]byte("b"), 100)), "a-"+string(bytes.Repeat([]byte("b"), 61))),
	)

	It("tells namesakes apart by their ids, whatever the listing order", func() {
		a := evalapi.Metric{ID: "m-1", Name: "Tone"}
		b := evalapi.Metric{ID: "m-2", Name: "tone"}
		c := evalapi.Metric{ID: "m-3", Name: "Other"}

		one, err := manifests.Imported([]evalapi.Metric{a, b, c}, manifests.ImportOptions{})
		Expect(err).NotTo(HaveOccurred())
		two, err := manifests.Imported([]evalapi.Metric{c, b, a}, manifests.ImportOptions{})
		Expect(err).NotTo(HaveOccurred())

		Expect(one[0].Name).To(MatchRegexp(`^tone-[0-9a-f]{8}$`))
		Expect(one[1].Name).To(MatchRegexp(`^tone-[0-9a-f]{8}$`))
		Expect(one[0].Name).NotTo(Equal(one[1].Name))
		Expect(one[2].Name).To(Equal("other"))
		Expect([]string{two[2].Name, two[1].Name, two[0].Name}).To(Equal([]string{one[0].Name, one[1].Name, one[2].Name}))
	})

	It("refuses a listing that holds a Metric twice", func() {
		m := evalapi.Metric{ID: "m-1", Name: "Tone"}
		_, err := manifests.Imported([]evalapi.Metric{m, m}, manifests.ImportOptions{})
		Expect(err).To(MatchError(ContainSubstring("twice")))
	})
})

var _ = Describe("WriteStream", func() {
	It("writes manifests without status or server fields, one document each", func() {
		m := framework.NewMetric("team", "tone", 0)
		m.UID, m.ResourceVersion, m.Generation = "uid", "42", 3
		m.Status.ID = "m-1"
		var buf bytes.Buffer

		Expect(manifests.WriteStream(&buf, []v1alpha1.Metric{*m, *m})).To(Succeed())

		docs := bytes.Split(buf.Bytes(), []byte("---\n"))
		Expect(docs).To(HaveLen(2))
		var got map[string]any
		Expect(yaml.Unmarshal(docs[1], &got)).To(Succeed())
		Expect(got).To(HaveKeyWithValue("apiVersion", "evaluation.eval-operator.dev/v1alpha1"))
		Expect(got).To(HaveKeyWithValue("kind", "Metric"))
		Expect(got).NotTo(HaveKey("status"))
		Expect(got["metadata"]).To(Equal(map[string]any{"name": "tone", "namespace": "team"}))
	})
})
