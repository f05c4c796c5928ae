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

package testcases_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/eval-operator/eval-operator/internal/testcases"
)

func TestDiffCreatesUpdatesAndDeletesByKey(t *testing.T) {
	set, err := testcases.FromLines(strings.NewReader(
		`{"id":"same","q":1}`+"\n"+`{"id":"changed","q":2}`+"\n"+`{"id":"new","q":3}`), "id")
	if err != nil {
		t.Fatal(err)
	}
	r := testcases.NewRemote("id")
	r.Add("t1", []byte(`{ "q": 1, "id": "same" }`)) // respaced and reordered: the same data
	r.Add("t2", []byte(`{"id":"changed","q":20}`))
	r.Add("t3", []byte(`{"id":"gone","q":4}`))
	r.Add("t4", []byte(`{"q":5}`))             // no key: nothing in the source can be it
	r.Add("t5", []byte(`{"id":"same","q":1}`)) // a second "same"
	p := set.Diff(r)
	if len(p.Create) != 1 || string(p.Create[0]) != `{"id":"new","q":3}` {
		t.Errorf("create %s", p.Create)
	}
	if len(p.Update) != 1 || p.Update[0].ID != "t2" || string(p.Update[0].Data) != `{"id":"changed","q":2}` {
		t.Errorf("update %+v", p.Update)
	}
	slices.Sort(p.Delete)
	if !slices.Equal(p.Delete, []string{"t3", "t4", "t5"}) {
		t.Errorf("delete %v, want t3 t4 t5", p.Delete)
	}
	if got := p.String(); got != "1 to create, 1 to update, 3 to delete" {
		t.Errorf("String() = %q", got)
	}
	if r.Len() != 5 {
		t.Errorf("Len() = %d, want 5", r.Len())
	}
}

func TestDiffOfTheSameSetIsEmpty(t *testing.T) {
	set, _ := testcases.FromItems([][]byte{[]byte(`{"k":1,"v":"x"}`), []byte(`{"k":2}`)}, "k")
	r := testcases.NewRemote("k")
	r.Add("a", []byte(`{"v":"x","k":1}`))
	r.Add("b", []byte(`{"k":2}`))
	if p := set.Diff(r); !p.Empty() {
		t.Errorf("plan %s, want nothing", p)
	}
}

func TestDoneSaysWhatChanged(t *testing.T) {
	old, err := testcases.FromLines(strings.NewReader(`{"id":"a","q":1}
{"id":"b","q":2}
{"id":"c","q":3}
`), "id")
	if err != nil {
		t.Fatal(err)
	}
	edited, err := testcases.FromLines(strings.NewReader(`{"id":"a","q":10}
{"id":"b","q":20}
`), "id")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := edited.Diff(testcases.IndexOf(old, "id")).Done(), "2 updated, 1 removed"; got != want {
		t.Errorf("Done() = %q, want %q", got, want)
	}
	if got, want := old.Diff(testcases.IndexOf(old, "id")).Done(), "no testcase changed"; got != want {
		t.Errorf("Done() of an unchanged set = %q, want %q", got, want)
	}
	if got, want := testcases.FingerprintsOf(old).Changes(edited), "2 updated, 1 removed"; got != want {
		t.Errorf("Changes() = %q, want %q", got, want)
	}
	if got, want := testcases.FingerprintsOf(edited).Changes(old), "1 added, 2 updated"; got != want {
		t.Errorf("Changes() back = %q, want %q", got, want)
	}
}
