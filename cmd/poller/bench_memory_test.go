package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The poller's memory during BenchmarkBacklog. Its peak resident set is read from
// the poller's own /proc/<pid>/status (VmHWM, the high-water mark of its address
// space), every 100 ms until it exits. Not from the rusage of the exited child:
// Linux counts in the child's ru_maxrss the resident set of the address space it
// was forked from up to its exec, and os/exec forks the test process, which holds
// the simulator's whole world (hundreds of MB for 100,000 calls).
//
// With CALLBUS_BENCH_HEAPPROFILE=<file>, it also reads the Go heap (the
// MemStats lines of /debug/pprof/heap?debug=1) every second and at each new high
// of the resident set, saves a heap profile at each new high (the file holds the
// one of the peak), and writes the timeline to <file>.txt: which phase of the
// run holds the memory.

// memSample is the poller's memory at one moment, in MB.
type memSample struct {
	at                         time.Duration // since the sampling started
	rss, hwm                   float64       // VmRSS, VmHWM
	anon, file                 float64       // RssAnon, RssFile: VmRSS is their sum (and RssShmem)
	heapInuse, heapAlloc       float64       // runtime.MemStats.HeapInuse, HeapAlloc
	nextGC, heapSys, heapFreed float64       // NextGC, HeapSys, HeapReleased
}

// memoryRun is what sampleMemory saw.
type memoryRun struct {
	peakMB  float64 // the highest VmHWM read
	anonMB  float64 // the highest RssAnon read: the Go heap, stacks, runtime
	fileMB  float64 // the highest RssFile read: the binary's pages touched
	samples []memSample
}

// sampleMemory samples the poller (pid, pprof at addr) until stop, which returns
// what it saw; call stop after the poller exited.
func sampleMemory(b testing.TB, pid int, addr string) (stop func() memoryRun) {
	file := os.Getenv("CALLBUS_BENCH_HEAPPROFILE")
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan memoryRun, 1)
	go func() {
		var run memoryRun
		start := time.Now()
		t := time.NewTicker(100 * time.Millisecond) // cheap to read; spikes are short
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				done <- run
				return
			case <-t.C:
			}
			s := memSample{at: time.Since(start).Round(100 * time.Millisecond)}
			if !procMemory(pid, &s) {
				continue // exited
			}
			high := s.hwm > run.peakMB
			run.peakMB = max(run.peakMB, s.hwm)
			run.anonMB, run.fileMB = max(run.anonMB, s.anon), max(run.fileMB, s.file)
			if file == "" || (!high && i%10 != 0) {
				continue
			}
			heapStats(ctx, addr, &s)
			run.samples = append(run.samples, s)
			if high {
				_ = fetchProfile(ctx, fmt.Sprintf("http://%s/debug/pprof/heap", addr), file)
			}
		}
	}()
	return func() memoryRun { cancel(); return <-done }
}

// log writes the timeline next to the heap profile and logs its peak.
func (r memoryRun) log(b testing.TB) {
	// The file-backed part is the binary's code and tables the process touched
	// (and their neighbours, which the kernel maps along): fixed, whatever the
	// backlog; the anonymous part is what the run's work holds.
	b.Logf("poller peak memory: VmHWM %.1f MB; highest RssAnon %.1f MB, highest RssFile %.1f MB", r.peakMB, r.anonMB, r.fileMB)
	if len(r.samples) == 0 {
		return
	}
	var sb strings.Builder
	sb.WriteString("poller memory, MB: at | RSS | RSS high | anonymous | file | heap in use | heap alloc | next GC | heap sys | released\n")
	peak := r.samples[0]
	for _, s := range r.samples {
		fmt.Fprintf(&sb, "%s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f\n", s.at, s.rss, s.hwm, s.anon, s.file, s.heapInuse, s.heapAlloc, s.nextGC, s.heapSys, s.heapFreed)
		if s.rss > peak.rss {
			peak = s
		}
	}
	file := os.Getenv("CALLBUS_BENCH_HEAPPROFILE") + ".txt"
	if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
		b.Errorf("memory timeline: %v", err)
	}
	b.Logf("poller memory: highest sampled RSS at %s, %.0f MB, heap in use %.0f MB (timeline in %s)", peak.at, peak.rss, peak.heapInuse, file)
}

// procMemory reads VmRSS and VmHWM of pid into s; false when pid is gone.
func procMemory(pid int, s *memSample) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			s.rss = kb / 1024
		case "VmHWM:":
			s.hwm = kb / 1024
		case "RssAnon:":
			s.anon = kb / 1024
		case "RssFile:":
			s.file = kb / 1024
		}
	}
	return s.hwm > 0
}

// heapStats fills s's heap figures from the MemStats lines of the text heap
// profile ("# HeapInuse = 123").
func heapStats(ctx context.Context, addr string, s *memSample) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/heap?debug=1", addr), nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return
	}
	fields := map[string]*float64{"HeapInuse": &s.heapInuse, "HeapAlloc": &s.heapAlloc, "NextGC": &s.nextGC,
		"HeapSys": &s.heapSys, "HeapReleased": &s.heapFreed}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var name string
		var v float64
		if n, _ := fmt.Sscanf(sc.Text(), "# %s = %g", &name, &v); n == 2 {
			if p, ok := fields[name]; ok {
				*p = v / (1 << 20)
			}
		}
	}
}
