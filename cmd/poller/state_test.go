package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// stateOf runs `poller state --json` with vars and decodes it.
func stateOf(t *testing.T, vars map[string]string, args ...string) []service.AccountState {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), append([]string{"state", "--json"}, args...), env(vars), &out, &errOut); err != nil {
		t.Fatalf("poller state: %v\n%s", err, errOut.String())
	}
	var states []service.AccountState
	if err := json.Unmarshal(out.Bytes(), &states); err != nil {
		t.Fatalf("poller state --json: %v\n%s", err, out.String())
	}
	return states
}

// poller state prints what the store holds: the lease (holder, token, a term
// start), the cursors and high water, the outbox's length and last id, the
// snapshot counts, the stream's newest Callbus-Outbox-Id; with no --account it
// lists the configured account and the one only Redis holds.
func TestStateMatchesStore(t *testing.T) {
	rs := redistest.Start(t)
	rdb := rs.Client(t)
	ns := natstest.Start(t)
	dir := t.TempDir()
	writeAccount(t, dir, "state-a", "http://127.0.0.1:1", "key-a\n")
	vars := map[string]string{"CALLBUS_ACCOUNTS_DIR": dir, "CALLBUS_REDIS_URL": rs.URL, "CALLBUS_NATS_URL": ns.URL(),
		"CALLBUS_LEASE_TTL_SECONDS": "3", "CALLBUS_INSTANCE_ID": "ops"}
	store := commitEvents(t, rdb, "state-a", 3)
	commitEvents(t, rdb, "state-gone", 1)
	lease, err := store.Acquire(t.Context(), "member-x/1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(ns.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "CALLCENTER", Subjects: []string{"callcenter.>"}}); err != nil {
		t.Fatal(err)
	}
	last, err := store.OutboxLastID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg("callcenter.state-a.call.created")
	m.Header.Set(publish.HeaderOutboxID, last)
	if _, err := js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}

	states := stateOf(t, vars)
	if len(states) != 2 || states[0].Account != "state-a" || states[1].Account != "state-gone" {
		t.Fatalf("accounts %+v, want state-a (configured) and state-gone (in Redis)", states)
	}
	st := states[0]
	if st.Lease == nil || st.Lease.Holder != lease.Holder || st.Lease.Token != lease.Token || st.Lease.TermStart.IsZero() ||
		st.Lease.TTLLeftMS <= 0 || st.Lease.TTLLeftMS > 60000 {
		t.Errorf("lease %+v, want %+v with a term start and time left", st.Lease, lease)
	}
	cur, err := store.Cursors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(st.Cursors, cur) {
		t.Errorf("cursors %v, store holds %v", st.Cursors, cur)
	}
	c, err := store.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(st.Snapshots, c.Snapshots) || st.Outbox.Length != 3 || st.Outbox.LastID != last || st.Outbox.OldestAgeSec < 0 {
		t.Errorf("snapshots %v outbox %+v, store holds %v, 3 entries, last %s", st.Snapshots, st.Outbox, c.Snapshots, last)
	}
	if st.Stream.NewestOutboxID != last || st.Stream.Error != "" {
		t.Errorf("stream %+v, want newest %s", st.Stream, last)
	}
	if st.RedisBytes <= 0 || st.RedisBytesMethod != "memory_usage" {
		t.Errorf("redis bytes %d (%s)", st.RedisBytes, st.RedisBytesMethod)
	}
	if states[1].Lease != nil || states[1].Outbox.Length != 1 || states[1].Stream.NewestOutboxID != "" {
		t.Errorf("state-gone: %+v", states[1])
	}

	// A backfill checkpoint shows, but not its report URL (a download link).
	cursorSet(t, store, lease, "backfill.progress", `{"since":"2026-01-01T00:00:00Z","path":"https://reports.example/r.zip?sig=abc123","pass":1}`)
	st = stateOf(t, vars, "--account", "state-a")[0]
	if !strings.Contains(string(st.Backfill.Checkpoint), `"pass"`) || strings.Contains(string(st.Backfill.Checkpoint)+st.Cursors["backfill.progress"], "sig=abc123") {
		t.Errorf("checkpoint %s, cursor %s: want it shown without the report URL", st.Backfill.Checkpoint, st.Cursors["backfill.progress"])
	}

	// The text form says the same; with NATS away the stream part says why.
	vars["CALLBUS_NATS_URL"] = "nats://127.0.0.1:1"
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"state", "--account", "state-a"}, env(vars), &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	for _, want := range []string{"account state-a", "member-x/1, token", "3 entries", "last id " + last, "stream CALLCENTER", "unknown: nats at"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, out.String())
		}
	}

	// A rewind while member-x leads is refused and audited; with the lease free
	// it is done under a lease of its own, audited, and state shows both.
	cursorSet(t, store, lease, "calls.high_water", "2026-01-02T10:00:00Z")
	err = run(t.Context(), []string{"state", "rewind", "--account", "state-a", "--to", "2026-01-02T08:00:00Z"}, env(vars), &out, &errOut)
	if !errors.Is(err, service.ErrLeaderRunning) || !strings.Contains(err.Error(), "member-x/1") {
		t.Errorf("rewind under another's lease: %v, want ErrLeaderRunning naming the holder", err)
	}
	if err := store.Release(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	err = run(t.Context(), []string{"state", "rewind", "--account", "state-a", "--to", "2026-01-02T12:00:00Z"}, env(vars), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "only goes back") {
		t.Errorf("rewind forward: %v, want refused", err)
	}
	out.Reset()
	if err := run(t.Context(), []string{"state", "rewind", "--account", "state-a", "--to", "2026-01-02T08:00:00Z"}, env(vars), &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	if hw, _, _ := store.GetCursor(t.Context(), "calls.high_water"); hw != "2026-01-02T08:00:00Z" {
		t.Errorf("high water after the rewind: %q", hw)
	}
	if !strings.Contains(errOut.String(), `"audit":"operator"`) {
		t.Errorf("no audit line in the log:\n%s", errOut.String())
	}
	audit := stateOf(t, vars, "--account", "state-a")[0].Audit
	if len(audit) != 3 || !strings.HasPrefix(audit[0].Result, "done") || !strings.HasPrefix(audit[0].Holder, "rewind/ops/") ||
		!strings.HasPrefix(audit[2].Result, "refused: led by member-x/1") || audit[0].By == "" {
		t.Errorf("audit %+v, want done (newest), refused forward, refused while led", audit)
	}
}

// cursorSet commits one cursor under l.
func cursorSet(t *testing.T, s *cursor.Store, l cursor.Lease, name, value string) {
	t.Helper()
	if _, err := s.Commit(t.Context(), l, cursor.Batch{Cursors: map[string]string{name: value}}); err != nil {
		t.Fatal(err)
	}
}
