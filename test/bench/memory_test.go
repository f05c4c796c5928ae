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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/eval-operator/eval-operator/test/framework"
)

// createWorkers creates the backlog of the memory run; its time is not measured.
const createWorkers = 16

// memoryRun runs the manager binary over a backlog of n new Metrics, then
// restarts it over them once Ready, and reports its time and peak memory.
func (b *bench) memoryRun(ctx context.Context, tab *table, n, c int) error {
	bin, err := framework.BuildManager(ctx, b.dir)
	if err != nil {
		return err
	}
	ns, err := b.newNamespace(ctx, "bench-mem")
	if err != nil {
		return err
	}
	if _, _, err := framework.Parallel(ctx, n, createWorkers, func(ctx context.Context, i int) error {
		return b.k8s.Create(ctx, newMetric(ns, fmt.Sprintf("m-%05d", i), i))
	}); err != nil {
		return err
	}
	ready, err := b.watchReady(ctx, ns, n)
	if err != nil {
		return err
	}
	opts := framework.MeteredOptions{Binary: bin, Kubeconfig: b.cp.Kubeconfig, Log: os.Stderr, Args: []string{
		"--api-url=" + b.server.URL(),
		"--max-concurrent-reconciles=" + strconv.Itoa(c),
		// The default of 20/s would be the limit; it is reported separately.
		"--api-qps=1000000", "--api-burst=1000000",
		"--zap-log-level=error",
	}}
	pprofAddr, err := pprofAddress()
	if err != nil {
		return err
	}
	if pprofAddr != "" {
		opts.Args = append(opts.Args, "--pprof-bind-address="+pprofAddr)
	}

	start := time.Now()
	sync, err := framework.StartMetered(opts)
	if err != nil {
		return err
	}
	if err := <-ready; err != nil {
		return errors.Join(err, sync.Terminate())
	}
	elapsed := time.Since(start)
	syncMem, heap, err := memoryOf(ctx, sync)
	err = errors.Join(err, saveHeapProfile(ctx, pprofAddr, "sync"))
	if err = errors.Join(err, sync.Terminate()); err != nil {
		return err
	}
	label := fmt.Sprintf("binary, N=%d, C=%d, prompt bytes %d: ", n, c, *flagPromptBytes)
	tab.add(label+"process start to all Ready (backlog)", rate(n, elapsed), "", "")
	tab.add(label+"peak RSS (VmHWM) syncing (goal at 10,000: at most 120 MiB, within 10% for 100 B and 16 KiB prompts)", mib(syncMem.Peak),
		fmt.Sprintf("RSS after %s (anonymous %s, binary's pages %s), Go heap in use %s",
			mib(syncMem.Current), mib(syncMem.Anon), mib(syncMem.File), mib(heap)), "")

	restart, err := framework.StartMetered(opts)
	if err != nil {
		return err
	}
	_, err = waitIdle(ctx, func() (reconcileStats, error) {
		families, err := restart.Scrape(ctx)
		if err != nil {
			return reconcileStats{}, nil //nolint:nilerr // not serving yet
		}
		return statsOf(families), nil
	}, reconcileStats{}, n)
	if err == nil {
		var restartMem framework.Memory
		restartMem, heap, err = memoryOf(ctx, restart)
		err = errors.Join(err, saveHeapProfile(ctx, pprofAddr, "restart"))
		tab.add(label+"peak RSS (VmHWM) restarting over Ready Metrics", mib(restartMem.Peak),
			fmt.Sprintf("RSS after %s (anonymous %s, binary's pages %s), Go heap in use %s",
				mib(restartMem.Current), mib(restartMem.Anon), mib(restartMem.File), mib(heap)), "")
	}
	if err = errors.Join(err, restart.Terminate()); err != nil {
		return err
	}
	return b.deleteMetrics(ctx, ns)
}

// memoryOf reads p's resident set and the Go heap in use it reports.
func memoryOf(ctx context.Context, p *framework.MeteredManager) (framework.Memory, int64, error) {
	mem, err := p.Memory()
	if err != nil {
		return mem, 0, err
	}
	families, err := p.Scrape(ctx)
	if err != nil {
		return mem, 0, err
	}
	return mem, int64(framework.Sum(families, "go_memstats_heap_inuse_bytes", nil)), nil
}

// pprofAddress is a free loopback address for the binary's profiles when
// -pprof-dir is set, else "".
func pprofAddress() (string, error) {
	if *flagPprofDir == "" {
		return "", nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	return ln.Addr().String(), ln.Close()
}

// saveHeapProfile writes the binary's heap profile to -pprof-dir as
// heap-<phase>-<prompt bytes>.pb.gz, for `go tool pprof`.
func saveHeapProfile(ctx context.Context, addr, phase string) error {
	if addr == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/heap", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reading the heap profile: %w", err)
	}
	defer func() { _ = res.Body.Close() }()
	profile, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("heap-%s-%d.pb.gz", phase, *flagPromptBytes)
	return os.WriteFile(filepath.Join(*flagPprofDir, name), profile, 0o600)
}
