package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/simtest"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigValidate(t *testing.T) {
	const key = "sk-live-do-not-print-4b1d"
	good := map[string]string{
		"CALLBUS_API_URL": "http://127.0.0.1:8080", "CALLBUS_API_KEY": key, "CALLBUS_ACCOUNT": "acme",
	}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"config", "validate"}, env(nil), &out, &errOut); err != nil || !strings.Contains(out.String(), "declaration valid") {
		t.Fatalf("the shipped declaration alone: %v %s", err, out.String())
	}
	out.Reset()
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
	if !strings.Contains(err.Error(), "rate_limit_share") {
		t.Fatalf("error does not name the key: %v", err)
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
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &simtest.Buffer{}
	var errOut simtest.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--speed", "60"}, env(map[string]string{"CALLBUS_REDIS_URL": "redis://127.0.0.1:1/0"}), out, &errOut)
	}()
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
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("demo: %v", err)
	}
	if !strings.Contains(errOut.String(), "in-memory Redis") {
		t.Fatalf("the demo should say it uses an in-memory Redis:\n%s", errOut.String())
	}
}
