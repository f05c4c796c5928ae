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

package main

import (
	"slices"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://eval.example.com/api/v2", "https://eval.example.com/api/v2"},
		{"https://user:s3cret@eval.example.com/api/v2", "https://redacted@eval.example.com/api/v2"},
		{"https://s3cret@eval.example.com/api/v2", "https://redacted@eval.example.com/api/v2"},
		{"https://eval.example.com/api/v2?token=s3cret&x=1", "https://eval.example.com/api/v2?token=redacted&x=redacted"},
		{"https://eval.example.com/api/v2#s3cret", "https://eval.example.com/api/v2"},
		{"https://eval.example.com/%zz?token=s3cret", "[unparsable URL redacted]"},
	}
	for _, tc := range cases {
		if got := redactURL(tc.in); got != tc.want {
			t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAPIURLRules(t *testing.T) {
	cases := []struct {
		args []string
		want string // "" for valid
	}{
		{[]string{"--api-url=https://eval.example.com/api/v2"}, ""},
		{[]string{"--api-url=http://127.0.0.1:8080/api/v2"}, ""},
		{[]string{"--api-url=http://[::1]:8080/api/v2"}, ""},
		{[]string{"--api-url=http://localhost:8080/api/v2"}, ""},
		{[]string{"--api-url=http://eval.example.com/api/v2"}, "use https, or pass --allow-insecure-api-url"},
		{[]string{"--api-url=http://10.0.0.7/api/v2"}, "use https, or pass --allow-insecure-api-url"},
		{[]string{"--api-url=http://eval.example.com/api/v2", "--allow-insecure-api-url"}, ""},
		{[]string{"--api-url=https://u:s3cret@eval.example.com/api/v2?key=s3cret"}, "must not have a query"},
		{[]string{"--api-url=ftp://u:s3cret@eval.example.com/api/v2"}, "want an http or https URL"},
		{[]string{"--api-url=http://u:s3cret@eval.example.com/api/v2"}, "--allow-insecure-api-url"},
	}
	for _, tc := range cases {
		_, err := parse(tc.args, nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: unexpected error %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("%v: the error holds a credential: %v", tc.args, err)
		}
	}
}

func TestWatchNamespacesAndSelector(t *testing.T) {
	c, err := parse([]string{"--watch-namespaces=team-a, team-b,,", "--rest-namespace-selector=eval-operator.dev/rest=enabled"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.watchNamespaces, []string{"team-a", "team-b"}) {
		t.Errorf("watchNamespaces = %q", c.watchNamespaces)
	}
	c, err = parse(nil, map[string]string{"EVAL_OPERATOR_WATCH_NAMESPACES": "team-c"})
	if err != nil || !slices.Equal(c.watchNamespaces, []string{"team-c"}) {
		t.Errorf("from the environment: %q, %v", c.watchNamespaces, err)
	}
	if _, err := parse([]string{"--rest-namespace-selector=a in (b"}, nil); err == nil ||
		!strings.Contains(err.Error(), "--rest-namespace-selector") {
		t.Errorf("a bad selector: %v", err)
	}
}
