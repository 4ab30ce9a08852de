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

// With CALLBUS_BENCH_HEAPPROFILE=<file>, BenchmarkBacklog samples the poller's
// memory every second (resident set from /proc, the Go heap from its
// /debug/pprof/heap?debug=1), saves a heap profile each time the resident set
// reaches a new high (the file holds the one of the peak) and logs the timeline:
// which phase of the run holds the memory.

// memSample is the poller's memory at one moment.
type memSample struct {
	at               time.Duration // since the sampling started
	rssMB            float64       // VmRSS
	heapInuseMB      float64       // runtime.MemStats.HeapInuse
	heapSysMB        float64       // HeapSys
	heapReleasedMB   float64       // HeapReleased
	nextGCMB, objsMB float64       // NextGC; HeapAlloc
}

// sampleMemory samples the poller (pid, pprof at addr) until stop, which returns
// the timeline; without CALLBUS_BENCH_HEAPPROFILE it does nothing.
func sampleMemory(b testing.TB, pid int, addr string) (stop func() []memSample) {
	file := os.Getenv("CALLBUS_BENCH_HEAPPROFILE")
	if file == "" {
		return func() []memSample { return nil }
	}
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan []memSample, 1)
	go func() {
		var out []memSample
		peak, start := 0.0, time.Now()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- out
				return
			case <-t.C:
			}
			s := memSample{at: time.Since(start).Round(time.Second), rssMB: rssMB(pid)}
			heapStats(ctx, addr, &s)
			out = append(out, s)
			if s.rssMB > peak {
				peak = s.rssMB
				_ = fetchProfile(ctx, fmt.Sprintf("http://%s/debug/pprof/heap", addr), file)
			}
		}
	}()
	return func() []memSample { cancel(); return <-done }
}

// logMemory logs the timeline of samples.
func logMemory(b testing.TB, samples []memSample) {
	if len(samples) == 0 {
		return
	}
	var sb strings.Builder
	sb.WriteString("poller memory, MB: at | RSS | heap in use | heap alloc | next GC | heap sys | released\n")
	for _, s := range samples {
		fmt.Fprintf(&sb, "%s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f\n", s.at, s.rssMB, s.heapInuseMB, s.objsMB, s.nextGCMB, s.heapSysMB, s.heapReleasedMB)
	}
	b.Log(sb.String())
}

// rssMB reads VmRSS of pid (0 when gone).
func rssMB(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
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
	fields := map[string]*float64{"HeapInuse": &s.heapInuseMB, "HeapSys": &s.heapSysMB, "HeapReleased": &s.heapReleasedMB,
		"NextGC": &s.nextGCMB, "HeapAlloc": &s.objsMB}
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
