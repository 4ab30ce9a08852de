package service

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// startFleet runs a one-member fleet of src's accounts (process settings on rs
// and ns) with its HTTP server.
func startFleet(t *testing.T, rs *redistest.Server, ns *natstest.Server, src AccountSource) *served {
	t.Helper()
	proc := testSettings(&simtest.World{URL: "http://127.0.0.1:1"}, ns.URL(), rs.URL, "fleet-1")
	proc.Account, proc.HTTPAddr, proc.ShutdownTimeout = "", simtest.FreeAddr(t), time.Second
	r := &served{running: start(t, nil, proc, zerolog.New(io.Discard), WithAccounts(src)), s: proc}
	t.Cleanup(func() { r.stop(t) })
	return r
}

// accountStatus is the account's part of r's /status, false when it is not there.
func accountStatus(t *testing.T, r *served, name string) (AccountStatus, bool) {
	t.Helper()
	var st Status
	if err := decodeStatus(r.get(t, "/status?format=json", ""), &st); err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Accounts {
		if a.Account == name {
			return a, true
		}
	}
	return AccountStatus{}, false
}

// streamIDs are the event ids (Nats-Msg-Id) of account's messages in the stream.
func streamIDs(t *testing.T, ns *natstest.Server, account string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for _, m := range readStream(t, ns) {
		if strings.HasPrefix(m.Subject, "callcenter."+account+".") {
			ids[m.Header.Get("Nats-Msg-Id")] = true
		}
	}
	return ids
}

// outboxIDs are the event ids waiting in the account's outbox.
func outboxIDs(t *testing.T, store *cursor.Store) []string {
	t.Helper()
	recs, err := store.ReadOutbox(t.Context(), "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return ids
}

// An account removed from the fleet while NATS is down is drained, not
// stranded: its owner keeps publishing its outbox after polling stopped
// (/status shows it draining with the events left, /metrics its depth and
// callbus_fleet_accounts_draining), every committed event reaches the stream
// once NATS is back, and the account then leaves /status. poller account
// forget's backend then removes every key of it and none of the other
// account, which it refuses to forget while the fleet leads it.
func TestFleetDrainsRemovedAccount(t *testing.T) {
	rs := redistest.StartPrivate(t)
	ns := natstest.Start(t)
	rdb := rs.Client(t)
	src := &staticAccounts{s: map[string]config.Settings{}}
	worlds := map[string]*simtest.World{}
	for _, name := range []string{"acme", "gone"} {
		worlds[name] = newWorld(t, nil)
		worlds[name].Run(t, 20)
		s := testSettings(worlds[name], ns.URL(), rs.URL, "fleet-1")
		s.Account = name
		src.s[name] = s
	}
	r := startFleet(t, rs, ns, src)
	checkFleetStatus(t, r, 2)
	checkFleetStream(t, ns, "gone")
	gone, err := cursor.New(rdb, "gone")
	if err != nil {
		t.Fatal(err)
	}

	ns.Shutdown()
	ns.WaitForShutdown()
	simtest.WaitFor(t, 60*time.Second, "events of gone committed while NATS is down", func() bool {
		worlds["gone"].Sim.Advance(10 * time.Second)
		n, err := gone.OutboxLen(t.Context())
		return err == nil && n >= 5
	})
	src.mu.Lock()
	delete(src.s, "gone")
	src.mu.Unlock()

	var st AccountStatus
	simtest.WaitFor(t, 60*time.Second, "gone draining on /status", func() bool {
		var ok bool
		st, ok = accountStatus(t, r, "gone")
		return ok && st.Draining && st.Role == "leader" && st.Outbox.Depth > 0
	})
	committed := outboxIDs(t, gone) // polling has stopped: nothing more is committed
	metrics := scrape(t, r.s.HTTPAddr)
	for _, want := range []string{"callbus_fleet_accounts_draining 1", `callbus_outbox_depth{account="gone"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s while gone drains", want)
		}
	}
	var text strings.Builder
	if err := (Status{Accounts: []AccountStatus{st}}).WriteText(&text); err != nil || !strings.Contains(text.String(), "draining") {
		t.Errorf("poller status text lacks the draining line (%v):\n%s", err, text.String())
	}
	t.Logf("gone removed with %d events in its outbox (status: %d)", len(committed), st.Outbox.Depth)

	ns.Restart(t)
	simtest.WaitFor(t, 60*time.Second, "gone drained and off /status", func() bool {
		_, shown := accountStatus(t, r, "gone")
		n, err := gone.OutboxLen(t.Context())
		return !shown && err == nil && n == 0
	})
	published := streamIDs(t, ns, "gone")
	for _, id := range committed {
		if !published[id] {
			t.Errorf("event %s, committed before gone was removed, is not in the stream", id)
		}
	}
	if metrics := scrape(t, r.s.HTTPAddr); !strings.Contains(metrics, "callbus_fleet_accounts_draining 0") {
		t.Errorf("/metrics: callbus_fleet_accounts_draining is not 0 after the drain")
	}

	acmeKeys := countKeys(t, rdb, "callbus:{acme}:")
	if _, err := ForgetAccount(t.Context(), r.s, "acme", true); !errors.Is(err, cursor.ErrNotLeader) {
		t.Errorf("forget acme while the fleet leads it: %v, want ErrNotLeader", err)
	}
	n, err := ForgetAccount(t.Context(), r.s, "gone", false)
	if err != nil || n == 0 {
		t.Fatalf("forget gone: %d keys, %v", n, err)
	}
	if left := countKeys(t, rdb, "callbus:{gone}:"); left != 0 {
		t.Errorf("%d keys of gone left after forget", left)
	}
	if after := countKeys(t, rdb, "callbus:{acme}:"); after < acmeKeys || acmeKeys == 0 {
		t.Errorf("acme has %d keys after gone was forgotten, had %d", after, acmeKeys)
	}
}

// countKeys counts the keys under prefix (no glob characters in it but braces).
func countKeys(t *testing.T, rdb *redis.Client, prefix string) int {
	t.Helper()
	keys, err := rdb.Keys(t.Context(), strings.NewReplacer("{", "\\{", "}", "\\}").Replace(prefix)+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// A process that starts finds the outbox of an account no longer configured
// (stranded before it started: removed while NATS was away, the process then
// restarted) by scanning Redis, and publishes it.
func TestFleetDrainsStrandedOutboxAtStart(t *testing.T) {
	rs := redistest.StartPrivate(t)
	ns := natstest.Start(t)
	rdb := rs.Client(t)
	old, err := cursor.New(rdb, "old")
	if err != nil {
		t.Fatal(err)
	}
	l, err := old.Acquire(t.Context(), "a-process-gone", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var b cursor.Batch
	for _, id := range []string{"old-1", "old-2", "old-3"} {
		b.Events = append(b.Events, event.Message{ID: id, Subject: "callcenter.old.call.created", Type: events.Type("call.created"),
			Time: time.Now(), Data: []byte(`{"id":"` + id + `"}`)})
	}
	if _, err := old.Commit(t.Context(), l, b); err != nil {
		t.Fatal(err)
	}
	if err := old.Release(t.Context(), l); err != nil {
		t.Fatal(err)
	}

	src := &staticAccounts{s: map[string]config.Settings{}}
	s := testSettings(newWorld(t, nil), ns.URL(), rs.URL, "fleet-1")
	src.s["acme"] = s
	r := startFleet(t, rs, ns, src)
	simtest.WaitFor(t, 60*time.Second, "old's outbox published", func() bool {
		n, err := old.OutboxLen(t.Context())
		return err == nil && n == 0
	})
	published := streamIDs(t, ns, "old")
	for _, id := range []string{"old-1", "old-2", "old-3"} {
		if !published[id] {
			t.Errorf("%s of the stranded outbox is not in the stream", id)
		}
	}
	simtest.WaitFor(t, 30*time.Second, "old off /status", func() bool {
		_, shown := accountStatus(t, r, "old")
		return !shown
	})
}
