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
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var flagCPUProfileDir = flag.String("cpuprofile-dir", "",
	"write profiles of this process (the manager, the clients and the test server) to this directory, over each operator run's "+
		"create-to-Ready window and each REST run's POSTs: CPU to operator-c<C>.pprof (rest-standalone-<in flight>.pprof, "+
		"rest-remote-<in flight>.pprof), and the heap at each window's start and end to <name>.heap-start.pprof and "+
		"<name>.heap-end.pprof (what the window allocated is their difference: pprof -diff_base)")

// startProfile starts profiling this process into name.pprof under
// -cpuprofile-dir, with heap profiles at the start and the end, and returns
// what stops it; without the flag it does nothing.
func startProfile(name string) (stop func() error, err error) {
	dir := *flagCPUProfileDir
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := writeHeapProfile(filepath.Join(dir, name+".heap-start.pprof")); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return func() error {
		pprof.StopCPUProfile()
		return errors.Join(f.Close(), writeHeapProfile(filepath.Join(dir, name+".heap-end.pprof")))
	}, nil
}

// writeHeapProfile writes the heap profile, whose allocation counts run
// from the process's start, to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path) //nolint:gosec // a path under the directory the flag names
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
}

// clockTick is the unit of /proc/<pid>/stat's CPU times: USER_HZ, 100 on
// every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// cpuTimes is the CPU time used so far by the three parties of a run on
// this one machine: where a run's time goes when the CPUs are the limit.
type cpuTimes struct {
	// apiServer and etcd are the control plane's child processes; this
	// process runs the manager, the clients and the upstream test server.
	apiServer, etcd, bench time.Duration
	// mallocs counts the heap objects this process allocated: unlike its
	// CPU time, it does not grow with the machine's load.
	mallocs uint64
}

// readCPU samples the CPU time of this process and of its kube-apiserver
// and etcd children.
func readCPU() (cpuTimes, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTimes{}, err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t := cpuTimes{bench: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), mallocs: ms.Mallocs}
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return t, err
	}
	self := os.Getpid()
	for _, path := range stats {
		comm, ppid, used, ok := readStat(path)
		if !ok || ppid != self {
			continue
		}
		switch comm {
		case "kube-apiserver":
			t.apiServer += used
		case "etcd":
			t.etcd += used
		}
	}
	return t, nil
}

// readStat parses a /proc/<pid>/stat: the command, the parent's pid and the
// user and system CPU time. ok is false for a process gone meanwhile.
func readStat(path string) (comm string, ppid int, used time.Duration, ok bool) {
	raw, err := os.ReadFile(path) //nolint:gosec // a /proc path of our own glob
	if err != nil {
		return "", 0, 0, false
	}
	s := string(raw)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, 0, false
	}
	// After the command: state ppid pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime stime, fields 3 to 15 of proc(5).
	fields := strings.Fields(s[end+1:])
	if len(fields) < 13 {
		return "", 0, 0, false
	}
	ppid, err1 := strconv.Atoi(fields[1])
	utime, err2 := strconv.ParseInt(fields[11], 10, 64)
	stime, err3 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return "", 0, 0, false
	}
	return s[open+1 : end], ppid, time.Duration(utime+stime) * clockTick, true
}

// since is the CPU time used between before and t, per Metric of n, as a
// table cell.
func (t cpuTimes) since(before cpuTimes, n int) string {
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	return fmt.Sprintf("API server %.2f ms, etcd %.2f ms, manager and clients %.2f ms (%d allocations)",
		per(t.apiServer-before.apiServer), per(t.etcd-before.etcd), per(t.bench-before.bench),
		(t.mallocs-before.mallocs)/uint64(max(n, 1)))
}
