package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/audit"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/natstest"
	"github.com/callbus/callbus/internal/redistest"
	"github.com/callbus/callbus/internal/simtest"
	"github.com/nats-io/nats.go/jetstream"
)

// role asks a poller's /readyz whether it leads ("" when it does not answer).
func role(addr string) string {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var body struct {
		Role string `json:"role"`
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil {
		return ""
	}
	return body.Role
}

// waitRole waits until the poller at addr reports want, and returns how long that took.
func waitRole(t *testing.T, addr, want string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for role(addr) != want {
		if time.Since(start) > limit {
			t.Fatalf("%s did not become %s within %s (it says %q)", addr, want, limit, role(addr))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestLeadership runs two pollers on one account: one polls, the other stands by;
// the standby takes over when the leader is killed; a leader paused with SIGSTOP
// past its lease finds, on SIGCONT, that it lost the lease and stands by without
// committing, and the stream stays consistent throughout.
func TestLeadership(t *testing.T) {
	if testing.Short() {
		t.Skip("process test in -short mode")
	}
	const ttl = 3 * time.Second // CALLBUS_LEASE_TTL_SECONDS in pollerEnv
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	w := startWorld(t, 100, 0)
	addrA, addrB, addrC := simtest.FreeAddr(t), simtest.FreeAddr(t), simtest.FreeAddr(t)
	// Debug level: every log line the poller can write goes through the key check
	// in startPoller's cleanup.
	a := startPoller(t, append(pollerEnv(w, ns.URL(), rs.URL, "replica-a", addrA), "CALLBUS_LOG_LEVEL=debug"))
	waitRole(t, addrA, "leader", 30*time.Second)
	b := startPoller(t, pollerEnv(w, ns.URL(), rs.URL, "replica-b", addrB))
	waitRole(t, addrB, "standby", 30*time.Second)
	if role(addrA) != "leader" {
		t.Fatalf("a second replica took the lease from the first")
	}

	a.kill(t)
	took := waitRole(t, addrB, "leader", 3*ttl)
	t.Logf("standby took over %s after the leader was killed (lease TTL %s)", took.Round(10*time.Millisecond), ttl)
	if took > ttl+ttl/3+time.Second {
		t.Errorf("takeover took %s, more than the lease TTL plus one retry (%s)", took, ttl+ttl/3)
	}

	c := startPoller(t, pollerEnv(w, ns.URL(), rs.URL, "replica-c", addrC))
	waitRole(t, addrC, "standby", 30*time.Second)
	b.signal(syscall.SIGSTOP)
	waitRole(t, addrC, "leader", 3*ttl)
	time.Sleep(ttl) // let the new leader commit while the old one is frozen
	b.signal(syscall.SIGCONT)
	waitRole(t, addrB, "standby", 3*ttl)
	if log := b.stderr.String(); !strings.Contains(log, "lease: lost") && !strings.Contains(log, "stepping down") {
		t.Errorf("the resumed leader did not report losing the lease:\n%s", log)
	} else {
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, "lease") {
				t.Logf("resumed leader: %s", l)
			}
		}
	}
	if role(addrC) != "leader" {
		t.Errorf("the new leader lost the lease to the resumed one")
	}

	w.Freeze()
	js, err := jetstream.New(ns.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	simtest.WaitFor(t, 30*time.Second, "the outbox to drain", func() bool {
		n, err := store.OutboxLen(t.Context())
		return err == nil && n == 0
	})
	msgs, err := audit.ReadStream(t.Context(), js, "CALLCENTER")
	if err != nil {
		t.Fatal(err)
	}
	r := audit.Check(msgs, "callcenter")
	for _, p := range r.Problems {
		t.Error(p)
	}
	if r.ByType["call.created"] == 0 {
		t.Errorf("nothing was polled: %v", r.ByType)
	}
	c.signal(syscall.SIGTERM)
	if err := <-c.wait(30 * time.Second); err != nil {
		t.Errorf("leader after SIGTERM: %v", err)
	}
}
