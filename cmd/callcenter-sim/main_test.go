package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

// noEnv is run's environment when the test sets none.
func noEnv(string) string { return "" }

// startRun runs the simulator with args until ctx ends, and returns the line it
// prints on startup and, to come, what run returns; the rest of its output is
// discarded.
func startRun(t *testing.T, ctx context.Context, args ...string) (string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, noEnv, pw)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("startup line: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return line, done
}

// waitRun waits for run to return after its context was cancelled.
func waitRun(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

// runError is a command line run refuses, and what its error mentions.
type runError struct {
	args []string
	want string
}

// runErrors checks that run refuses each command line, naming what is wrong.
func runErrors(t *testing.T, cases []runError) {
	t.Helper()
	for _, tc := range cases {
		err := run(context.Background(), tc.args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}

func TestRunServesAndFlushesTruth(t *testing.T) {
	truth := filepath.Join(t.TempDir(), "truth.ndjson")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startRun(t, ctx, "--addr", "127.0.0.1:0", "--api-key", "secret-admin-key", "--key", "ak=Agent",
		"--speed", "600", "--truth", truth, "--plan", "0", "--tick", "10ms")
	if strings.Contains(line, "secret-admin-key") {
		t.Fatalf("startup line leaks the key: %s", line)
	}
	base := regexp.MustCompile(`http://\S+`).FindString(line)
	if base == "" {
		t.Fatalf("no address in %q", line)
	}
	status := func(key string) int {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/users", nil)
		req.Header.Set("Accept", "application/json")
		if key != "" {
			req.Header.Set("X-Api-Auth", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(""); got != 401 {
		t.Errorf("without key: %d, want 401", got)
	}
	for _, k := range []string{"secret-admin-key", "ak"} {
		if got := status(k); got != 200 {
			t.Errorf("key %s: %d, want 200", k, got)
		}
	}
	// At 600× a real second is ten simulated minutes: wait (bounded) for the truth
	// log to show calls, which needs the shutdown flush.
	deadline := time.Now().Add(10 * time.Second)
	for status("secret-admin-key") == 200 && time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/calls", nil)
		req.Header.Set("X-Api-Auth", "ak")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `"participants"`) {
			break
		}
		time.Sleep(20 * time.Millisecond) // pacing between polls, not a wait for a condition
	}
	cancel()
	waitRun(t, done)
	b, err := os.ReadFile(truth)
	if err != nil || !strings.Contains(string(b), `"entity":"call","id":`) {
		t.Errorf("truth log (%v): %.200s", err, b)
	}
}

func TestRunFlagErrors(t *testing.T) {
	runErrors(t, []runError{
		{nil, "--api-key"},
		{[]string{"--api-key", "k", "--key", "nokey"}, "KEY=ROLE"},
		{[]string{"--api-key", "k", "--key", "x=Boss"}, "role"},
		{[]string{"--api-key", "k", "--order", "sideways"}, "--order"},
		{[]string{"--api-key", "k", "--plan", "150"}, "--plan"},
		{[]string{"--api-key", "k", "--start", "today"}, "--start"},
		{[]string{"--api-key", "k", "--retry-after", "maybe"}, "--retry-after"},
		{[]string{"--api-key", "k", "--faults", "mean"}, "--faults"},
		{[]string{"--api-key", "k", "--poison-rate", "2"}, "poison rate"},
		{[]string{"--api-key", "k", "--addr", "256.0.0.1:99999"}, "listen"},
	})
	if err := run(context.Background(), []string{"-h"}, noEnv, io.Discard); err != nil {
		t.Errorf("-h: %v", err)
	}
}

func TestRunKeyFromEnv(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve and stop at once: only the configuration is under test
	env := func(k string) string {
		if k == "CALLCENTER_SIM_API_KEY" {
			return "from-env"
		}
		return ""
	}
	if err := run(ctx, []string{"--addr", "127.0.0.1:0"}, env, io.Discard); err != nil {
		t.Errorf("key from env: %v", err)
	}
}

// --faults hostile turns every hazard on; a flag per fault overrides the profile.
func TestFaultsFlags(t *testing.T) {
	o, err := parseFlags([]string{"--api-key", "k", "--faults", "hostile", "--poison-rate", "0.5", "--big-call=false"},
		noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := sim.HostileFaults()
	want.PoisonRate, want.BigCall = 0.5, false
	if o.cfg.Hostile != want {
		t.Errorf("hostile %+v, want %+v", o.cfg.Hostile, want)
	}
	o, err = parseFlags([]string{"--api-key", "k", "--not-found-rate", "0.1"}, noEnv, io.Discard)
	if err != nil || o.cfg.Hostile != (sim.Hostile{NotFoundRate: 0.1}) {
		t.Errorf("a single fault: %+v %v", o.cfg.Hostile, err)
	}
}
