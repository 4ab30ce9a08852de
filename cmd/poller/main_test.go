package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/simtest"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigValidate(t *testing.T) {
	const key = "sk-live-do-not-print-4b1d"
	good := map[string]string{
		"CALLBUS_API_URL": "http://127.0.0.1:8080", "CALLBUS_API_KEY": key, "CALLBUS_ACCOUNT": "acme",
	}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"config", "validate"}, env(good), &out, &errOut); err != nil {
		t.Fatalf("valid configuration refused: %v\n%s", err, errOut.String())
	}
	bad := map[string]string{"CALLBUS_RATE_LIMIT_SHARE": "abc"}
	for k, v := range good {
		bad[k] = v
	}
	out.Reset()
	errOut.Reset()
	err := run(t.Context(), []string{"config", "validate"}, env(bad), &out, &errOut)
	var ec exitCode
	if !errors.As(err, &ec) || ec.code != 2 {
		t.Fatalf("want exit status 2, got %v", err)
	}
	if !strings.Contains(err.Error(), "CALLBUS_RATE_LIMIT_SHARE") {
		t.Fatalf("error does not name the variable: %v", err)
	}
	for _, s := range []string{err.Error(), out.String(), errOut.String()} {
		if strings.Contains(s, key) {
			t.Fatalf("API key leaked: %q", s)
		}
	}
}

func TestCommands(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"config", "docs"}, env(nil), &out, &out); err != nil || !strings.Contains(out.String(), "CALLBUS_API_KEY") {
		t.Fatalf("config docs: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run(t.Context(), []string{"config", "schema"}, env(nil), &out, &out); err != nil || !strings.Contains(out.String(), `"properties"`) {
		t.Fatalf("config schema: %v", err)
	}
	var ec exitCode
	if err := run(t.Context(), []string{"frobnicate"}, env(nil), &out, &out); !errors.As(err, &ec) || ec.code != 2 {
		t.Fatalf("unknown command: want exit 2, got %v", err)
	}
	if err := run(t.Context(), []string{"run"}, env(nil), &out, &out); !errors.As(err, &ec) || ec.code != 2 {
		t.Fatalf("run without configuration: want exit 2, got %v", err)
	}
}

// TestDemo runs the demo with nothing else running (Redis unreachable, so the
// in-memory one) until it has shown calls and status changes.
func TestDemo(t *testing.T) {
	out, errOut := runDemoUntilCalls(t, map[string]string{"CALLBUS_REDIS_URL": "redis://127.0.0.1:1/0"})
	if !strings.Contains(errOut, "in-memory Redis") {
		t.Fatalf("the demo should say it uses an in-memory Redis:\n%s", errOut)
	}
	checkDemoOutput(t, out, errOut)
}

// runDemoUntilCalls runs the demo until its feed has shown calls and status
// changes, interrupts it and returns its stdout and stderr.
func runDemoUntilCalls(t *testing.T, vars map[string]string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &simtest.Buffer{}
	var errOut simtest.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"demo", "--speed", "60"}, env(vars), out, &errOut) }()
	deadline := time.Now().Add(90 * time.Second)
	for !(strings.Contains(out.String(), "call.created") && strings.Contains(out.String(), "participant.status_changed")) {
		select {
		case err := <-done:
			t.Fatalf("demo stopped early: %v\n%s", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no calls in the demo feed:\n%s\n%s", out.String(), errOut.String())
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("demo: %v", err)
	}
	return out.String(), errOut.String()
}

// checkDemoOutput: the feed says its times are simulated and prints them in
// order; every log line is the logger's (time first), none a driver's own.
func checkDemoOutput(t *testing.T, out, errOut string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "simulator's clock") || !strings.HasPrefix(lines[1], "SIM TIME") {
		t.Fatalf("the feed does not open with its explanation:\n%s", out)
	}
	prev := ""
	for _, l := range lines[2:] {
		if at := l[:8]; at < prev && !(prev > "23" && at < "01") { // in order, midnight aside
			t.Errorf("feed times out of order: %s after %s", at, prev)
		} else {
			prev = at
		}
	}
	for l := range strings.Lines(errOut) {
		if _, err := time.Parse(time.TimeOnly, l[:min(8, len(l))]); err != nil {
			t.Errorf("a log line not from the logger: %q", l)
		}
		if strings.Contains(l, "\x1b[") || strings.Contains(l, "config=") {
			t.Errorf("a log line with colours or the demo's configuration: %q", l)
		}
	}
}
