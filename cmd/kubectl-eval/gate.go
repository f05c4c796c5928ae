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
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/api/v1alpha1"
	"github.com/eval-operator/eval-operator/internal/gates"
)

// Exit codes of gate: a verdict, or no verdict.
const (
	gatePassed       = 0
	gateFailed       = 1
	gateInconclusive = 2
)

// A cluster that fails this many reads of the run in a row, each given at
// most readTimeout, is unreachable: gate says so and exits 2 rather than
// wait out its timeout and report a state it saw before (at the default
// --poll-interval of 2s, a minute of failures when the API server refuses
// connections, at most about six when its reads hang).
const (
	maxFailedReads = 30
	readTimeout    = 10 * time.Second
)

// gateOptions are gate's flags.
type gateOptions struct {
	kube            *kubeFlags
	file            string
	configMap       string
	key             string
	systemVersionID string
	system          string
	version         []string
	canary          string
	revision        string
	timeout         time.Duration
	poll            time.Duration
}

func newGateCommand(kube *kubeFlags) *cobra.Command {
	o := &gateOptions{kube: kube}
	cmd := &cobra.Command{
		Use: "gate (-f TEMPLATE | --configmap NAME) [--system NAME [--version KEY=VALUE]... | --system-version-id UUID] " +
			"[--canary NAME] [--revision REV] [--timeout D]",
		Short: "Run an evaluation and exit with its verdict: 0 Passed, 1 Failed, 2 Inconclusive",
		Long: `Creates an EvaluationRun from a template (a file, or a ConfigMap key in the
namespace) under a generated name, waits for the operator's verdict, prints each
Metric's counts and pass rate, and exits 0 when the run Passed, 1 when it Failed,
and 2 when it is Inconclusive or no verdict came (the run stalled, the wait timed
out, the cluster could not be reached). While it waits it prints a line each time
the run's progress changes (its phase, records and scores, or what it waits for).
30 failed reads of the run in a row end the wait with "cluster unreachable" and
exit 2. A rollout's analysis step runs it (an Argo
Rollouts or Kargo AnalysisTemplate with the job provider): a non-zero exit fails
the step. The template's metadata.name is the prefix of the generated name.
--canary and --revision label the run (evaluation.eval-operator.dev/canary and
/revision); the run's verdict and pass-ratio gauges carry them, with its
systemVersionId, so a query picks a release without knowing the run's name.
--system names the System (of the namespace) the release is a version of:
gate upserts the release's SystemVersion, named after the System and a hash
of its config (--revision as key "revision", and each --version KEY=VALUE),
owned by the System, and the run names it in spec.systemVersionRef, so the
verdict is linked to the version it judged. The same config is the same
SystemVersion. --system-version-id names a version kept elsewhere by its
UUID instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "filename", "f", "", "the EvaluationRun template, a YAML file (- reads standard input)")
	f.StringVar(&o.configMap, "configmap", "", "a ConfigMap of the namespace holding the template")
	f.StringVar(&o.key, "key", gates.TemplateKey, "the ConfigMap's key holding the template")
	f.StringVar(&o.system, "system", "", "the System the release is a version of: upsert its SystemVersion from --revision and --version, and name it in the run's spec.systemVersionRef")
	f.StringArrayVar(&o.version, "version", nil, "KEY=VALUE of what identifies the release (an image, a model), with --system; repeat for each key")
	f.StringVar(&o.systemVersionID, "system-version-id", "", "set the run's spec.systemVersionId: the UUID of a SystemVersion kept elsewhere (a release's revision goes in --revision)")
	f.StringVar(&o.canary, "canary", "", "label the run with the canary it judges (a Rollout's or Canary's name), for its metrics")
	f.StringVar(&o.revision, "revision", "", "label the run with the release's revision (a pod template hash, a commit), for its metrics")
	f.DurationVar(&o.timeout, "timeout", 0, "how long to wait for the verdict (default: the run's spec.timeout plus 5m)")
	f.DurationVar(&o.poll, "poll-interval", 2*time.Second, "how often the run is read while waiting")
	return cmd
}

// gateExit is gate's result: the exit code and why.
func gateExit(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

func (o *gateOptions) run(ctx context.Context, out io.Writer) error {
	if (o.file == "") == (o.configMap == "") {
		return usageError(errors.New("give exactly one of -f and --configmap"))
	}
	release, err := o.release()
	if err != nil {
		return err
	}
	c, ns, err := o.kube.client()
	if err != nil {
		return gateExit(gateInconclusive, "%w", err)
	}
	run, err := o.template(ctx, c, ns)
	if err != nil {
		return err
	}
	if release != nil {
		if err := linkVersion(ctx, c, run, *release, out); err != nil {
			return err
		}
	}
	if err := c.Create(ctx, run); err != nil {
		return gateExit(gateInconclusive, "creating the EvaluationRun: %w", err)
	}
	fmt.Fprintf(out, "evaluationrun/%s created in %s\n", run.Name, run.Namespace)
	wait := o.timeout
	if wait <= 0 {
		wait = runTimeout(run) + 5*time.Minute
	}
	judged, err := o.await(ctx, c, client.ObjectKeyFromObject(run), wait, out)
	if err != nil {
		return err
	}
	printVerdict(out, judged)
	switch judged.Status.Verdict {
	case "Passed":
		return nil
	case "Failed":
		return gateExit(gateFailed, "evaluationrun/%s Failed", judged.Name)
	default:
		return gateExit(gateInconclusive, "evaluationrun/%s is Inconclusive", judged.Name)
	}
}

// template reads the template and makes the run to create from it.
func (o *gateOptions) template(ctx context.Context, c client.Client, ns string) (*v1alpha1.EvaluationRun, error) {
	var data []byte
	var err error
	switch {
	case o.file == "-":
		data, err = io.ReadAll(os.Stdin)
	case o.file != "":
		data, err = os.ReadFile(o.file)
	default:
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: o.configMap}, cm); err != nil {
			return nil, gateExit(gateInconclusive, "reading ConfigMap %s: %w", o.configMap, err)
		}
		text, ok := cm.Data[o.key]
		if !ok {
			return nil, usageError(fmt.Errorf("ConfigMap %s has no key %s", o.configMap, o.key))
		}
		data = []byte(text)
	}
	if err != nil {
		return nil, usageError(fmt.Errorf("reading the template: %w", err))
	}
	run, err := gates.FromTemplate(data, ns)
	if err != nil {
		return nil, usageError(err)
	}
	run.GenerateName, run.Name = gates.Prefix(run), ""
	if o.systemVersionID != "" {
		run.Spec.SystemVersionID, run.Spec.SystemVersionRef = o.systemVersionID, nil
	}
	for label, value := range map[string]string{v1alpha1.CanaryLabel: o.canary, v1alpha1.RevisionLabel: o.revision} {
		if value == "" {
			continue
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return nil, usageError(fmt.Errorf("label %s=%q: %s", label, value, strings.Join(errs, "; ")))
		}
		if run.Labels == nil {
			run.Labels = map[string]string{}
		}
		run.Labels[label] = value
	}
	return run, nil
}

// release is the release --system, --revision and --version name, or nil
// without --system; what the flags get wrong is refused before anything is
// read or created.
func (o *gateOptions) release() (*gates.Release, error) {
	switch {
	case o.systemVersionID != "" && o.system != "":
		return nil, usageError(errors.New("give --system (the version is derived from the release) or " +
			"--system-version-id (a version kept elsewhere), not both"))
	case o.systemVersionID != "" && !v1alpha1.ValidUUID(o.systemVersionID):
		return nil, usageError(fmt.Errorf("--system-version-id %q is not a UUID: a SystemVersion's id is one "+
			"(a release's revision goes in --revision; --system derives its SystemVersion)", o.systemVersionID))
	case o.system == "" && len(o.version) > 0:
		return nil, usageError(errors.New("--version needs --system: the System the release is a version of"))
	case o.system == "":
		return nil, nil
	}
	version := make(map[string]string, len(o.version))
	for _, kv := range o.version {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usageError(fmt.Errorf("--version %q: want KEY=VALUE", kv))
		}
		if _, dup := version[k]; dup {
			return nil, usageError(fmt.Errorf("--version %s is given twice", k))
		}
		version[k] = v
	}
	r, errs := gates.ReleaseOf(o.system, "revision", o.revision, version)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = flagOf(e.Field) + " " + e.Message
		}
		return nil, usageError(errors.New(strings.Join(msgs, "; ")))
	}
	return &r, nil
}

// flagOf names the flag of a release's field.
func flagOf(field string) string {
	switch {
	case field == "system":
		return "--system"
	case field == "version.revision":
		return "--revision"
	case strings.HasPrefix(field, "version."):
		return "--version " + strings.TrimPrefix(field, "version.")
	}
	return "--version"
}

// linkVersion upserts the release's SystemVersion in the run's namespace
// and names it in the run.
func linkVersion(ctx context.Context, c client.Client, run *v1alpha1.EvaluationRun, r gates.Release, out io.Writer) error {
	create := func(ctx context.Context, v *v1alpha1.SystemVersion) error { return c.Create(ctx, v) }
	v, created, err := gates.UpsertVersion(ctx, c, create, run.Namespace, r)
	switch {
	case errors.Is(err, gates.ErrSystemNotFound), errors.Is(err, gates.ErrVersionNameTaken):
		return usageError(err)
	case err != nil:
		return gateExit(gateInconclusive, "upserting the release's SystemVersion: %w", err)
	}
	how := "unchanged"
	if created {
		how = "created"
	}
	fmt.Fprintf(out, "systemversion/%s %s in %s\n", v.Name, how, v.Namespace)
	run.Spec.SystemVersionRef, run.Spec.SystemVersionID = &v1alpha1.ObjectRef{Name: v.Name}, ""
	return nil
}

func runTimeout(e *v1alpha1.EvaluationRun) time.Duration {
	if e.Spec.Timeout != nil && e.Spec.Timeout.Duration > 0 {
		return e.Spec.Timeout.Duration
	}
	return 30 * time.Minute
}

// await reads the run every poll interval until it has a verdict, printing
// its progress to out as it changes; a run the operator stalled, no verdict
// within wait, or maxFailedReads failed reads in a row is no verdict.
func (o *gateOptions) await(ctx context.Context, c client.Client, key types.NamespacedName, wait time.Duration,
	out io.Writer) (*v1alpha1.EvaluationRun, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(o.poll)
	defer tick.Stop()
	e := &v1alpha1.EvaluationRun{}
	var lastErr error
	failed, shown := 0, ""
	for {
		// A read that fails for a moment (an API server restarting, the client's rate limiter
		// near the deadline) is retried; a deleted run or a cluster that stopped answering ends the wait.
		read, cancelRead := context.WithTimeout(ctx, readTimeout)
		lastErr = c.Get(read, key, e)
		cancelRead()
		switch {
		case lastErr == nil:
			failed = 0
			if line := progressLine(e); line != shown {
				fmt.Fprintln(out, line)
				shown = line
			}
			if e.Status.Verdict != "" {
				return e, nil
			}
			if s := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionStalled); s != nil &&
				s.Status == metav1.ConditionTrue && s.ObservedGeneration >= e.Generation {
				return nil, gateExit(gateInconclusive, "evaluationrun/%s needs a person: %s: %s", key.Name, s.Reason, s.Message)
			}
		case apierrors.IsNotFound(lastErr):
			return nil, gateExit(gateInconclusive, "evaluationrun/%s was deleted before its verdict", key.Name)
		case ctx.Err() == nil:
			if failed++; failed >= maxFailedReads {
				return nil, gateExit(gateInconclusive, "cluster unreachable: %d reads of evaluationrun/%s failed in a row, "+
					"the last: %w", failed, key.Name, lastErr)
			}
		}
		select {
		case <-ctx.Done():
			return nil, gateExit(gateInconclusive, "evaluationrun/%s has no verdict after %s (%s)", key.Name, wait, noVerdict(e, lastErr))
		case <-tick.C:
		}
	}
}

// noVerdict says why the wait ended without a verdict: the run's Ready condition, or the
// last read's error when that read failed, never a state read before as if it were the last.
func noVerdict(e *v1alpha1.EvaluationRun, lastErr error) string {
	r := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionReady)
	switch {
	case lastErr != nil && r != nil:
		return "the last read failed: " + lastErr.Error() + "; before it, " + r.Reason + ": " + r.Message
	case lastErr != nil:
		return "reading it: " + lastErr.Error()
	case r != nil:
		return r.Reason + ": " + r.Message
	}
	return "no verdict"
}

// progressLine says where the run stands: its phase, records and scores
// once its run exists, else what it waits for.
func progressLine(e *v1alpha1.EvaluationRun) string {
	if e.Status.RunID != "" {
		expected := "?"
		if n := e.Status.ExpectedRecords; n != nil {
			expected = fmt.Sprint(*n)
		}
		return fmt.Sprintf("evaluationrun/%s: run %s %s, %d of %s records, %d scores", e.Name, e.Status.RunID,
			e.Status.Phase, e.Status.Records, expected, e.Status.Scores)
	}
	why := "no conditions yet"
	if r := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionReady); r != nil {
		why = r.Reason + ": " + r.Message
	}
	return fmt.Sprintf("evaluationrun/%s: %s", e.Name, why)
}

// printVerdict writes the run's verdict and each Metric's counts.
func printVerdict(out io.Writer, e *v1alpha1.EvaluationRun) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "METRIC\tPASSED\tFAILED\tUNSCORED\tPASS RATE\tMIN\tJUDGED")
	for _, m := range e.Status.Metrics {
		rate := "-"
		if m.PassRate != nil {
			rate = fmt.Sprintf("%.2f", *m.PassRate)
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%.2f\t%t\n", m.Name, m.Passed, m.Failed, m.Unscored, rate, m.MinPassRate, m.Judged)
	}
	_ = w.Flush()
	why := ""
	if c := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionPassed); c != nil && c.Message != "" {
		why = ": " + c.Message
	}
	run := ""
	if e.Status.RunID != "" {
		run = " (run " + e.Status.RunID + ")"
	}
	fmt.Fprintf(out, "evaluationrun/%s%s: %s%s\n", e.Name, run, e.Status.Verdict, why)
}
