package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// --accounts serves each account under /a/NAME/api/v1 with its own key, and
// --truth-dir gets a truth log for each account served.
func TestRunServesManyAccounts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "truth")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	line, done := startRun(t, ctx, "--addr", "127.0.0.1:0", "--api-key", "k", "--accounts", "3", "--truth-dir", dir,
		"--speed", "600", "--plan", "0", "--tick", "10ms")
	root := regexp.MustCompile(`http://[0-9.:]+`).FindString(line)
	if root == "" || !strings.Contains(line, "3 accounts") {
		t.Fatalf("startup line %q", line)
	}
	get := func(account, key, what string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, "GET", root+"/a/"+account+"/api/v1/"+what, nil)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("X-Api-Auth", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status := func(account, key string) int { code, _ := get(account, key, "users"); return code }
	for _, tc := range []struct {
		account, key string
		want         int
	}{{"acct002", "k-acct002", 200}, {"acct002", "k", 401}, {"acct003", "k-acct002", 401}, {"acct004", "k-acct004", 404}} {
		if got := status(tc.account, tc.key); got != tc.want {
			t.Errorf("%s with %s: %d, want %d", tc.account, tc.key, got, tc.want)
		}
	}
	// At 600× a real second is ten simulated minutes: wait (bounded) for calls.
	deadline := time.Now().Add(10 * time.Second)
	for _, b := get("acct002", "k-acct002", "calls"); !strings.Contains(b, `"participants"`) && time.Now().Before(deadline); _, b = get("acct002", "k-acct002", "calls") {
		time.Sleep(20 * time.Millisecond) // pacing between polls, not a wait for a condition
	}
	cancel()
	waitRun(t, done)
	if b, err := os.ReadFile(filepath.Join(dir, "acct002.ndjson")); err != nil || !strings.Contains(string(b), `"entity":"call"`) {
		t.Errorf("acct002 truth log (%v): %.200s", err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "acct001.ndjson")); !os.IsNotExist(err) {
		t.Errorf("acct001 was never asked for, yet its truth log: %v", err)
	}
}

func TestRunAccountsFlagErrors(t *testing.T) {
	runErrors(t, []runError{
		{[]string{"--api-key", "k", "--accounts", "0"}, "--accounts"},
		{[]string{"--api-key", "k", "--accounts", "a.b,c"}, `"a.b"`},
		{[]string{"--api-key", "k", "--accounts", "2", "--truth", "x"}, "--truth-dir"},
		{[]string{"--api-key", "k", "--truth-dir", "x"}, "--accounts"},
	})
}
