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

// Package argocd runs the Argo CD health checks this project ships
// (config/argocd) the way Argo CD does: the script in gopher-lua, Argo CD's
// own Lua interpreter, with the object as the global obj.
package argocd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"
)

// Argo CD's health statuses.
const (
	Healthy     = "Healthy"
	Progressing = "Progressing"
	Degraded    = "Degraded"
	Suspended   = "Suspended"
)

// Group is the directory of this API group under resource_customizations.
const Group = "evaluation.eval-operator.dev"

// Kinds are the kinds that have a health check.
var Kinds = []string{"Metric", "Testset", "EvaluationRun", "TestsetDeletion", "TestcaseDeletion"}

// HealthStatus is what a health check returns.
type HealthStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Dir is the resource_customizations directory of kind.
func Dir(kind string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "config", "argocd", "resource_customizations", Group, kind)
}

// HealthOf runs kind's health.lua on obj.
func HealthOf(kind string, obj map[string]any) (HealthStatus, error) {
	script, err := os.ReadFile(filepath.Join(Dir(kind), "health.lua"))
	if err != nil {
		return HealthStatus{}, fmt.Errorf("reading the health check of %s: %w", kind, err)
	}
	return Run(string(script), obj)
}

// Run evaluates a health script on obj: in a state with only the libraries
// Argo CD opens, with a deadline as Argo CD sets one.
func Run(script string, obj map[string]any) (HealthStatus, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for name, open := range map[string]lua.LGFunction{
		lua.BaseLibName: lua.OpenBase, lua.TabLibName: lua.OpenTable,
		lua.StringLibName: lua.OpenString, lua.MathLibName: lua.OpenMath,
	} {
		l.Push(l.NewFunction(open))
		l.Push(lua.LString(name))
		l.Call(1, 0)
	}
	l.SetGlobal("obj", toLua(l, obj))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)

	if err := l.DoString(script); err != nil {
		return HealthStatus{}, fmt.Errorf("running the health check: %w", err)
	}
	table, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return HealthStatus{}, errors.New("the health check did not return a table")
	}
	return HealthStatus{
		Status:  lua.LVAsString(table.RawGetString("status")),
		Message: lua.LVAsString(table.RawGetString("message")),
	}, nil
}

// toLua converts a JSON-shaped value the way Argo CD hands objects to Lua:
// objects and arrays become tables (arrays from index 1), numbers LNumber.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(l, e))
		}
		return t
	case []any:
		t := l.NewTable()
		for i, e := range v {
			t.RawSetInt(i+1, toLua(l, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	default:
		return lua.LNil
	}
}

// TestCase is one case of Argo CD's health_test.yaml.
type TestCase struct {
	HealthStatus HealthStatus `json:"healthStatus"`
	InputPath    string       `json:"inputPath"`
}

// TestCases reads kind's health_test.yaml.
func TestCases(kind string) ([]TestCase, error) {
	data, err := os.ReadFile(filepath.Join(Dir(kind), "health_test.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading the health tests of %s: %w", kind, err)
	}
	var file struct {
		Tests []TestCase `json:"tests"`
	}
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		return nil, fmt.Errorf("decoding the health tests of %s: %w", kind, err)
	}
	return file.Tests, nil
}

// Input reads a test case's object, relative to kind's directory.
func Input(kind, path string) (map[string]any, error) {
	data, err := os.ReadFile(filepath.Join(Dir(kind), path))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return obj, nil
}
