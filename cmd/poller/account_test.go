package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/redis/go-redis/v9"
)

// commitEvents gives account a lease, a snapshot, a cursor and n outbox
// entries, then releases the lease; it returns the account's store.
func commitEvents(t *testing.T, rdb redis.UniversalClient, account string, n int) *cursor.Store {
	t.Helper()
	s, err := cursor.New(rdb, account)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Acquire(t.Context(), "writer", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b := cursor.Batch{Snapshots: []cursor.Snapshot{{Kind: "call", ID: "7", Data: []byte("c")}}, Cursors: map[string]string{"calls": "1"}}
	for i := range n {
		b.Events = append(b.Events, event.Message{ID: account + "-" + string(rune('a'+i)), Subject: "callcenter." + account + ".call.created", Data: []byte("{}")})
	}
	if _, err := s.Commit(t.Context(), l, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	return s
}

// keysOf counts the keys under an account's prefix.
func keysOf(t *testing.T, rdb *redis.Client, s *cursor.Store) int {
	t.Helper()
	keys, err := rdb.Keys(t.Context(), strings.NewReplacer("{", "\\{", "}", "\\}").Replace(s.KeyPrefix())+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// poller account forget refuses an account still configured, one whose lease
// another holds (even forced) and one whose outbox holds events (unless forced),
// leaving its keys; otherwise it removes every key of the account and none of
// another whose name starts alike.
func TestAccountForget(t *testing.T) {
	rs := redistest.Start(t)
	rdb := rs.Client(t)
	dir := t.TempDir()
	vars := map[string]string{
		"CALLBUS_ACCOUNTS_DIR": dir, "CALLBUS_REDIS_URL": rs.URL, "CALLBUS_NATS_URL": "nats://127.0.0.1:1",
		"CALLBUS_LEASE_TTL_SECONDS": "3", "CALLBUS_INSTANCE_ID": "ops",
	}
	gone := commitEvents(t, rdb, "forget-gone", 3)
	kept := commitEvents(t, rdb, "forget-gone2", 2)
	goneKeys, keptKeys := keysOf(t, rdb, gone), keysOf(t, rdb, kept)
	forget := func(extra ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(t.Context(), append([]string{"account", "forget", "--account", "forget-gone"}, extra...), env(vars), &out, &errOut)
		return out.String(), err
	}
	unchanged := func(when string) {
		t.Helper()
		if n := keysOf(t, rdb, gone); n != goneKeys {
			t.Errorf("%s: %d keys of the account left, want all %d", when, n, goneKeys)
		}
		if n, err := rdb.Exists(t.Context(), gone.KeyPrefix()+"lease").Result(); err != nil || n != 0 {
			t.Errorf("%s: the command's lease is still held (%d, %v)", when, n, err)
		}
	}

	file := filepath.Join(dir, "forget-gone.json")
	if err := os.WriteFile(file, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := forget(); !errors.Is(err, service.ErrStillConfigured) || !strings.Contains(err.Error(), file) {
		t.Errorf("configured: %v, want ErrStillConfigured naming %s", err, file)
	}
	unchanged("configured")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if _, err := forget(); !errors.Is(err, service.ErrOutboxNotEmpty) || !strings.Contains(err.Error(), "3 events") {
		t.Errorf("outbox of 3: %v, want ErrOutboxNotEmpty with the count", err)
	}
	unchanged("outbox not empty")

	if _, err := gone.Acquire(t.Context(), "a-replica", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := forget("--force"); !errors.Is(err, cursor.ErrNotLeader) || !strings.Contains(err.Error(), "a-replica") {
		t.Errorf("leased to a replica: %v, want ErrNotLeader naming it", err)
	}
	if n := keysOf(t, rdb, gone); n != goneKeys+1 { // and the replica's lease
		t.Errorf("leased: %d keys left, want %d", n, goneKeys+1)
	}
	simtest.WaitFor(t, 10*time.Second, "the replica's lease to expire", func() bool {
		n, err := rdb.Exists(t.Context(), gone.KeyPrefix()+"lease").Result()
		return err == nil && n == 0
	})

	out, err := forget("--force")
	if err != nil {
		t.Fatal(err)
	}
	if want := "forgot account forget-gone: " + strconv.Itoa(goneKeys+1) + " keys removed"; !strings.Contains(out, want) {
		t.Errorf("output %q, want %q (its keys and the command's lease)", out, want)
	}
	if n := keysOf(t, rdb, gone); n != 0 {
		t.Errorf("%d keys of the forgotten account left", n)
	}
	if n := keysOf(t, rdb, kept); n != keptKeys {
		t.Errorf("the other account has %d keys, had %d", n, keptKeys)
	}

	// Drained (outbox empty, as the fleet leaves it): no --force needed.
	recs, err := kept.ReadOutbox(t.Context(), "", 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("outbox of the other account: %d entries, %v", len(recs), err)
	}
	if err := kept.TrimOutbox(t.Context(), recs[1].StreamID); err != nil {
		t.Fatal(err)
	}
	vars["CALLBUS_ACCOUNTS_DIR"] = t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"account", "forget", "--account", "forget-gone2"}, env(vars), &stdout, &stderr); err != nil {
		t.Fatalf("a drained account: %v", err)
	}
	if n := keysOf(t, rdb, kept); n != 0 {
		t.Errorf("%d keys of the drained account left", n)
	}
}
