//go:build e2e

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

package e2e

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eval-operator/eval-operator/test/framework"
)

// The pages a newcomer follows step by step: each of their sh blocks runs, in
// order, against what `make dev` starts, so the docs cannot rot.
var walkthroughs = []string{"README.md", "docs/getting-started.md"}

// The address and state directory the docs use for `make dev`.
const (
	docsAPIAddr  = "127.0.0.1:8082"
	docsStateDir = "$PWD/.dev/"
)

var _ = Describe("The docs", func() {
	It("run as written against make dev, and the samples leave the demo key alone", func(ctx SpecContext) {
		dev := startDev(ctx)
		secret := &corev1.Secret{}
		secretKey := client.ObjectKey{Namespace: "demo", Name: "evaluation-api-key"}
		Expect(dev.client.Get(ctx, secretKey, secret)).To(Succeed())

		for _, page := range walkthroughs {
			script := shellBlocks(page)
			Expect(script).NotTo(BeEmpty(), page)
			runScript(ctx, page, dev.substitute(script), dev.env())
		}

		By("applying the samples folder with -k as well as -f")
		runScript(ctx, "samples", "kubectl apply -n demo -k config/samples\n"+
			"kubectl wait -n demo --for=condition=Ready metrics,testsets,testsetdeletions,testcasedeletions --all --timeout=60s\n",
			dev.env())
		after := &corev1.Secret{}
		Expect(dev.client.Get(ctx, secretKey, after)).To(Succeed())
		Expect(after.ResourceVersion).To(Equal(secret.ResourceVersion), "the demo key Secret was written to")

		runSDKBlocks(ctx, dev)
	}, NodeTimeout(5*time.Minute))

	It("link only to files and headings that exist", func() {
		pages, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "docs", "*.md"))
		Expect(err).NotTo(HaveOccurred())
		refs, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "docs", "reference", "*.md"))
		Expect(err).NotTo(HaveOccurred())
		pages = append(append(pages, refs...), filepath.Join(framework.RepoRoot(), "README.md"))
		for _, page := range pages {
			for _, problem := range brokenLinks(page) {
				AddReportEntry("broken link", problem)
				Fail(problem)
			}
		}
	})
})

// devSession is a running `make dev`.
type devSession struct {
	client   client.Client
	stateDir string
	apiAddr  string
}

// startDev runs hack/dev, the program `make dev` runs, on free ports, and
// waits until it prints what to try.
func startDev(ctx context.Context) devSession {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	devBinary := filepath.Join(dir, "dev")
	build := exec.CommandContext(ctx, "go", "build", "-o", devBinary, "./hack/dev")
	build.Dir = framework.RepoRoot()
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))

	addrs := make([]string, 3)
	for i := range addrs {
		addrs[i], err = framework.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
	}
	s := devSession{stateDir: filepath.Join(dir, "state"), apiAddr: addrs[0]}
	cmd := exec.Command(devBinary, "--manager="+managerBinary, "--state-dir="+s.stateDir,
		"--serve-api="+addrs[0], "--health-probe-bind-address="+addrs[1], "--metrics-bind-address="+addrs[2])
	cmd.Dir = framework.RepoRoot()
	stdout := gbytes.NewBuffer()
	cmd.Stdout = io.MultiWriter(stdout, GinkgoWriter)
	cmd.Stderr = GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		// SIGTERM, as Ctrl-C: dev stops the manager and the control plane.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	Eventually(stdout, 2*time.Minute).Should(gbytes.Say("Press Ctrl-C to stop everything"))

	config, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.stateDir, "kubeconfig"))
	Expect(err).NotTo(HaveOccurred())
	s.client, err = client.New(config, client.Options{Scheme: framework.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return s
}

// substitute points the docs' commands at this session.
func (s devSession) substitute(script string) string {
	return strings.NewReplacer(docsStateDir, s.stateDir+"/", docsAPIAddr, s.apiAddr).Replace(script)
}

func (s devSession) env() []string {
	return append(os.Environ(), "KUBECONFIG="+filepath.Join(s.stateDir, "kubeconfig"))
}

// runScript runs a script in the repository's root with bash -e: the first
// command that fails fails the spec.
func runScript(ctx context.Context, name, script string, env []string) {
	GinkgoHelper()
	By("running the commands of " + name)
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Dir = framework.RepoRoot()
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	GinkgoWriter.Printf("--- %s\n%s\n--- output\n%s\n", name, script, out)
	Expect(err).NotTo(HaveOccurred(), "%s: a command failed:\n%s", name, out)
}

// fence matches a fenced code block with its language and the line before it.
var fence = regexp.MustCompile("(?ms)^(.*?)\n```(\\w*)\n(.*?)\n```$")

// codeBlocks returns the code blocks of a page in the given language, leaving
// out those right after a `<!-- not run: why -->` comment.
func codeBlocks(page, lang string) []string {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), page))
	Expect(err).NotTo(HaveOccurred())
	var blocks []string
	rest := string(data)
	for {
		m := fence.FindStringSubmatchIndex(rest)
		if m == nil {
			return blocks
		}
		before, l, body := rest[m[2]:m[3]], rest[m[4]:m[5]], rest[m[6]:m[7]]
		lines := strings.Split(strings.TrimRight(before, "\n"), "\n")
		skip := strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), "<!-- not run")
		if l == lang && !skip {
			blocks = append(blocks, body)
		}
		rest = rest[m[1]:]
	}
}

// shellBlocks is one script of a page's sh blocks.
func shellBlocks(page string) string {
	return strings.Join(codeBlocks(page, "sh"), "\n")
}

// runSDKBlocks runs the pages' Python and Node blocks with the official SDKs
// where EVAL_SDK_DIR holds them (built by ../shared/sdk/build.sh); CI has no
// copy of them, so without it they are reported as not run.
func runSDKBlocks(ctx context.Context, dev devSession) {
	GinkgoHelper()
	sdk := os.Getenv("EVAL_SDK_DIR")
	if sdk == "" {
		AddReportEntry("SDK blocks not run", "set EVAL_SDK_DIR to the output of ../shared/sdk/build.sh to run them")
		return
	}
	key := &corev1.Secret{}
	Expect(dev.client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "evaluation-api-key"}, key)).To(Succeed())
	env := append(dev.env(), "KEY="+string(key.Data["apiKey"]))
	for _, page := range walkthroughs {
		for _, block := range codeBlocks(page, "python") {
			runProgram(ctx, page, filepath.Join(sdk, "py", "bin", "python"), dev.substitute(block), env)
		}
		for _, block := range codeBlocks(page, "js") {
			block = strings.ReplaceAll(block, `require("scorecard-ai")`,
				`require("`+filepath.Join(sdk, "node", "dist", "index.js")+`")`)
			runProgram(ctx, page, "node", dev.substitute(block), env)
		}
	}
}

func runProgram(ctx context.Context, page, interpreter, program string, env []string) {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, interpreter, "-")
	cmd.Stdin = strings.NewReader(program)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	GinkgoWriter.Printf("--- %s (%s)\n%s\n--- output\n%s\n", page, interpreter, program, out)
	Expect(err).NotTo(HaveOccurred(), "%s: an SDK example failed:\n%s", page, out)
}

// link matches a Markdown link's target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// brokenLinks returns the relative links of a page whose file or heading does
// not exist.
func brokenLinks(page string) []string {
	GinkgoHelper()
	data, err := os.ReadFile(page)
	Expect(err).NotTo(HaveOccurred())
	var problems []string
	for _, m := range link.FindAllStringSubmatch(withoutCode(string(data)), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := page
		if file != "" {
			path = filepath.Join(filepath.Dir(page), file)
		}
		if _, err := os.Stat(path); err != nil {
			problems = append(problems, page+": no file "+target)
			continue
		}
		if anchor != "" && strings.HasSuffix(path, ".md") && !headingAnchors(path)[anchor] {
			problems = append(problems, page+": no heading "+target)
		}
	}
	return problems
}

// headingAnchors returns the anchors GitHub gives a page's headings.
func headingAnchors(path string) map[string]bool {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	anchors := map[string]bool{}
	seen := map[string]int{}
	scanner := bufio.NewScanner(strings.NewReader(withoutCode(string(data))))
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := githubAnchor(title)
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true // GitHub's suffix for a repeated heading
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// githubAnchor is GitHub's anchor of a heading: lower case, punctuation but
// hyphens and underscores dropped, spaces as hyphens.
func githubAnchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fencedCode and inlineCode match code, whose text is neither headings nor links.
var (
	fencedCode = regexp.MustCompile("(?ms)^```.*?^```")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
)

func withoutCode(s string) string {
	return inlineCode.ReplaceAllString(fencedCode.ReplaceAllString(s, ""), "")
}
