//go:build bench

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

package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/evalapi"
	"github.com/eval-operator/eval-operator/internal/evalapi/evalapitest"
	"github.com/eval-operator/eval-operator/test/framework"
)

var (
	flagTestsetN     = flag.Int("testset-n", 10000, "testcases of the Testset run, from a Flux artifact; 0 skips it")
	flagTestsetBytes = flag.Int("testset-bytes", 1024, "bytes of each testcase of the Testset run")
)

// testsetRun measures one Testset of -testset-n testcases synced from a
// Flux artifact by the manager binary: the first sync against the floor of
// the same creates sent straight to the test server one at a time (the
// operator's in-flight cap for one object), the manager's peak RSS above its
// idle figure, then the calls of a one-testcase edit and of an unchanged
// resync.
func (b *bench) testsetRun(ctx context.Context, tab *table, n int) error {
	if err := b.installFluxSources(); err != nil {
		return err
	}
	artifacts := framework.NewArtifactServer()
	defer artifacts.Close()
	ns, err := b.newNamespace(ctx, "bench-testset")
	if err != nil {
		return err
	}
	lines := testcaseLines(n, *flagTestsetBytes)

	floor, err := b.testcaseFloor(ctx, lines)
	if err != nil {
		return err
	}

	bin, err := framework.BuildManager(ctx, b.dir)
	if err != nil {
		return err
	}
	mgr, err := framework.StartMetered(framework.MeteredOptions{Binary: bin, Kubeconfig: b.cp.Kubeconfig, Log: os.Stderr,
		Args: []string{"--api-url=" + b.server.URL(), "--artifact-hosts=" + artifacts.Listener.Addr().String(),
			"--api-qps=1000000", "--api-burst=1000000", "--zap-log-level=error"}})
	if err != nil {
		return err
	}
	defer func() { _ = mgr.Terminate() }()
	idle, err := idleMemory(ctx, mgr)
	if err != nil {
		return err
	}

	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evals"},
		Spec: sourcev1.GitRepositorySpec{URL: "https://git.example.com/evals.git", Interval: metav1.Duration{Duration: time.Hour}}}
	if err := b.k8s.Create(ctx, repo); err != nil {
		return err
	}
	rev1, err := artifacts.Publish(repo.Namespace, repo.Name, "rev-1", map[string]string{"evals/cases.jsonl": strings.Join(lines, "")})
	if err != nil {
		return err
	}
	if err := b.setArtifact(ctx, repo, rev1); err != nil {
		return err
	}
	ts := &v1alpha1.Testset{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench"},
		Spec: v1alpha1.TestsetSpec{ProjectID: "proj-bench", Name: "bench", KeyField: "id",
			SourceRef:       &v1alpha1.FluxSourceTestcases{Kind: "GitRepository", Name: "evals", Path: "evals/cases.jsonl"},
			APIKeySecretRef: &v1alpha1.SecretKeySelector{Name: framework.KeySecretName}}}
	start := time.Now()
	if err := b.k8s.Create(ctx, ts); err != nil {
		return err
	}
	if err := b.waitTestset(ctx, ts, func(t *v1alpha1.Testset) bool { return t.Status.Testcases == int32(n) }); err != nil { //nolint:gosec // n is a flag
		return err
	}
	first := time.Since(start)
	mem, err := mgr.Memory()
	if err != nil {
		return err
	}
	label := fmt.Sprintf("Testset of %d testcases of %d B from a Flux artifact: ", n, *flagTestsetBytes)
	tab.add(label+"first sync, Testset created to Ready (goal: within 1.2x the floor)", first.Round(time.Millisecond).String(),
		fmt.Sprintf("%s: %d creates of %d straight to the test server, one at a time", floor.Round(time.Millisecond),
			(n+evalapi.MaxTestcasesPerCreate-1)/evalapi.MaxTestcasesPerCreate, evalapi.MaxTestcasesPerCreate), ratio(first, floor))
	tab.add(label+"manager's peak RSS (VmHWM) above idle (goal: at most 40 MiB)", mib(mem.Peak-idle.Peak),
		fmt.Sprintf("idle peak %s, peak while syncing %s", mib(idle.Peak), mib(mem.Peak)), "")

	return b.testsetEdits(ctx, tab, label, artifacts, repo, ts, lines)
}

// testsetEdits measures the calls of a one-testcase edit of the synced
// Testset ts, and of an unchanged resync.
func (b *bench) testsetEdits(ctx context.Context, tab *table, label string, artifacts *framework.ArtifactServer,
	repo *sourcev1.GitRepository, ts *v1alpha1.Testset, lines []string) error {
	n := len(lines)
	before := b.callCounts()
	digest := ts.Status.Digest
	start := time.Now()
	edited := strings.Join(lines[:n/2], "") + testcaseLine(n/2, *flagTestsetBytes, "edited") + strings.Join(lines[n/2+1:], "")
	rev2, err := artifacts.Publish(repo.Namespace, repo.Name, "rev-2", map[string]string{"evals/cases.jsonl": edited})
	if err != nil {
		return err
	}
	if err := b.setArtifact(ctx, repo, rev2); err != nil {
		return err
	}
	if err := b.waitTestset(ctx, ts, func(t *v1alpha1.Testset) bool {
		return t.Status.Digest != digest
	}); err != nil {
		return err
	}
	edit := time.Since(start)
	tab.add(label+"one testcase edited: calls (goal: one list sweep and one update)", b.callDelta(before),
		fmt.Sprintf("one sweep is %d list calls", (n+99)/100), edit.Round(time.Millisecond).String())

	before = b.callCounts()
	if err := b.touch(ctx, ts); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	tab.add(label+"unchanged resync (a person's retry annotation): calls (goal: none)", b.callDelta(before), "", "")
	return nil
}

// testcaseFloor times the creates of lines sent straight to the test
// server, 100 a call, one call at a time, into a Testset of their own.
func (b *bench) testcaseFloor(ctx context.Context, lines []string) (time.Duration, error) {
	c, err := evalapi.NewClient(evalapi.Options{BaseURL: b.server.URL(), Timeout: time.Minute})
	if err != nil {
		return 0, err
	}
	ts, err := c.CreateTestset(ctx, evalapitest.DefaultKey, "proj-floor", evalapi.TestsetRequest{Name: "floor",
		JSONSchema:   json.RawMessage(`{"type":"object"}`),
		FieldMapping: evalapi.FieldMapping{Inputs: []string{}, Expected: []string{}, Metadata: []string{}}})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for i := 0; i < len(lines); i += evalapi.MaxTestcasesPerCreate {
		batch := make([]json.RawMessage, 0, evalapi.MaxTestcasesPerCreate)
		for _, l := range lines[i:min(i+evalapi.MaxTestcasesPerCreate, len(lines))] {
			batch = append(batch, json.RawMessage(strings.TrimSpace(l)))
		}
		if _, err := c.CreateTestcases(ctx, evalapitest.DefaultKey, ts.ID, batch); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// idleMemory waits until the manager serves its metrics, lets it settle,
// and reads its memory.
func idleMemory(ctx context.Context, mgr *framework.MeteredManager) (framework.Memory, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := mgr.Scrape(ctx); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return framework.Memory{}, errors.New("the manager did not serve its metrics within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	return mgr.Memory()
}

func testcaseLines(n, size int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = testcaseLine(i, size, "expected")
	}
	return lines
}

// testcaseLine is testcase i, about size bytes of JSON and a newline.
func testcaseLine(i, size int, answer string) string {
	head := fmt.Sprintf(`{"id":"case-%06d","answer":%q,"question":"`, i, answer)
	pad := max(0, size-len(head)-3)
	return head + strings.Repeat(string(rune('a'+i%26)), pad) + "\"}\n"
}

func (b *bench) installFluxSources() error {
	dir := filepath.Join(framework.RepoRoot(), "bin", "flux-crds")
	_, err := envtest.InstallCRDs(b.cfg, envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true})
	if err != nil {
		return fmt.Errorf("installing Flux's source CRDs from %s (make flux-crds): %w", dir, err)
	}
	return nil
}

func (b *bench) setArtifact(ctx context.Context, repo *sourcev1.GitRepository, a *fluxmeta.Artifact) error {
	if err := b.k8s.Get(ctx, client.ObjectKeyFromObject(repo), repo); err != nil {
		return err
	}
	repo.Status.Artifact = a
	meta.SetStatusCondition(&repo.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue,
		Reason: "Succeeded", Message: "stored artifact for revision " + a.Revision})
	return b.k8s.Status().Update(ctx, repo)
}

func (b *bench) waitTestset(ctx context.Context, ts *v1alpha1.Testset, done func(*v1alpha1.Testset) bool) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if err := b.k8s.Get(ctx, client.ObjectKeyFromObject(ts), ts); err != nil {
			return err
		}
		c := meta.FindStatusCondition(ts.Status.Conditions, v1alpha1.ConditionReady)
		if c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == ts.Generation && done(ts) {
			return nil
		}
		if c != nil && c.Reason != v1alpha1.ReasonPending && c.Status != metav1.ConditionTrue && c.Reason != v1alpha1.ReasonSourceNotReady {
			return fmt.Errorf("testset %s: %s: %s", ts.Name, c.Reason, c.Message)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("the Testset did not sync within 10 minutes")
}

func (b *bench) touch(ctx context.Context, ts *v1alpha1.Testset) error {
	patch := client.RawPatch("application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"`+v1alpha1.RetryAnnotation+`":"`+strconv.FormatInt(time.Now().UnixNano(), 10)+`"}}}`))
	return b.k8s.Patch(ctx, ts, patch)
}

var testsetOps = []string{evalapitest.OpGetTestset, evalapitest.OpListTestcases, evalapitest.OpCreateTestcases,
	evalapitest.OpUpdateTestcase, evalapitest.OpBulkDeleteTestcases, evalapitest.OpUpdateTestset, evalapitest.OpCreateTestset}

func (b *bench) callCounts() map[string]int {
	out := map[string]int{}
	for _, op := range testsetOps {
		out[op] = b.server.Calls(op)
	}
	return out
}

// callDelta lists the calls made since before, by operation.
func (b *bench) callDelta(before map[string]int) string {
	var parts []string
	for _, op := range testsetOps {
		if d := b.server.Calls(op) - before[op]; d > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", d, op))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
