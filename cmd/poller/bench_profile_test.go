package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"
)

// Profiles of the poller child during a benchmark, through its /debug/pprof
// (CALLBUS_DEBUG_PPROF=true): CALLBUS_BENCH_CPUPROFILE=<file> saves a CPU profile,
// CALLBUS_BENCH_TRACE=<file> an execution trace (where it waits: API responses,
// Redis, NATS acks), each of the first CALLBUS_BENCH_PROFILE (a Go duration, 30s)
// of the run; CALLBUS_BENCH_HEAPPROFILE=<file> a heap profile at the poller's
// peak memory (see sampleMemory).

// profileEnv is what the poller needs to serve the profiles asked for.
func profileEnv() []string {
	if os.Getenv("CALLBUS_BENCH_CPUPROFILE") == "" && os.Getenv("CALLBUS_BENCH_TRACE") == "" && os.Getenv("CALLBUS_BENCH_HEAPPROFILE") == "" {
		return nil
	}
	return []string{"CALLBUS_DEBUG_PPROF=true"}
}

// saveProfiles starts fetching the profiles asked for from the poller at addr, in
// the background; wait returns once they are written and reports failures on b.
func saveProfiles(b testing.TB, addr string) (wait func()) {
	secs := int(envDuration("CALLBUS_BENCH_PROFILE", 30*time.Second).Seconds())
	var done []chan error
	for _, p := range []struct{ env, path string }{
		{"CALLBUS_BENCH_CPUPROFILE", "profile"},
		{"CALLBUS_BENCH_TRACE", "trace"},
	} {
		file := os.Getenv(p.env)
		if file == "" {
			continue
		}
		ch := make(chan error, 1)
		done = append(done, ch)
		url := fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", addr, p.path, secs)
		go func() { ch <- fetchProfile(b.Context(), url, file) }()
	}
	return func() {
		for _, ch := range done {
			if err := <-ch; err != nil {
				b.Errorf("profile: %v", err)
			}
		}
	}
}

// fetchProfile GETs url, retrying while the poller is not listening yet, and
// writes the body to path.
func fetchProfile(ctx context.Context, url, path string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if time.Now().After(deadline) {
				return err
			}
			time.Sleep(100 * time.Millisecond) // the poller is starting; poll until it listens
			continue
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		return os.WriteFile(path, body, 0o644)
	}
}
