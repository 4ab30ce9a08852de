package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/simtest"
)

// `poller setup` serves the page and its scripts on the address it logs, and
// stops cleanly when its context ends.
func TestSetupCommandServesThePage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs simtest.Buffer
	errc := make(chan error, 1)
	args := []string{"--addr", "127.0.0.1:0", "--config", filepath.Join(t.TempDir(), "values.json")}
	go func() { errc <- runSetup(ctx, args, func(string) string { return "" }, &logs) }()

	pageURL := regexp.MustCompile(`http://127\.0\.0\.1:\d+/custom_configs`)
	deadline := time.Now().Add(10 * time.Second)
	for !pageURL.MatchString(logs.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no page URL logged: %s", logs.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the log with a deadline
	}
	base := pageURL.FindString(logs.String())
	for path, want := range map[string]string{"": `id="g-required"`, "/fields.js": "window.utils", "/setup.js": "checkURL"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, body lacks %q", base+path, resp.StatusCode, want)
		}
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("setup ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("setup did not stop with its context")
	}
}
