package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// `poller status` prints a running poller's status page for a terminal: its role,
// the account's leader, each resource's intervals, the budget and outbox.
func TestStatusCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("process test in -short mode")
	}
	b := startBed(t, redistest.Start, 100, usualWorld(0))
	addr := simtest.FreeAddr(t)
	startPoller(t, b.env("replica-s", addr))
	waitRole(t, addr, "leader", 30*time.Second)
	var out, errOut bytes.Buffer
	var text string
	deadline := time.Now().Add(30 * time.Second)
	for { // until events have been published
		out.Reset()
		if err := run(t.Context(), []string{"status", "--addr", addr}, env(nil), &out, &errOut); err != nil {
			t.Fatalf("poller status: %v\n%s", err, errOut.String())
		}
		text = out.String()
		if strings.Contains(text, "last events\n") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the poller's own cycles, not a synchronisation of ours
	}
	t.Logf("poller status:\n%s", text)
	for _, want := range []string{"role leader", "account acme", "leader replica-s/", "X-RateLimit-Remaining",
		"outbox", "user_statuses  5s", "last warnings and errors"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, procKey) {
		t.Error("the API key appears in poller status")
	}
	out.Reset()
	if err := run(t.Context(), []string{"status", "--addr", addr, "--json"}, env(nil), &out, &errOut); err != nil {
		t.Fatalf("poller status --json: %v", err)
	}
	var st service.Status
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || len(st.Accounts) != 1 || st.Accounts[0].Account != "acme" {
		t.Errorf("poller status --json: %v %+v\n%s", err, st, out.String())
	}
	free := simtest.FreeAddr(t)
	out.Reset()
	if err := run(t.Context(), []string{"status", "--addr", free, "--json"}, env(nil), &out, &errOut); !errors.As(err, new(jsonReported)) ||
		!strings.Contains(out.String(), `"code": "error"`) || !strings.Contains(out.String(), "no poller answers at") {
		t.Errorf("status --json of nothing listening: %v\n%s, want the error as JSON", err, out.String())
	}
	err := run(t.Context(), []string{"status", "--addr", free}, env(nil), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no poller answers at "+free) || !strings.Contains(err.Error(), "poller run") {
		t.Errorf("status of nothing listening: %v, want an error saying no poller answers there", err)
	}
}
