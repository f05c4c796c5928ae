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
	"encoding/json"
	"net/http"
	"net/url"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/eval-operator/eval-operator/internal/evalapi"
)

var _ = Describe("GET /projects", func() {
	listProjects := func(t tenant, query string) (evalapi.ProjectPage, reply) {
		GinkgoHelper()
		rep := send(request{method: http.MethodGet, path: BasePath + "/projects" + query, key: t.key})
		var page evalapi.ProjectPage
		if rep.status == http.StatusOK {
			Expect(json.Unmarshal(rep.body, &page)).To(Succeed())
		}
		return page, rep
	}
	ids := func(page evalapi.ProjectPage) []string {
		got := make([]string, 0, len(page.Data))
		for _, p := range page.Data {
			Expect(p.Name).To(BeNil(), "the cluster knows no project names")
			got = append(got, p.ID)
		}
		return got
	}

	It("lists the projects the namespace's Metrics name, page by page, and no other namespace's", func() {
		t, other := newTenant(), newTenant()
		for _, project := range []string{"proj-b", "proj-a", "proj-c", "proj-a"} {
			rep := send(request{method: http.MethodPost, path: BasePath + "/projects/" + project + "/metrics", key: t.key,
				body: variantBody("human", "int")})
			Expect(rep.status).To(Equal(http.StatusCreated), "body: %s", rep.body)
		}
		Expect(send(request{method: http.MethodPost, path: BasePath + "/projects/proj-other/metrics", key: other.key,
			body: variantBody("human", "int")}).status).To(Equal(http.StatusCreated))

		first, rep := listProjects(t, "?limit=2")
		Expect(rep.status).To(Equal(http.StatusOK), "body: %s", rep.body)
		Expect(ids(first)).To(Equal([]string{"proj-a", "proj-b"}))
		Expect(first.HasMore).To(BeTrue())
		Expect(first.Total).To(HaveValue(Equal(3)))
		Expect(first.NextCursor).NotTo(BeNil())
		rest, _ := listProjects(t, "?limit=2&cursor="+url.QueryEscape(*first.NextCursor))
		Expect(ids(rest)).To(Equal([]string{"proj-c"}))
		Expect(rest.HasMore).To(BeFalse())
		Expect(rest.NextCursor).To(BeNil())

		theirs, _ := listProjects(other, "")
		Expect(ids(theirs)).To(Equal([]string{"proj-other"}))
	})

	It("answers a bad query with a VALIDATION_ERROR and no key with a 401, as every route does", func() {
		t := newTenant()
		_, rep := listProjects(t, "?cursor=*")
		Expect(rep.status).To(Equal(http.StatusBadRequest))
		Expect(apiErrorOf(rep)["code"]).To(Equal("VALIDATION_ERROR"))
		_, rep = listProjects(t, "?limit=0")
		Expect(rep.status).To(Equal(http.StatusBadRequest))
		Expect(send(request{method: http.MethodGet, path: BasePath + "/projects"}).status).To(Equal(http.StatusUnauthorized))
	})
})
