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

package evalrun

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/remote"
)

func TestJobName(t *testing.T) {
	long := strings.Repeat("a", 60) + "-release-42"
	for _, tc := range []struct{ run, want string }{
		{"release-42", "release-42"},
		{strings.Repeat("b", 63), strings.Repeat("b", 63)},
	} {
		if got := jobName(tc.run); got != tc.want {
			t.Errorf("jobName(%q) = %q, want %q", tc.run, got, tc.want)
		}
	}
	got := jobName(long)
	if errs := validation.IsValidLabelValue(got); len(errs) > 0 || !strings.HasPrefix(got, long[:52]) {
		t.Errorf("jobName(%q) = %q: %v", long, got, errs)
	}
	if other := jobName(long + "x"); other == got {
		t.Errorf("two long names share the Job name %q", got)
	}
}

// A standalone run's executor calls the REST server: it is started only
// when the operator knows that server's URL as Pods reach it.
func TestEnvOfStandalone(t *testing.T) {
	run := &v1alpha1.EvaluationRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "nightly"},
		Spec: v1alpha1.EvaluationRunSpec{APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: "key"}}}
	for _, tc := range []struct {
		url, wantReason string
	}{
		{"", v1alpha1.ReasonExecutorURLUnavailable},
		{"http://eval-operator-api.ops.svc:8082/api/v2", ""},
	} {
		conn, err := remote.NewConnector(nil, remote.Defaults{StandaloneURL: tc.url}).Connect(context.Background(), run)
		if err != nil {
			t.Fatal(err)
		}
		env, o := envOf(&scope{Obj: run, Conn: conn}, "run_1", "tst_1")
		switch {
		case tc.wantReason != "" && (o == nil || o.Reason != tc.wantReason):
			t.Errorf("StandaloneURL %q: outcome %+v, want reason %s", tc.url, o, tc.wantReason)
		case tc.wantReason == "" && (o != nil || env.url != tc.url || env.secret != "key"):
			t.Errorf("StandaloneURL %q: env %+v, outcome %+v", tc.url, env, o)
		}
	}
}
