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

package testset

import (
	"errors"
	"strings"
	"testing"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"

	"github.com/eval-operator/eval-operator/internal/testcases"
)

func TestRefuseTiesTheURLToItsSource(t *testing.T) {
	f := &Artifacts{Hosts: []string{"source-controller.flux-system.svc", "127.0.0.1:8080", "*.example.com:9000"}}
	digest := "sha256:" + strings.Repeat("a", 64)
	for url, want := range map[string]string{
		"http://source-controller.flux-system.svc/gitrepository/team-a/src/abc.tar.gz":      "",
		"http://source-controller.flux-system.svc:80/gitrepository/team-a/src/abc.tar.gz":   "",
		"http://127.0.0.1:8080/gitrepository/team-a/src/abc.tar.gz":                         "",
		"https://a.example.com:9000/gitrepository/team-a/src/abc.tar.gz":                    "",
		"http://source-controller.flux-system.svc/gitrepository/team-b/secret/abc.tar.gz":   "path is not /gitrepository/team-a/src/<file>",
		"http://source-controller.flux-system.svc/gitrepository/team-a/src/../x/a.tar.gz":   "path is not",
		"http://source-controller.flux-system.svc/gitrepository/team-a/src/x%2Fy.tar.gz":    "not a plain",
		"http://source-controller.flux-system.svc/gitrepository/team-a/src/":                "path is not",
		"http://source-controller.flux-system.svc:8080/gitrepository/team-a/src/abc.tar.gz": "--artifact-hosts",
		"http://127.0.0.1/gitrepository/team-a/src/abc.tar.gz":                              "--artifact-hosts",
		"http://127.0.0.2:8080/gitrepository/team-a/src/abc.tar.gz":                         "--artifact-hosts",
		"http://user:pw@127.0.0.1:8080/gitrepository/team-a/src/abc.tar.gz":                 "not a plain",
		"http://127.0.0.1:8080/gitrepository/team-a/src/abc.tar.gz?x=1":                     "not a plain",
		"file:///gitrepository/team-a/src/abc.tar.gz":                                       "not a plain",
	} {
		got := f.refuse(&fluxmeta.Artifact{URL: url, Digest: digest}, "GitRepository", "team-a", "src")
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
	ok := "http://127.0.0.1:8080/gitrepository/team-a/src/abc.tar.gz"
	if got := f.refuse(&fluxmeta.Artifact{URL: ok, Digest: "sha256:00"}, "GitRepository", "team-a", "src"); !strings.Contains(got, "digest") {
		t.Errorf("a short digest: %q", got)
	}
	if got := (&Artifacts{}).refuse(&fluxmeta.Artifact{URL: ok, Digest: digest}, "GitRepository", "team-a", "src"); got != "" {
		t.Errorf("no hosts allow any: %q", got)
	}
}

func TestSetCacheHoldsAtMostItsCapacity(t *testing.T) {
	set := func(n int) testcases.Set {
		s := testcases.Set{}
		for range n {
			s.Cases = append(s.Cases, testcases.Case{Key: "k", Data: make([]byte, 100)})
		}
		return s
	}
	c := newSetCache(900)
	c.put("a", set(3), nil) // 3*(1+100+96)+1 = 592
	c.put("b", set(2), nil) // 395: a is dropped
	if _, ok := c.get("a"); ok {
		t.Error("a must have gone: the cache is over its capacity")
	}
	if got, ok := c.get("b"); !ok || len(got.set.Cases) != 2 {
		t.Error("b must be held")
	}
	c.put("big", set(6), nil)
	if _, ok := c.get("big"); ok {
		t.Error("a set over the capacity is not held")
	}
	c.put("bad", testcases.Set{}, testcases.OverLimit("too big"))
	c.put("flaky", testcases.Set{}, errors.New("connection reset"))
	if got, ok := c.get("bad"); !ok || got.err == nil {
		t.Error("bad data is held")
	}
	if _, ok := c.get("flaky"); ok {
		t.Error("an error that is not the content's is not held")
	}
}

func TestSetCacheAliasCostsOnlyItsNames(t *testing.T) {
	c := newSetCache(900)
	set := testcases.Set{Cases: make([]testcases.Case, 3)}
	for i := range set.Cases {
		set.Cases[i] = testcases.Case{Key: "k", Data: make([]byte, 100)}
	}
	c.put("content", set, nil) // 599 bytes: a second copy would not fit
	c.alias("version", "content")
	if got, ok := c.get("version"); !ok || len(got.set.Cases) != 3 {
		t.Fatal("the alias must name the held set")
	}
	if _, ok := c.get("content"); !ok {
		t.Fatal("the set must still be held: an alias costs its names, not the set")
	}
	c.put("other", set, nil) // the content goes; the alias names nothing
	if _, ok := c.get("version"); ok {
		t.Error("an alias of a dropped set must miss")
	}
}

func TestFetchLineSharesTheWorkers(t *testing.T) {
	l := newFetchLine(8) // 2 a namespace, 4 in all
	leaveA1, _ := l.enter("a", "1")
	if leave, why := l.enter("b", "1"); leave != nil || !strings.Contains(why, "another Testset") {
		t.Errorf("one fetch per artifact: %q", why)
	}
	leaveA2, _ := l.enter("a", "2")
	if leave, why := l.enter("a", "3"); leave != nil || !strings.Contains(why, "this namespace") {
		t.Errorf("two per namespace: %q", why)
	}
	leaveB, _ := l.enter("b", "4")
	leaveC, _ := l.enter("c", "5")
	if leave, why := l.enter("d", "6"); leave != nil || !strings.Contains(why, "as many artifacts at once") {
		t.Errorf("four in all: %q", why)
	}
	leaveA1()
	if leave, _ := l.enter("a", "3"); leave == nil {
		t.Error("a place given back is free again")
	}
	leaveA2()
	leaveB()
	leaveC()
}
