package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
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
	bd := startBed(t, redistest.Start, 100, usualWorld(0))
	addrA, addrB, addrC := simtest.FreeAddr(t), simtest.FreeAddr(t), simtest.FreeAddr(t)
	js := bd.stream(t)
	// Debug level: every log line the poller can write goes through the key check
	// in startPoller's cleanup.
	a := startPoller(t, append(bd.env("replica-a", addrA), "CALLBUS_LOG_LEVEL=debug"))
	waitRole(t, addrA, "leader", 30*time.Second)
	b := startPoller(t, bd.env("replica-b", addrB))
	waitRole(t, addrB, "standby", 30*time.Second)
	if role(addrA) != "leader" {
		t.Fatalf("a second replica took the lease from the first")
	}

	a.kill(t)
	took := waitRole(t, addrB, "leader", 10*ttl)
	t.Logf("standby took over %s after the leader was killed (lease TTL %s)", took.Round(10*time.Millisecond), ttl)
	// Within the TTL: the standby wakes as the lease it was refused expires
	// (internal/poll's failover test checks the bound closely, over 20 kills). The
	// margin is for a loaded machine and for polling /readyz.
	if took > ttl+2*time.Second {
		t.Errorf("takeover took %s, far more than the lease TTL (%s)", took, ttl)
	}

	c := startPoller(t, bd.env("replica-c", addrC))
	waitRole(t, addrC, "standby", 30*time.Second)
	b.signal(syscall.SIGSTOP)
	waitRole(t, addrC, "leader", 10*ttl)
	streamGrows(t, js, "the new leader to publish while the old one is frozen")
	b.signal(syscall.SIGCONT)
	waitRole(t, addrB, "standby", 10*ttl)
	reportedLoss(t, b)
	if role(addrC) != "leader" {
		t.Errorf("the new leader lost the lease to the resumed one")
	}

	// The run must have done enough to audit (a loaded machine may be slow to):
	// every audited type in the stream before the world stops.
	streamHasEveryType(t, js)
	bd.world.Freeze()
	// Exactly once across the hand-overs: the stream against the world's truth.
	report(t, bd.auditSettled(t, 0))
	if err := c.terminate(30 * time.Second); err != nil {
		t.Errorf("leader after SIGTERM: %v", err)
	}
}

// reportedLoss checks that a resumed leader logged losing its lease.
func reportedLoss(t *testing.T, c *child) {
	t.Helper()
	log := c.stderr.String()
	if !strings.Contains(log, "lease: lost") && !strings.Contains(log, "stepping down") {
		t.Errorf("the resumed leader did not report losing the lease:\n%s", log)
		return
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "lease") {
			t.Logf("resumed leader: %s", l)
		}
	}
}

// lastSeq is the last sequence of the CALLCENTER stream, 0 while the stream
// cannot say (NATS restarting, or the stream not there yet).
func lastSeq(t *testing.T, js jetstream.JetStream) uint64 {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, "CALLCENTER")
	if err != nil {
		return 0
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0
	}
	return info.State.LastSeq
}

// streamGrows waits until the stream answers and then grows past what it held at
// that moment: a leader has polled, committed and relayed something new.
// streamHasEveryType waits until the stream holds an event of every type report
// requires.
func streamHasEveryType(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	simtest.WaitFor(t, 120*time.Second, "an event of every audited type", func() bool {
		s, err := js.Stream(t.Context(), "CALLCENTER")
		if err != nil {
			return false
		}
		info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(">"))
		if err != nil {
			return false
		}
		for _, typ := range auditedTypes {
			if info.State.Subjects[events.Subject(events.DefaultPrefix, "acme", typeOf(typ))] == 0 {
				return false
			}
		}
		return true
	})
}

func streamGrows(t *testing.T, js jetstream.JetStream, what string) {
	t.Helper()
	var from uint64
	simtest.WaitFor(t, 60*time.Second, "the stream to answer before "+what, func() bool {
		from = lastSeq(t, js)
		return from > 0
	})
	simtest.WaitFor(t, 60*time.Second, what, func() bool { return lastSeq(t, js) > from })
}
