package cursor

import (
	"errors"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
)

// The outbox's last id survives trimming (it is what a rollback check compares
// with the stream), and is "0-0" without an outbox.
func TestOutboxLastID(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	if id, err := e.store.OutboxLastID(ctx); err != nil || id != "0-0" {
		t.Fatalf("OutboxLastID without an outbox = %q %v, want 0-0", id, err)
	}
	l := mustAcquire(t, e.store, "a", time.Minute)
	ids := commitEvents(t, e.store, l, 0, 3)
	if err := e.store.TrimOutbox(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	if id, err := e.store.OutboxLastID(ctx); err != nil || id != ids[2] {
		t.Fatalf("OutboxLastID after trimming all = %q %v, want %s", id, err, ids[2])
	}
}

func TestCompareStreamIDs(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1-0", "1-0", 0},
		{"1-1", "1-0", 1},
		{"2-0", "10-0", -1},
		{"", "0-0", 0},
		{"", "5-1", -1},
		{"1700000000000-3", "1699999999999-9", 1},
	}
	for _, tt := range tests {
		if got, err := CompareStreamIDs(tt.a, tt.b); err != nil || got != tt.want {
			t.Errorf("CompareStreamIDs(%q, %q) = %d %v, want %d", tt.a, tt.b, got, err, tt.want)
		}
	}
	if _, err := CompareStreamIDs("7", "1-0"); !errors.Is(err, ErrInvalid) {
		t.Errorf("a bare ms: %v, want ErrInvalid", err)
	}
	if tm, err := StreamIDTime("1700000000000-3"); err != nil || !tm.Equal(time.UnixMilli(1700000000000)) {
		t.Errorf("StreamIDTime = %v %v", tm, err)
	}
}

// A commit that says which outbox id its caller committed last is refused, with
// nothing written, when the outbox went back behind it (trimmed entries do not
// count: the last generated id survives trims); the check costs no round trip.
func TestCommitRefusedWhenOutboxWentBack(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	ids := commitEvents(t, e.store, l, 0, 3)
	if err := e.store.TrimOutbox(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	next := Batch{OutboxSeen: ids[2], Cursors: map[string]string{"c": "1"},
		Events: []event.Message{{ID: "e3", Subject: "s", Data: []byte("{}")}}}
	if _, err := e.store.Commit(ctx, l, next); err != nil {
		t.Fatalf("commit after its own last id: %v", err)
	}
	// Redis loses the outbox (and a cursor, and outbox:meta, written by the same
	// scripts) while the lease survives.
	if err := e.rdb.Del(ctx, e.store.KeyPrefix()+"outbox", e.store.KeyPrefix()+"outbox:meta", e.store.KeyPrefix()+"cursor").Err(); err != nil {
		t.Fatal(err)
	}
	next.OutboxSeen, next.Cursors = ids[2], map[string]string{"c": "2"}
	if _, err := e.store.Commit(ctx, l, next); !errors.Is(err, ErrRolledBack) {
		t.Fatalf("commit on an outbox gone back: %v, want ErrRolledBack", err)
	}
	if n, err := e.store.OutboxLen(ctx); err != nil || n != 0 {
		t.Fatalf("refused commit appended %d entries (%v)", n, err)
	}
	if _, ok, err := e.store.GetCursor(ctx, "c"); ok || err != nil {
		t.Fatalf("refused commit wrote a cursor (%v)", err)
	}
	next.OutboxSeen = ""
	if _, err := e.store.Commit(ctx, l, next); err != nil {
		t.Fatalf("commit without the check: %v", err)
	}
	next.OutboxSeen = "7"
	if _, err := e.store.Commit(ctx, l, next); !errors.Is(err, ErrInvalid) {
		t.Fatalf("malformed OutboxSeen: %v, want ErrInvalid", err)
	}
}
